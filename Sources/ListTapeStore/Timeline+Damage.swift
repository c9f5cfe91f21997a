import ListTapeLog
import ListTapeModel

/// Whether the state at an event is the one recorded, in a log that lost events in a
/// salvage. A state before every gap is exact. After a gap, folding cannot be trusted
/// (events are missing and later ones may not decode); a state is exact again only from a
/// *self-contained point* at or after the gap's last lost event: a state the log holds
/// whole, which decodes without anything before it. Today those are the log's own
/// checkpoints whose decoding starts after the gap; recovery points plug in at
/// `selfContainedPoint(atOrBefore:after:)`. The index file's seek points are never used:
/// they are a cache folded across the gap.
package enum StateExactness: Equatable, Sendable {
  /// The recorded state. `restoredFrom` is the self-contained point it is folded from
  /// when events were lost before it (nil when none were).
  case exact(restoredFrom: Int?)
  /// Not the recorded state: folded without the events of `lost` (event `n` itself may be
  /// one of them). `exactFrom` is the first later event whose state is exact again, nil
  /// when no self-contained point follows.
  case inexact(lost: ClosedRange<Int>, exactFrom: Int?)

  package var isExact: Bool {
    if case .exact = self { return true }
    return false
  }
}

extension Timeline {
  /// The lost event ranges, in order.
  package var lostRanges: [ClosedRange<Int>] {
    gaps.filter { $0.count > 0 }.map {
      Int($0.firstEvent)...Int($0.firstEvent + $0.count - 1)
    }
  }

  /// The latest self-contained point at or before `n` and after event `lastLost` (its
  /// decoding must not reach back to `lastLost` or before); nil when there is none.
  /// - Complexity: a search of the checkpoints the log's scan found; no decoding.
  package func selfContainedPoint(atOrBefore n: Int, after lastLost: Int) -> Int? {
    guard n > lastLost else { return nil }
    for seq in reader.checkpointSeqs.reversed() {
      let c = Int(seq)
      if c > n { continue }
      if c < lastLost { return nil }
      if decodingStart(ofCheckpointAt: c) > lastLost { return c }
    }
    return nil
  }

  /// The first self-contained point after event `lastLost` and at most `limit`.
  package func firstSelfContainedPoint(after lastLost: Int, through limit: Int) -> Int? {
    reader.checkpointSeqs.lazy.map { Int($0) }.first {
      $0 >= lastLost && $0 <= limit && decodingStart(ofCheckpointAt: $0) > lastLost
    }
  }

  /// The first event whose record the decoder of the checkpoint after event `c` reads:
  /// 1.0, the codec's reset point; 2.0, the first event of the dictionary segment.
  private func decodingStart(ofCheckpointAt c: Int) -> Int {
    if formatMajor >= 2 {
      return reader.restart(atOrBefore: UInt64(c + 1)).map { Int($0.seq) } ?? 1
    }
    return EventCodecLayout.resetPoint(atOrBefore: c)
  }

  /// Whether the state at `n` is the recorded one, and from which point.
  /// - Complexity: a search of the gaps and checkpoints; no decoding.
  package func exactness(at n: Int) -> StateExactness {
    let lost = lostRanges
    guard let i = lost.lastIndex(where: { $0.lowerBound <= n }) else {
      return .exact(restoredFrom: nil)
    }
    if let point = selfContainedPoint(atOrBefore: n, after: lost[i].upperBound) {
      return .exact(restoredFrom: point)
    }
    let limit = (i + 1 < lost.count ? lost[i + 1].lowerBound : eventCount + 1) - 1
    return .inexact(
      lost: lost[i], exactFrom: firstSelfContainedPoint(after: lost[i].upperBound, through: limit))
  }

  /// The state at `n` and whether it is the recorded one. Exact states after a gap are
  /// folded from the self-contained point before them (never through the gap, never from
  /// the index file); an inexact one is the fold without the lost events, for a person to
  /// look at with that label.
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

  /// The state at self-contained point `point`, folded on through event `n`.
  package func restoredState(from point: Int, through n: Int) throws(StoreError) -> ListState {
    guard let loaded = try logCheckpoint(atOrBefore: point), loaded.seq == point else {
      throw .log(
        LogError(.damaged, path: path, message: "no checkpoint after event \(point)"))
    }
    var state = loaded.state
    var decoder = loaded.decoder
    try fold(&state, &decoder, from: point + 1, through: n)
    return state
  }

  /// The stretches of events whose states are exact, each with the point its fold starts
  /// from (0: the empty list; else a self-contained point, `restoredState(from:through:)`).
  /// Between stretches lie states that are not the recorded ones.
  package var exactStretches: [(start: Int, events: ClosedRange<Int>)] {
    var stretches: [(start: Int, events: ClosedRange<Int>)] = []
    let lost = lostRanges
    let end = eventCount
    var start: Int? = 0
    for (i, gap) in lost.enumerated() {
      if let s = start, gap.lowerBound - 1 >= s + 1 {
        stretches.append((s, (s + 1)...(gap.lowerBound - 1)))
      }
      let limit = (i + 1 < lost.count ? lost[i + 1].lowerBound : end + 1) - 1
      start = firstSelfContainedPoint(after: gap.upperBound, through: limit)
    }
    if let s = start, end >= s + 1 { stretches.append((s, (s + 1)...end)) }
    return stretches
  }

  /// Folds the exact stretches of events 1...n, each from its own start, and calls `body`
  /// after each of their events with its number, the event, its fault and the state; states
  /// that are not the recorded ones are never shown to `body`. `body` returns false to
  /// stop. Returns the state at `n` when it is exact (nil when it is not, or when `body`
  /// stopped) and the last event folded.
  package func forEachExactState(
    through n: Int, progress: ((Int, Int) -> Void)? = nil,
    _ body: (Int, Event, ListFault?, ListState) -> Bool
  ) throws(StoreError) -> (state: ListState?, stoppedAt: Int) {
    var last = 0
    var final: ListState?
    for (start, events) in exactStretches where start <= n {
      var state = ListState()
      var decoder = EventDecoder()
      if start > 0 {
        guard let loaded = try logCheckpoint(atOrBefore: start), loaded.seq == start else {
          throw .log(LogError(.damaged, path: path, message: "no checkpoint after event \(start)"))
        }
        (state, decoder) = (loaded.state, loaded.decoder)
      }
      let upper = min(events.upperBound, n)
      var stopped = false
      if events.lowerBound <= upper {
        try foldEach(&state, &decoder, from: events.lowerBound, through: upper, progress: progress)
        {
          seq, event, fault, s in
          last = seq
          stopped = !body(seq, event, fault, s)
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
