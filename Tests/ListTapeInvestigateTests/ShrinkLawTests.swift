import ListTapeModel
import ListTapeRead
import ListTapeSamples
import Testing

@testable import ListTapeInvestigate
@testable import ListTapeStore

/// Laws of shrink on seeded random sessions and random predicates that hold at the end.
@Suite struct ShrinkLawTests {
  @Test(arguments: [51, 52] as [UInt64])
  func resultsAreOneMinimalSubsequences(seed: UInt64) throws {
    let session = try LawSession(seed: seed, events: 250, maxItems: 80)
    let held = try session.queriesHoldingAtTheEnd(4, of: 30, seed: seed)
    for (tried, (text, query)) in zip(1..., held) {
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
    #expect(held.count >= 2, "too few predicates held at the end")
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

  /// The states a search saves between a log's checkpoints hold their budget at most (a
  /// 1M-event session's search held 3.3 GB of them), and the prefixes it gives are the
  /// log's states whatever the budget.
  @Test func savedPrefixStatesStayWithinTheirBudget() throws {
    var events: [Event] = []
    SampleSession.generate(events: 20_000, seed: 61, maxItems: 2_000) { events.append($0) }
    let (timeline, _) = try record(events, "prefixes", checkpointEvery: 50_000)
    let end = try timeline.seek(to: timeline.eventCount)
    let one = end.state.heldBytes + end.decoder.heldBytes
    for budget in [0, one / 2, 3 * one] {
      var prefixes = LogPrefixes(timeline, savedBytes: budget)
      for n in [19_990, 19_000, 17_000, 13_000, 5_000, 2_500] {
        let s = try prefixes.state(at: n)
        #expect(s.stateHash == (try timeline.state(at: n)).stateHash, "budget \(budget), \(n)")
        let held = prefixes.saved.reduce(0) { $0 + $1.state.heldBytes + $1.decoder.heldBytes }
        #expect(held <= budget, "budget \(budget), \(n)")
      }
      // Room for three states saves some (the budget is not all-or-nothing).
      #expect(budget < one || !prefixes.saved.isEmpty)
    }
  }

  /// A search that may save no state along its passes finds what one that may save many
  /// finds.
  @Test func aSearchWithoutRoomForStatesFindsTheSame() throws {
    let session = try LawSession(seed: 54, events: 400, maxItems: 100)
    let held = try session.queriesHoldingAtTheEnd(3, of: 40, seed: 54)
    for (text, query) in held {
      let roomy = try #require(try Shrink.run(session.timeline, where: query))
      let tight = try #require(
        try Shrink.run(
          session.timeline, relevance: query.relevance,
          predicate: { state, _ in query.holds(in: state) }, savedBytes: 0))
      #expect(tight.events == roomy.events, "\(text)")
      #expect(tight.kept == roomy.kept, "\(text)")
    }
    #expect(held.count >= 2, "too few predicates held at the end")
  }
}
