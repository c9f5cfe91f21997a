import ListTapeModel
import ListTapeSamples
import Testing

@testable import ListTapeInvestigate
@testable import ListTapeStore

/// Find's full scan against the value of the expression after every event.
@Suite struct FindLawTests {
  @Test(arguments: [31, 32, 33] as [UInt64])
  func reportsExactlyTheEventsWhereTheValueChanges(seed: UInt64) throws {
    let session = try LawSession(seed: seed)
    var rng = SplitMix64(seed: seed)
    let ids = session.itemIDs()
    var texts = session.expressions(6, &rng)
    texts += ["count(items)", "count(visible)", "count(selected)", "count(sections)"]
    if let id = ids.last {
      texts += [#"parent("\#(id)")"#, #"row("\#(id)")"#, #"level("\#(id)")"#]
    }
    for text in texts {
      let query = try Query(text)
      let values = session.states.map { query.evaluate($0) }
      var expected: [(Int, QueryValue, QueryValue)] = []
      for n in 1..<values.count where values[n] != values[n - 1] {
        expected.append((n, values[n - 1], values[n]))
      }
      var got: [(Int, QueryValue, QueryValue)] = []
      var eventsSeen: [Event] = []
      let (initial, count) = try Find.changes(session.timeline, query: query) { change, event in
        got.append((change.event, change.from, change.to))
        eventsSeen.append(event)
      }
      let what = "seed \(seed): \(text)"
      #expect(initial == values[0], "\(what)")
      #expect(count == expected.count, "\(what)")
      #expect(got.map(\.0) == expected.map(\.0), "\(what)")
      #expect(got.map(\.1) == expected.map(\.1), "\(what)")
      #expect(got.map(\.2) == expected.map(\.2), "\(what)")
      #expect(eventsSeen == expected.map { session.events[$0.0 - 1] }, "\(what)")
    }
  }
}
