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
  /// does). Two 1.0 logs compare stored record bytes; otherwise decoded events.
  func firstDifferentEvent(_ other: Timeline, through: Int) throws(ReplayError) -> Int? {
    if formatMajor == 1 && other.formatMajor == 1 {
      return try Diverge.firstDifferentRecord(self, other, through: through)
    }
    let window = 4_096
    var next = 1
    var decoderA = EventDecoder()
    var decoderB = EventDecoder()
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
}
