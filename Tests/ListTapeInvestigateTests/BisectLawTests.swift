import ListTapeModel
import ListTapeSamples
import Testing

@testable import ListTapeInvestigate
@testable import ListTapeStore

/// Bisect against a linear scan of the same states, on seeded random sessions.
@Suite struct BisectLawTests {
  /// The first n at which `holds` is true, scanning every state; and whether it stays true
  /// from there to the end (the predicate is monotonic on this session).
  static func linear(_ states: [ListState], _ holds: (ListState) -> Bool) -> (Int?, Bool) {
    guard let first = states.indices.first(where: { holds(states[$0]) }) else {
      return (nil, true)
    }
    return (first, states[first...].allSatisfy(holds))
  }

  /// A threshold on the event number is monotonic by construction: bisect finds it exactly,
  /// with or without the final scan, including 0 (bad from the start) and "never".
  @Test(arguments: [21, 22] as [UInt64])
  func findsEveryThresholdExactly(seed: UInt64) throws {
    let session = try LawSession(seed: seed)
    let total = session.events.count
    var rng = SplitMix64(seed: seed)
    let thresholds = [0, 1, total, total + 1] + (0..<8).map { _ in 1 + rng.below(total) }
    for k in thresholds {
      for scan in [false, true] {
        let result = try Bisect.run(session.timeline, scanInterval: scan) { n, _ in
          n >= k ? .bad : .good
        }
        #expect(result.first == (k <= total ? k : nil), "seed \(seed), k \(k), scan \(scan)")
        #expect(result.contradictions.isEmpty)
        if let first = result.first, first > 0 {
          #expect(result.eventAtFirst == session.events[first - 1])
          #expect(result.stateAtFirst == session.states[first])
        }
      }
    }
  }

  /// On random expressions: where the predicate is monotonic on the session, bisect gives
  /// the linear scan's answer; where it is not, it still ends on a boundary (false before,
  /// true at the answer), and no probe it made disagrees with the states.
  @Test(arguments: [23, 24, 25] as [UInt64])
  func agreesWithALinearScan(seed: UInt64) throws {
    let session = try LawSession(seed: seed)
    var rng = SplitMix64(seed: seed &* 31)
    var monotonic = 0
    for text in session.expressions(12, &rng) {
      let query = try Query(text)
      let (expected, isMonotonic) = Self.linear(session.states) { query.holds(in: $0) }
      let result = try Bisect.run(session.timeline, where: query)
      let what = "seed \(seed): \(text)"
      for probe in result.probes where probe.verdict != .skip {
        #expect(
          (probe.verdict == .bad) == query.holds(in: session.states[probe.event]), "\(what)")
      }
      if isMonotonic {
        monotonic += 1
        #expect(result.first == expected, "\(what)")
        #expect(result.contradictions.isEmpty, "\(what)")
      } else if let first = result.first {
        #expect(query.holds(in: session.states[first]), "\(what)")
        if first > 0 { #expect(!query.holds(in: session.states[first - 1]), "\(what)") }
      } else {
        #expect(!query.holds(in: session.states[session.events.count]), "\(what)")
      }
    }
    #expect(monotonic >= 3, "too few monotonic predicates to say anything")
  }

  /// Skipped events never make bisect name a good event: without candidates it names the
  /// first bad event; with them, the range ends at a bad event, everything before that in
  /// it was skipped, and the first bad event lies in it.
  @Test func skipsKeepTheAnswerInRange() throws {
    let session = try LawSession(seed: 26)
    let total = session.events.count
    var rng = SplitMix64(seed: 26)
    for _ in 0..<6 {
      let k = 1 + rng.below(total)
      let skipped = Set((0..<(total / 8)).map { _ in 1 + rng.below(total) })
      let result = try Bisect.run(session.timeline) { n, _ in
        skipped.contains(n) ? .skip : (n >= k ? .bad : .good)
      }
      guard let range = result.candidates else {
        #expect(result.first == k)
        continue
      }
      #expect(range.contains(k), "k \(k), \(range)")
      #expect(result.first == range.upperBound)
      #expect(!skipped.contains(range.upperBound) && range.upperBound >= k, "k \(k), \(range)")
      #expect(range.dropLast().allSatisfy { skipped.contains($0) }, "k \(k), \(range)")
    }
  }
}
