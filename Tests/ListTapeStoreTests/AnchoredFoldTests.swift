import Foundation
import ListTapeLog
import ListTapeModel
import ListTapeRead
import Testing

@testable import ListTapeStore

/// Issue 23.2/23.3 held by every fold: after a salvage gap, continuous folds re-anchor at
/// the point that restores the states, the index build places no seek point between a gap
/// and that point, and seeks never start from an inexact state.
@Suite struct AnchoredFoldTests {
  /// A long session with frequent recovery points, damaged past what parity mends, and
  /// salvaged: the original, the salvaged log and its first gap.
  struct Salvaged {
    var recorded: RecoveryPointTests.Recorded
    var path: String
    var gap: ClosedRange<Int>

    init() throws {
      recorded = try RecoveryPointTests.Recorded()
      let pristine = recorded.directory + "/pristine.ltape"
      try FileManager.default.copyItem(atPath: recorded.path, toPath: pristine)
      let (offset, _) = try recorded.frame(holding: recorded.events.count / 2)
      try RecoveryPointTests.damage(recorded.path, at: offset, length: 3 * (8 << 10))
      path = recorded.directory + "/salvaged.ltape"
      let report = try Timeline.salvage(recorded.path, to: path)
      let first = try #require(report.gaps.first)
      gap = Int(first.firstEvent)...Int(first.firstEvent + first.count - 1)
      recorded.path = pristine
    }
  }

  /// States of the original log every `step` events (and at `extra`), from one fold.
  static func states(_ path: String, every step: Int, extra: [Int] = []) throws -> [Int: ListState]
  {
    let t = try RecoveryPointTests.open(path)
    var out: [Int: ListState] = [:]
    let wanted = Set(extra)
    _ = try t.forEachState { ops, i, _, s in
      let n = ops.seqs[i]
      if n % step == 0 || wanted.contains(n) { out[n] = s }
      return true
    }
    return out
  }

  @Test func continuousFoldsReAnchorAndLabelEveryState() throws {
    let s = try Salvaged()
    defer { s.recorded.remove() }
    let salvaged = try RecoveryPointTests.open(s.path)
    let point = try #require(salvaged.reader.recoveryPoint(atOrAfter: UInt64(s.gap.upperBound)))
    let restored = Int(point.seq)
    let original = try Self.states(
      s.recorded.path, every: 97, extra: [restored, restored + 1, s.gap.lowerBound - 1])
    let steps = salvaged.exactSteps
    var seen = (exact: 0, inexact: 0, restored: 0, compared: 0)
    var last = ListState()
    let (final, _) = try salvaged.forEachState { ops, i, _, state in
      let n = ops.seqs[i]
      let step = steps.at(n)
      // The label agrees with the policy `show` applies to a single state.
      #expect(step.stateIsExact == salvaged.exactness(at: n).isExact, "event \(n)")
      switch step {
      case .exact: seen.exact += 1
      case .inexact: seen.inexact += 1
      case .restored: seen.restored += 1
      }
      if step.stateIsExact, let want = original[n] {
        #expect(state == want, "event \(n)")
        seen.compared += 1
      }
      last = state
      return true
    }
    #expect(final == last)
    #expect(seen.inexact > 0 && seen.exact > 0 && seen.compared > 100)
    #expect(steps.at(restored) == .restored || s.gap.contains(restored))
    #expect(steps.at(restored + 1) == .exact)
    #expect(steps.at(s.gap.upperBound + 1) != .exact)
    // A fold that starts in the inexact stretch reaches the same states as one from the start.
    let inexact = (s.gap.upperBound + restored) / 2
    if inexact > s.gap.upperBound && inexact < restored {
      #expect(!steps.stateIsExact(at: inexact))
      // (Event `inexact` itself may not decode: a skipped event changes nothing.)
      var fromStart = ListState()
      _ = try salvaged.forEachState(through: inexact) { _, _, _, state in
        fromStart = state
        return true
      }
      #expect(try salvaged.state(at: inexact) == fromStart)
      let (partial, _) = try salvaged.forEachState(from: inexact, through: restored + 1) {
        _, _, _, _ in true
      }
      #expect(partial == original[restored + 1])
    }
  }

  /// A salvage that loses a dictionary frame leaves a segment whose entries no frame names:
  /// the index places no seek point in it, not even at the checkpoint that makes the states
  /// exact again before the next restart (the build failed "seek point after event N has no
  /// dictionary"), and every point it places loads the original's state.
  @Test func theIndexSkipsASegmentWhoseDictionaryWasLost() throws {
    let recorded = try RecoveryPointTests.Recorded()
    defer { recorded.remove() }
    let pristine = recorded.directory + "/pristine.ltape"
    try FileManager.default.copyItem(atPath: recorded.path, toPath: pristine)
    var found: (offset: UInt64, seq: Int)?
    let count = recorded.events.count
    try LogReader(path: pristine).forEachFrame(from: UInt64(count / 2), through: UInt64(count)) {
      view in
      guard view.kind == .dictionary else { return true }
      found = (view.offset, Int(view.firstSeq))
      return false
    }
    let lost = try #require(found)
    try RecoveryPointTests.damage(recorded.path, at: Int(lost.offset), length: 3 * (8 << 10))
    let path = recorded.directory + "/salvaged.ltape"
    let report = try Timeline.salvage(recorded.path, to: path)
    // (Parity may mend the frame hit first; the damage reaches the next restart's.)
    let lostSeq = try #require(report.lostRestarts.first)
    let salvaged = try Timeline(path: path)
    let restored = try #require(salvaged.reader.recoveryPoint(atOrAfter: lostSeq))
    salvaged.indexSpacing = 300
    try salvaged.buildIndex()
    let points = try #require(salvaged.reader.index).seekPoints.map { Int($0.seq) }
    #expect(points.count > 20)
    #expect(!points.contains { (Int(lostSeq)...Int(restored.seq)).contains($0) })
    let original = try Self.states(pristine, every: 1 << 40, extra: points)
    for p in points {
      #expect(try salvaged.state(at: p) == original[p], "seek point \(p)")
    }
  }

  @Test func theIndexPlacesNoSeekPointInAnInexactStretch() throws {
    let s = try Salvaged()
    defer { s.recorded.remove() }
    let salvaged = try Timeline(path: s.path)
    salvaged.indexSpacing = 300
    try salvaged.buildIndex()
    let index = try #require(salvaged.reader.index)
    let steps = salvaged.exactSteps
    let points = index.seekPoints.map { Int($0.seq) }
    #expect(points.count > 20)
    #expect(points.allSatisfy { steps.stateIsExact(at: $0) })
    let point = try #require(salvaged.reader.recoveryPoint(atOrAfter: UInt64(s.gap.upperBound)))
    #expect(points.contains { $0 > Int(point.seq) }, "seek points after the recovery point")
    // Every seek from the index, after the recovery point, gives the original's state; those
    // before the point that restores the gap are the same as a fold from the start.
    let original = try Self.states(s.recorded.path, every: 211)
    let reopened = try Timeline(path: s.path)
    #expect(reopened.reader.index != nil)
    for (n, want) in original.sorted(by: { $0.key < $1.key }) where n > Int(point.seq) {
      #expect(try reopened.state(at: n) == want, "event \(n)")
    }
    #expect(!reopened.hasInexactSeekPoints(try #require(reopened.reader.index)))
    // Only the inexact stretch goes without: the original log gets a point every ~300
    // events, and the salvaged one as many outside the stretch.
    let pristine = try Timeline(path: s.recorded.path)
    pristine.indexSpacing = 300
    try pristine.buildIndex()
    let all = try #require(pristine.reader.index).seekPoints.map { Int($0.seq) }
    #expect(all.count >= s.recorded.events.count / 600, "\(all.count) seek points")
    let outside = all.filter { $0 < s.gap.lowerBound || $0 > Int(point.seq) + 600 }
    #expect(points.count >= outside.count * 3 / 4, "\(points.count) of \(outside.count)")
  }
}
