/// Recovery points of a 2.0 log (docs/log-format.md, "Damage and recovery points"): a
/// checkpoint written right after a dictionary restart. Its state names only entries of the
/// restart's dictionary, and every event after it names entries of that segment, so from
/// there on a reader needs no frame before the restart and no index: after a salvaged gap,
/// states are exact again from the first recovery point after it.
extension LogReader {
  /// A recovery point: the checkpoint's event count and its frame's offset.
  package struct RecoveryPoint: Sendable, Equatable {
    /// Events folded into the checkpoint's state.
    package var seq: UInt64
    /// Offset of the checkpoint frame.
    package var offset: UInt64
  }

  /// Whether the checkpoint folding `seq` events is a recovery point: a dictionary frame
  /// (whose segment begins at event `seq + 1`) comes right before it. 1.0 logs have none.
  /// - Complexity: O(log checkpoints + log restarts), no I/O.
  package func isRecoveryPoint(checkpointSeq seq: UInt64) -> Bool {
    guard header.major >= 2, let cp = checkpointMark(atOrBefore: seq), cp.seq == seq,
      let r = restart(atOrBefore: seq &+ 1)
    else { return false }
    return r.seq == seq &+ 1 && r.offset < cp.offset
  }

  /// The first recovery point whose state folds at least `seq` events: after a gap ending
  /// with event `seq - 1`, states from its `seq` on are exact again. nil when none follows.
  /// - Complexity: O(restarts after `seq`), no I/O.
  package func recoveryPoint(atOrAfter seq: UInt64) -> RecoveryPoint? {
    guard header.major >= 2 else { return nil }
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

  /// The latest recovery point whose state folds at most `seq` events.
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

  /// The first event whose state is exact in a log with gaps, at or before event `seq`:
  /// `seq` itself when no gap comes at or before it, else the first recovery point after
  /// the last such gap (nil when there is none up to `seq`, so the state at `seq` is not
  /// the recorded one). What `Timeline` asks before it calls a state after a gap exact.
  package func exactFrom(through seq: UInt64) -> UInt64? {
    // Past the gaps the scan keeps (a hostile log), nothing after the last kept one is known.
    if scan.gapCount > scan.gaps.count, let kept = scan.gaps.last, kept.firstEvent <= seq {
      return nil
    }
    guard let gap = scan.gaps.last(where: { $0.firstEvent <= seq }) else { return seq }
    let after = gap.firstEvent + gap.count - 1
    guard let point = recoveryPoint(atOrAfter: after), point.seq <= seq else { return nil }
    return point.seq
  }
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
