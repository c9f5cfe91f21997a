import ListTapeLog
import ListTapeModel

/// A decoded checkpoint: the state after event `seq`, and the decoder standing right after
/// that event.
package struct LoadedCheckpoint {
  package var seq: Int
  package var state: ListState
  package var decoder: EventDecoder
  /// 1.0: the event codec's running time stored with the state (2.0 frames need none).
  package var lastTime: Int64?
}

extension Timeline {
  /// The log's format major version (1 or 2).
  package var formatMajor: Int { Int(reader.formatVersion.major) }

  /// 2.0: a decoder holding the dictionary that the frame holding event `seq` needs, read
  /// from the segment's restart (or the log's start) through the frames before it. Costs
  /// a read of the segment up to `seq`; seeks through an index file avoid it.
  func frameDecoder(before seq: Int) throws(StoreError) -> EventDecoder {
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
  ) throws(StoreError) {
    var failure: StoreError?
    do {
      try reader.forEachFrame(from: UInt64(from), through: UInt64(max(through, 0)), start: start) {
        view in
        let seq = Int(view.firstSeq)
        do throws(CodecError) {
          switch view.kind {
          case .dictionary: try decoder.restart(view.payload, seq: seq)
          case .events:
            _ = try decoder.skipFrame(view.payload, firstSeq: seq, count: view.eventCount)
          case .checkpoint: break
          }
        } catch {
          failure =
            view.kind == .dictionary
            ? .undecodableDictionary(event: seq, error, path: path)
            : .undecodableEvent(event: error.event ?? seq, error, path: path)
          return false
        }
        return true
      }
    } catch {
      throw .log(error)
    }
    if let failure { throw failure }
  }

  /// The latest checkpoint frame of the log itself (never an index seek point) folding at
  /// most `n` events: what `verify` checks against the fold.
  package func logCheckpoint(atOrBefore n: Int) throws(StoreError) -> LoadedCheckpoint? {
    formatMajor >= 2 ? try frameCheckpoint(atOrBefore: n) : try checkpoint(atOrBefore: n)
  }

  /// 2.0: the latest checkpoint in the log folding at most `n` events, decoded against its
  /// segment's dictionary.
  func frameCheckpoint(atOrBefore n: Int) throws(StoreError) -> LoadedCheckpoint? {
    guard let mark = reader.checkpointMark(atOrBefore: UInt64(n)) else { return nil }
    let seq = Int(mark.seq)
    var decoder = try frameDecoder(before: seq + 1)
    let decoded: Result<ListState, CodecError>
    do {
      decoded = try reader.withFrame(at: mark.offset) { view in
        Result { () throws(CodecError) in try decoder.decodeCheckpoint(view.payload) }
      }
    } catch {
      throw .log(error)
    }
    do {
      let state = try decoded.get()
      return LoadedCheckpoint(seq: seq, state: state, decoder: decoder, lastTime: nil)
    } catch {
      throw .undecodableCheckpoint(event: seq, error, path: path)
    }
  }
}
