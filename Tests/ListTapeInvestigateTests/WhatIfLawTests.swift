import ListTapeModel
import ListTapeSamples
import Testing

@testable import ListTapeInvestigate
@testable import ListTapeStore

/// Laws of what-if on seeded random sessions.
@Suite struct WhatIfLawTests {
  /// Leaving nothing out changes nothing, at any point.
  @Test(arguments: [61, 62] as [UInt64])
  func anEmptyRemovalIsTheOriginal(seed: UInt64) throws {
    let session = try LawSession(seed: seed, events: 250)
    var rng = SplitMix64(seed: seed)
    for point in [0, session.events.count] + (0..<4).map({ _ in rng.below(session.events.count) }) {
      let report = try WhatIf.run(session.timeline, without: [], at: point)
      #expect(report.firstDifference == nil && report.removedCount == 0)
      #expect(report.appeared.isEmpty && report.vanished.isEmpty)
      #expect(report.diff.isEmpty)
      #expect(report.diff.unchanged == session.states[point].numberOfAllItems)
    }
  }

  /// Marks change no state: leaving them out changes nothing either (their faults: none).
  @Test func leavingOutMarksChangesNothing() throws {
    let session = try LawSession(seed: 63, events: 400)
    let marks = session.events.indices.filter {
      if case .mark = session.events[$0].operation { true } else { false }
    }.map { ($0 + 1)...($0 + 1) }
    try #require(!marks.isEmpty)
    let report = try WhatIf.run(session.timeline, without: marks, at: session.events.count)
    #expect(report.removedCount == marks.count)
    #expect(report.firstDifference == nil)
    #expect(report.appeared.isEmpty && report.vanished.isEmpty)
    #expect(report.diff.isEmpty)
  }

  /// Leaving out everything up to a point gives the empty list there; the diff is the real
  /// state's against it, every fault of those events vanishes with them, and faults can
  /// only appear after them.
  @Test(arguments: [64, 65] as [UInt64])
  func leavingOutAPrefixEmptiesTheList(seed: UInt64) throws {
    let session = try LawSession(seed: seed, events: 250)
    var rng = SplitMix64(seed: seed)
    let end = 1 + rng.below(session.events.count)
    let report = try WhatIf.run(session.timeline, without: [1...end], at: end)
    #expect(report.removedCount == end)
    #expect(
      report.diff == Differ.diff(session.states[end], ListState()).foldingUnchanged(longerThan: 2))
    #expect(report.appeared.allSatisfy { !$0.removed && $0.event > end })
    #expect(report.vanished.filter { $0.event <= end }.allSatisfy { $0.removed })
    // The first difference is the first event that changed the state.
    let first = (1...end).first { session.states[$0] != session.states[0] }
    #expect(report.firstDifference == first)
  }

  /// Ranges merge into sorted, disjoint, non-touching ranges covering the same events.
  @Test func mergedRangesCoverTheSameEvents() {
    var rng = SplitMix64(seed: 66)
    for _ in 0..<200 {
      let ranges = (0..<(1 + rng.below(6))).map { _ -> ClosedRange<Int> in
        let a = 1 + rng.below(40)
        return a...(a + rng.below(6))
      }
      let merged = WhatIf.merged(ranges)
      let covered = Set(ranges.flatMap { Array($0) })
      #expect(Set(merged.flatMap { Array($0) }) == covered)
      #expect(merged.count == Set(merged.map(\.lowerBound)).count)
      for (x, y) in zip(merged, merged.dropFirst()) {
        #expect(x.upperBound + 1 < y.lowerBound, "\(merged)")
      }
      #expect(merged.reduce(0) { $0 + $1.count } == covered.count)
    }
  }
}
