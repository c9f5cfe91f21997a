import ListTapeLog
import ListTapeModel
import ListTapeStore

/// Whether the state at an event is the recorded one, in a log that lost events in a
/// salvage. A state before every gap is exact. After a gap, folding cannot be trusted
/// (events are missing and later ones may not decode); a state is exact again only from a
/// *recovery point* after the gap: a checkpoint the log holds whole, which decodes without
/// anything before it. Which states those are is the reader's account
/// (`LogReader.exactStretches`, `exactFrom(through:)`), never counted again here. The index
/// file's seek points are never used: they are a cache folded across the gap.
package enum StateExactness: Equatable, Sendable {
  /// The recorded state. `restoredFrom` is the recovery point its stretch starts from when
  /// events were lost before it (nil when none were).
  case exact(restoredFrom: Int?)
  /// Not the recorded state: folded without what `gap` lost (its events, event `n` itself
  /// perhaps among them, or a dictionary restart and with it the events that name its
  /// entries). `exactFrom` is the first later event whose state is exact again, nil when no
  /// recovery point follows.
  case inexact(gap: LogGap, exactFrom: Int?)

  package var isExact: Bool {
    if case .exact = self { return true }
    return false
  }
}

extension LogGap {
  /// The events lost, nil when none were (a dictionary restart was).
  package var events: ClosedRange<Int>? {
    count > 0 ? Int(firstEvent)...Int(firstEvent + count - 1) : nil
  }
}

extension Timeline {
  /// The lost event ranges, in order.
  package var lostRanges: [ClosedRange<Int>] {
    gaps.filter { $0.count > 0 }.map {
      Int($0.firstEvent)...Int($0.firstEvent + $0.count - 1)
    }
  }

  /// Whether the state at `n` is the recorded one, and from which point.
  /// - Complexity: the reader's stretches (cached), then O(log gaps); no decoding.
  package func exactness(at n: Int) -> StateExactness {
    guard n > 0, !gaps.isEmpty else { return .exact(restoredFrom: nil) }
    if let stretch = reader.exactStretch(containing: UInt64(n)) {
      return .exact(restoredFrom: stretch.start > 0 ? Int(stretch.start) : nil)
    }
    // The last gap the reader keeps at or before n (past them all, in a log declaring more
    // than it keeps, the last kept one).
    let gap =
      gaps.last { $0.firstEvent <= UInt64(n) } ?? gaps.first
      ?? LogGap(firstEvent: UInt64(n), count: 0)
    let next = reader.exactStretches.first { $0.start > UInt64(n) }.map { Int($0.start) }
    return .inexact(gap: gap, exactFrom: next)
  }

  /// Whether a fold from the state at `a` through event `b` reads only recorded states: both
  /// lie in one exact stretch (no lost events between them).
  /// - Complexity: the reader's stretches (cached), then O(log gaps).
  package func foldIsExact(from a: Int, through b: Int) -> Bool {
    guard !gaps.isEmpty else { return true }
    guard let stretch = reader.exactStretch(containing: UInt64(max(a, 0))) else { return false }
    return UInt64(max(b, a)) <= stretch.end
  }

  /// The state at `n` and whether it is the recorded one. Exact states after a gap are
  /// folded from the recovery point before them, or a later checkpoint of the log (never
  /// through the gap, never from the index file); an inexact one is the fold without the
  /// lost events, for a person to look at with that label.
  /// - Complexity: as `state(at:)`; after a gap, a checkpoint decode plus a fold from it.
  package func exactState(at n: Int) throws(StoreError) -> (
    state: ListState, exactness: StateExactness
  ) {
    let exactness = exactness(at: n)
    guard case .exact(let restored?) = exactness else {
      return (try state(at: n), exactness)
    }
    return (try restoredState(from: restored, through: n), exactness)
  }

  /// The state after event `n`, folded from the log's latest checkpoint at or before it,
  /// which must be recovery point `point` or a later one (the states from `point` to `n`
  /// are exact: no gap lies between).
  package func restoredState(from point: Int, through n: Int) throws(StoreError) -> ListState {
    guard let loaded = try logCheckpoint(atOrBefore: n), loaded.seq >= point else {
      throw .log(
        LogError(.damaged, path: path, message: "no checkpoint after event \(point)"))
    }
    var state = loaded.state
    var decoder = loaded.decoder
    try fold(&state, &decoder, from: loaded.seq + 1, through: n) { _, _, _, _ in true }
    return state
  }

  /// The stretches of events whose states are exact (the reader's, those holding at least
  /// one event), each with the point its fold starts from (0: the empty list; else a
  /// recovery point, `restoredState(from:through:)`). Between stretches lie states that
  /// are not the recorded ones.
  package var exactStretches: [(start: Int, events: ClosedRange<Int>)] {
    reader.exactStretches.compactMap { s in
      s.end > s.start ? (Int(s.start), Int(s.start + 1)...Int(s.end)) : nil
    }
  }

  /// Folds the exact stretches of events 1...n, each from its own start, and calls `body`
  /// after each of their events as `fold` does; states that are not the recorded ones are
  /// never shown to `body`. `body` returns false to stop. Returns the state at `n` when it
  /// is exact (nil when it is not, or when `body` stopped) and the last event folded.
  package func forEachExactState(
    through n: Int, progress: ((Int, Int) -> Void)? = nil,
    _ body: (FoldOps, Int, ListFault?, inout ListState) -> Bool
  ) throws(StoreError) -> (state: ListState?, stoppedAt: Int) {
    var last = 0
    // The state at 0 is the empty list, exact in every log (an empty one has no stretch).
    var final: ListState? = n == 0 ? ListState() : nil
    for (start, events) in exactStretches where start <= n {
      var state = ListState()
      var decoder = startDecoder()
      if start > 0 {
        guard let loaded = try logCheckpoint(atOrBefore: start), loaded.seq == start else {
          throw .log(LogError(.damaged, path: path, message: "no checkpoint after event \(start)"))
        }
        (state, decoder) = (loaded.state, loaded.decoder)
      }
      let upper = min(events.upperBound, n)
      var stopped = false
      if events.lowerBound <= upper {
        try fold(&state, &decoder, from: events.lowerBound, through: upper, progress: progress) {
          ops, i, fault, s in
          last = ops.seqs[i]
          stopped = !body(ops, i, fault, &s)
          return !stopped
        }
      }
      if stopped { return (nil, last) }
      last = max(last, upper)
      if upper == n { final = state }
    }
    return (final, last)
  }
}
