import ListTapeModel
import ListTapeSamples
import Testing

@testable import ListTapeInvestigate
@testable import ListTapeStore

/// Laws of shrink on seeded random sessions and random predicates that hold at the end.
@Suite struct ShrinkLawTests {
  @Test(arguments: [51, 52] as [UInt64])
  func resultsAreOneMinimalSubsequences(seed: UInt64) throws {
    let session = try LawSession(seed: seed, events: 250, maxItems: 80)
    let last = try #require(session.states.last)
    var rng = SplitMix64(seed: seed)
    var tried = 0
    for text in session.expressions(30, &rng) {
      let query = try Query(text)
      guard query.holds(in: last), tried < 4 else { continue }
      tried += 1
      let result = try #require(try Shrink.run(session.timeline, where: query))
      let what = "seed \(seed): \(text)"
      // In order, from the log, satisfying, and no single event can go.
      ShrinkTests.expectMinimal(result, of: session.events, { query.holds(in: $0) }, what)
      #expect(result.original == session.events.count)
      #expect(result.events.count <= session.events.count)
      // Shrinking the result again keeps all of it.
      let (again, _) = try record(result.events, "shrunk-\(seed)-\(tried)")
      let second = try #require(try Shrink.run(again, where: query))
      #expect(second.events == result.events, "\(what): not a fixed point")
    }
    #expect(tried >= 2, "too few predicates held at the end")
  }

  /// A predicate the empty list satisfies shrinks to nothing; one the log's end does not
  /// satisfy gives no result.
  @Test func trivialAndUnsatisfiablePredicates() throws {
    let session = try LawSession(seed: 53, events: 200)
    let empty = try #require(
      try Shrink.run(session.timeline, where: try Query("count(items) >= 0")))
    #expect(empty.events.isEmpty && empty.kept.isEmpty)
    #expect(try Shrink.run(session.timeline, where: try Query("count(sections) < 0")) == nil)
  }
}
