import ListTapeLog
import ListTapeModel
import ListTapeStore

/// How far one step of a fold over a salvaged log is the recorded one (docs/cli.md,
/// "Damaged logs"): every continuous fold re-anchors at the self-contained point after a
/// gap, so the states between a gap and that point are the only ones it cannot vouch for.
package enum StepExactness: Sendable, Equatable {
  /// The states before and after the event are the recorded ones, and so is its fault.
  case exact
  /// The state after the event is the recorded one again (a self-contained point restored
  /// it); the state before was not, so the event's fault is not known.
  case restored
  /// The state after the event is not the recorded one.
  case inexact

  /// Whether the state after the event is the recorded one.
  package var stateIsExact: Bool { self != .inexact }
}

/// The exactness of every step of a log, computed once before a fold (its callbacks must
/// not use the timeline) and asked per event. A log without gaps answers `.exact` at once.
package struct ExactSteps: Sendable {
  /// Each exact stretch: the point its fold starts from and its events.
  let stretches: [(start: Int, events: ClosedRange<Int>)]
  /// Whether the log lost events (else every step is exact).
  package let hasGaps: Bool

  /// Whether event `n`'s step is the recorded one (`n` is a number the fold delivers: a
  /// lost event has no step).
  /// - Complexity: O(1) without gaps, else O(log stretches).
  package func at(_ n: Int) -> StepExactness {
    guard hasGaps else { return .exact }
    var lo = 0
    var hi = stretches.count
    while lo < hi {
      let mid = (lo + hi) / 2
      if stretches[mid].start < n { lo = mid + 1 } else { hi = mid }
    }
    // stretches[lo] is the first stretch starting at or after n.
    if lo < stretches.count && stretches[lo].start == n && n > 0 { return .restored }
    if lo > 0 && stretches[lo - 1].events.contains(n) { return .exact }
    return .inexact
  }

  /// Whether the state after event `n` (0: the empty list) is the recorded one.
  package func stateIsExact(at n: Int) -> Bool { n == 0 || at(n).stateIsExact }

  /// Every step exact: a log without gaps.
  package static let none = ExactSteps(stretches: [], hasGaps: false)

  /// The first event after `n` whose state is exact (nil when none is).
  /// - Complexity: O(stretches).
  package func nextExact(after n: Int) -> Int? {
    guard hasGaps else { return n + 1 }
    if stateIsExact(at: n + 1) { return n + 1 }
    return stretches.first { $0.start > n }?.start
  }

  /// The last event before `n` whose state is exact (0, the empty list, at worst).
  /// - Complexity: O(stretches).
  package func previousExact(before n: Int) -> Int {
    guard hasGaps, n > 1 else { return max(n - 1, 0) }
    guard let s = stretches.last(where: { $0.start < n }) else { return 0 }
    return min(s.events.upperBound, n - 1)
  }
}

extension Timeline {
  /// The exactness of every step, for folds to label what they report.
  package var exactSteps: ExactSteps {
    guard !gaps.isEmpty else { return ExactSteps(stretches: [], hasGaps: false) }
    return ExactSteps(stretches: exactStretches, hasGaps: true)
  }

  /// The self-contained points in `from...through` at which a continuous fold re-anchors:
  /// the starts of the exact stretches after gaps.
  package func anchors(from: Int, through: Int) -> [Int] {
    guard !gaps.isEmpty, from <= through else { return [] }
    return exactStretches.map(\.start).filter { $0 > 0 && $0 >= from && $0 <= through }
  }

  /// The latest event at or before `n` whose state is the recorded one and from which a
  /// fold to `n` meets no self-contained point: `n` itself when its state is exact, else
  /// the last exact event before the gaps that make it inexact (0 at worst). A seek to `n`
  /// starts from a checkpoint at or before it, so that every fold reaching an inexact state
  /// reaches the same one (never from a checkpoint or seek point inside an inexact stretch).
  /// - Complexity: a search of the gaps and checkpoints; no decoding.
  package func seekBound(for n: Int) -> Int {
    guard !gaps.isEmpty else { return n }
    checkIndexForGaps()
    var bound = n
    while bound > 0, case .inexact(let gap, _) = exactness(at: bound) {
      bound = min(bound - 1, Int(gap.firstEvent) - 1)
    }
    return bound
  }
}

extension Timeline {
  /// Whether an index file holds a seek point where the state is not the recorded one: one
  /// built by folding across a gap, which the index build no longer does.
  package func hasInexactSeekPoints(_ index: LogIndex) -> Bool {
    guard !gaps.isEmpty else { return false }
    let steps = exactSteps
    return index.seekPoints.contains { !steps.stateIsExact(at: Int(clamping: $0.seq)) }
  }
}

extension Timeline {
  /// The events up to `n` that are not replayed: the lost ones and those folded onto a
  /// state that is not the recorded one, through the point that restores it (their faults
  /// would be the gap's). Ranges in order; empty for a log without gaps.
  package func notReplayed(through n: Int) -> [ClosedRange<Int>] {
    guard !gaps.isEmpty else { return [] }
    var covered = 1
    var out: [ClosedRange<Int>] = []
    for (start, events) in exactStretches {
      if start + 1 > covered && covered <= n { out.append(covered...min(start, n)) }
      covered = max(covered, events.upperBound + 1)
    }
    if covered <= n { out.append(covered...n) }
    return out
  }
}
