import ListTapeLog
import ListTapeModel

/// A decoded checkpoint: the state after event `seq`, and the decoder standing right after
/// that event.
struct LoadedCheckpoint {
  var seq: Int
  var state: ListState
  var decoder: EventDecoder
  /// 1.0: the event codec's running time stored with the state (2.0 frames need none).
  var lastTime: Int64?
}

extension Timeline {
  /// The log's format major version (1 or 2).
  public var formatMajor: Int { Int(reader.formatVersion.major) }

  /// 2.0: a decoder holding the dictionary that the frame holding event `seq` needs, read
  /// from the segment's restart (or the log's start) through the frames before it. Costs
  /// a read of the segment up to `seq`; seeks through an index file avoid it.
  func frameDecoder(before seq: Int) throws(ReplayError) -> EventDecoder {
    if let fast = try indexedFrameDecoder(before: seq) { return fast }
    var decoder = EventDecoder()
    let restart = reader.restart(atOrBefore: UInt64(seq))
    let from = restart?.seq ?? 1
    let start = restart?.offset ?? reader.firstFrameOffset
    try absorbDefinitions(&decoder, from: Int(from), through: seq - 1, start: start)
    return decoder
  }

  /// Reads dictionary restarts and the definitions of event frames `from...through` into
  /// `decoder` (starting at frame offset `start`), without decoding events.
  func absorbDefinitions(
    _ decoder: inout EventDecoder, from: Int, through: Int, start: UInt64
  ) throws(ReplayError) {
    var failure: ReplayError?
    do {
      try reader.forEachFrame(from: UInt64(from), through: UInt64(max(through, 0)), start: start) {
        view in
        do throws(CodecError) {
          switch view.kind {
          case .dictionary: try decoder.restart(view.payload, seq: Int(view.firstSeq))
          case .events:
            _ = try decoder.skipFrame(
              view.payload, firstSeq: Int(view.firstSeq), count: view.eventCount)
          case .checkpoint: break
          }
        } catch {
          failure = .undecodable("frame", event: Int(view.firstSeq), path: path, error)
          return false
        }
        return true
      }
    } catch {
      throw ReplayError(error)
    }
    if let failure { throw failure }
  }

  /// The latest checkpoint frame of the log itself (never an index seek point) folding at
  /// most `n` events: what `verify` checks against the fold.
  func logCheckpoint(atOrBefore n: Int) throws(ReplayError) -> LoadedCheckpoint? {
    formatMajor >= 2 ? try frameCheckpoint(atOrBefore: n) : try checkpoint(atOrBefore: n)
  }

  /// 2.0: the latest checkpoint in the log folding at most `n` events, decoded against its
  /// segment's dictionary.
  func frameCheckpoint(atOrBefore n: Int) throws(ReplayError) -> LoadedCheckpoint? {
    guard let mark = reader.checkpointMark(atOrBefore: UInt64(n)) else { return nil }
    let seq = Int(mark.seq)
    var decoder = try frameDecoder(before: seq + 1)
    let decoded: Result<ListState, CodecError>
    do {
      decoded = try reader.withFrame(at: mark.offset) { view in
        Result { () throws(CodecError) in try decoder.decodeCheckpoint(view.payload) }
      }
    } catch {
      throw ReplayError(error)
    }
    do {
      let state = try decoded.get()
      return LoadedCheckpoint(seq: seq, state: state, decoder: decoder, lastTime: nil)
    } catch {
      throw ReplayError.undecodable("checkpoint", event: seq, path: path, error)
    }
  }

  /// The first event number ≤ `through` at which the two logs' events differ (nil if none
  /// does). Two 1.0 logs compare stored record bytes. Two 2.0 logs compare frame
  /// fingerprints (headers only) while their frames are the same, then decoded events from
  /// the first frame that differs; a 1.0 and a 2.0 log compare decoded events.
  func firstDifferentEvent(_ other: Timeline, through: Int) throws(ReplayError) -> Int? {
    if formatMajor == 1 && other.formatMajor == 1 {
      return try Diverge.firstDifferentRecord(self, other, through: through)
    }
    var start = 1
    if formatMajor >= 2 && other.formatMajor >= 2 {
      guard let s = try firstDifferentFrame(other, through: through) else { return nil }
      start = s
    }
    let window = 4_096
    var next = start
    var decoderA = try decoder(after: start - 1)
    var decoderB = try other.decoder(after: start - 1)
    var events: [Event] = []
    while next <= through {
      let end = min(through, next + window - 1)
      events.removeAll(keepingCapacity: true)
      try scanEvents(from: next, through: end, decoder: &decoderA) { _, e in
        events.append(e)
        return true
      }
      var found: Int?
      try other.scanEvents(from: next, through: end, decoder: &decoderB) { seq, e in
        let i = seq - next
        if i >= events.count || events[i] != e {
          found = seq
          return false
        }
        return true
      }
      if let found { return found }
      next = end + 1
    }
    return nil
  }

  /// Where the two 2.0 logs' frames first differ (the first event of the earlier of the two
  /// frames), or nil when their frames are the same through event `through`.
  func firstDifferentFrame(_ other: Timeline, through: Int) throws(ReplayError) -> Int? {
    let window = 1 << 20
    var next = 1
    while next <= through {
      let end = min(through, next + window - 1)
      let a: [FrameFingerprint]
      let b: [FrameFingerprint]
      do {
        a = try reader.frameFingerprints(from: UInt64(next), through: UInt64(end))
        b = try other.reader.frameFingerprints(from: UInt64(next), through: UInt64(end))
      } catch {
        throw ReplayError(error)
      }
      for (x, y) in zip(a, b) where x != y { return Int(min(x.firstSeq, y.firstSeq)) }
      if a.count != b.count {
        let shorter = a.count < b.count ? a : b
        return shorter.last.map { Int($0.firstSeq) + $0.eventCount } ?? next
      }
      // Frames may run past `end`: go on after the last event both have read the same.
      let covered = a.last.map { Int($0.firstSeq) + $0.eventCount - 1 } ?? end
      next = max(end, covered) + 1
    }
    return nil
  }
}
