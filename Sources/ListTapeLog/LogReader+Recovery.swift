/// Recovery points (docs/log-format.md, "Damage and recovery points"): a checkpoint whose
/// state and every event after it decode without any frame before a point after a lost
/// range. In 2.0, a checkpoint written right after a dictionary restart: its state names only
/// entries of the restart's dictionary, and every event after it names entries of that
/// segment, so from there on a reader needs no frame before the restart and no index. In
/// 1.0, a checkpoint (its state is whole) whose records decode from a codec reset after the
/// lost range. After a salvaged gap, states are exact again from the first one after it.
///
/// This file is the one account of which states of a salvaged log are the recorded ones
/// (`exactStretches`, `exactFrom(through:)`): `Timeline` and every command ask it, and
/// nothing counts it a second time.
extension LogReader {
  /// A recovery point: the checkpoint's event count and its frame's offset.
  package struct RecoveryPoint: Sendable, Equatable {
    /// Events folded into the checkpoint's state.
    package var seq: UInt64
    /// Offset of the checkpoint frame.
    package var offset: UInt64
  }

  /// Whether the checkpoint folding `seq` events is a 2.0 recovery point: a dictionary
  /// frame (whose segment begins at event `seq + 1`) comes right before it.
  /// - Complexity: O(log checkpoints + log restarts), no I/O.
  package func isRecoveryPoint(checkpointSeq seq: UInt64) -> Bool {
    guard header.major >= 2, let cp = checkpointMark(atOrBefore: seq), cp.seq == seq,
      let r = restart(atOrBefore: seq &+ 1)
    else { return false }
    return r.seq == seq &+ 1 && r.offset < cp.offset
  }

  /// The first recovery point after a lost range whose last event is `seq` (its state folds
  /// at least `seq` events, and decoding it and the events after it reads nothing at or
  /// before event `seq`): states from its `seq` on are exact again. nil when none follows.
  /// - Complexity: 2.0, O(restarts after `seq`); 1.0, O(log checkpoints); no I/O.
  package func recoveryPoint(atOrAfter seq: UInt64) -> RecoveryPoint? {
    guard header.major >= 2 else {
      // 1.0: the records after checkpoint c decode from the reset at or before c.
      let k = Format.v1RecordResetInterval
      let reset = (seq + k - 1) / k * k + 1  // the first reset point after event seq
      let n = Self.countThrough(reset - 1, in: scan.checkpoints)
      guard n < scan.checkpoints.count else { return nil }
      let cp = scan.checkpoints[n]
      return RecoveryPoint(seq: cp.seq, offset: cp.offset)
    }
    // A recovery point at event count s has its restart at s + 1.
    var n = Self.countThrough(seq, in: scan.restarts)
    while n < scan.restarts.count {
      let r = scan.restarts[n]
      let s = r.seq &- 1
      if let cp = checkpointMark(atOrBefore: s), cp.seq == s, cp.offset > r.offset {
        return RecoveryPoint(seq: s, offset: cp.offset)
      }
      n += 1
    }
    return nil
  }

  /// The latest 2.0 recovery point whose state folds at most `seq` events.
  /// - Complexity: O(restarts before `seq`) in the worst case, no I/O.
  package func recoveryPoint(atOrBefore seq: UInt64) -> RecoveryPoint? {
    guard header.major >= 2 else { return nil }
    var n = Self.countThrough(seq &+ 1, in: scan.restarts)
    while n > 0 {
      let r = scan.restarts[n - 1]
      let s = r.seq &- 1
      if let cp = checkpointMark(atOrBefore: s), cp.seq == s, cp.offset > r.offset {
        return RecoveryPoint(seq: s, offset: cp.offset)
      }
      n -= 1
    }
    return nil
  }

  /// The runs of states that are the recorded ones, in order: from the start (the empty
  /// list) to the event before the first gap, then from the first recovery point after
  /// each gap to the event before the next gap (or the last event). Every other state (0
  /// excepted) follows lost frames with no recovery point between, and is not the recorded
  /// one. A log without gaps is one stretch. Past the gaps the scan keeps (a hostile log
  /// declaring more than `FrameScan.maxGapsKept`), nothing after the last kept one is exact.
  /// - Complexity: O(gaps × restarts) the first time for a given scan, then cached.
  package var exactStretches: [ExactStretch] {
    let key = StretchKey(events: scan.lastSeq, frames: scan.frames)
    if let cached = stretchCache, cached.key == key { return cached.stretches }
    let stretches = computeExactStretches()
    stretchCache = (key, stretches)
    return stretches
  }

  private func computeExactStretches() -> [ExactStretch] {
    let last = scan.lastSeq
    let gaps = scan.gaps
    let hidden = scan.gapCount > gaps.count
    var out: [ExactStretch] = []
    var start: UInt64? = 0
    for (i, gap) in gaps.enumerated() {
      if let s = start { out.append(ExactStretch(start: s, end: max(s, gap.firstEvent &- 1))) }
      // The next gap's first lost event bounds where this gap's recovery point counts.
      let limit: UInt64? =
        i + 1 < gaps.count ? gaps[i + 1].firstEvent &- 1 : (hidden ? nil : last)
      let lastLost = gap.firstEvent &+ gap.count &- 1
      start = limit.flatMap { limit in
        recoveryPoint(atOrAfter: lastLost).map(\.seq).flatMap { $0 <= limit ? $0 : nil }
      }
    }
    if let s = start, s <= last { out.append(ExactStretch(start: s, end: last)) }
    return out
  }

  /// The first event whose state is exact in a log with gaps, at or before event `seq`:
  /// `seq` itself when no gap comes at or before it, else the first recovery point after
  /// the last such gap (nil when there is none up to `seq`, so the state at `seq` is not
  /// the recorded one). `Timeline` asks this (through `exactStretches`) before it calls a
  /// state after a gap exact.
  /// - Complexity: as `exactStretches`, then O(log gaps).
  package func exactFrom(through seq: UInt64) -> UInt64? {
    guard let stretch = exactStretch(containing: seq) else { return nil }
    return stretch.start == 0 ? seq : stretch.start
  }

  /// The stretch whose states include the one after event `seq`, if any.
  package func exactStretch(containing seq: UInt64) -> ExactStretch? {
    let stretches = exactStretches
    var lo = 0
    var hi = stretches.count
    while lo < hi {
      let mid = (lo + hi) / 2
      if stretches[mid].end < seq { lo = mid + 1 } else { hi = mid }
    }
    guard lo < stretches.count, stretches[lo].contains(seq) else { return nil }
    return stretches[lo]
  }
}

/// A run of states that are the recorded ones: the state at `start` (0, the empty list, or
/// a recovery point after lost frames) and after every event through `end` (≥ `start`).
package struct ExactStretch: Sendable, Equatable {
  /// Where the run's fold starts: 0, or the recovery point whose checkpoint restores it.
  package var start: UInt64
  /// The last event whose state is exact (the event before the next gap, or the last one).
  package var end: UInt64

  /// Whether the state after event `seq` is in this run.
  package func contains(_ seq: UInt64) -> Bool { seq >= start && seq <= end }
}

/// What the cached stretches were computed from: they change only when the scan grows.
struct StretchKey: Equatable {
  var events: UInt64
  var frames: Int
}

/// A frame as its header describes it, without its payload: for walking the frames of a
/// log (the bench's cost of parity and recovery points, tests that damage one kind).
package struct FrameSummary: Sendable, Equatable {
  /// Events, checkpoint or dictionary; nil for META and skippable frames.
  package var kind: FrameView.Kind?
  /// A PARITY frame.
  package var isParity: Bool
  /// The header's first_seq (see `FrameView.firstSeq`).
  package var firstSeq: UInt64
  /// Bytes the frame takes in the file: the next one starts at `offset + length`.
  package var length: UInt64
}

extension LogReader {
  /// The header of the frame at `offset` (which the scan accepted), re-checked.
  package func frameSummary(at offset: UInt64) throws(LogError) -> FrameSummary {
    let h = try frameHeader(at: offset, lastGood: 0)
    let kind: FrameView.Kind?
    switch h.type {
    case Format.typeEvents: kind = .events
    case Format.typeCheckpoint: kind = .checkpoint
    case Format.typeDictionary: kind = .dictionary
    default: kind = nil
    }
    return FrameSummary(
      kind: kind, isParity: h.type == Format.typeParity, firstSeq: h.firstSeq,
      length: h.frameLength)
  }
}
