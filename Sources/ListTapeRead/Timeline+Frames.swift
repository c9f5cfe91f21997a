import ListTapeLog
import ListTapeModel
import ListTapeStore

/// Where a fold starts: the log's checkpoints (`LogStart`) and the index file's seek
/// points, and decoders positioned between events.
extension Timeline {
  /// What the log alone offers a fold to start from.
  var logStart: LogStart { LogStart(reader: reader, path: path, readsSites: readsSites) }

  /// The decoder state right after event `n` (2.0: through the index file's dictionary
  /// when it has one for that segment, else the segment's definitions read from the log).
  package func decoder(after n: Int) throws(StoreError) -> EventDecoder {
    if formatMajor >= 2, n > 0, let fast = try indexedFrameDecoder(before: n + 1) { return fast }
    return try logStart.decoder(after: n)
  }

  /// The latest state folding at most `n` events that a seek can start from, loaded, with
  /// a decoder standing right after its event: 2.0, the index file's seek point when it is
  /// as near as the log's own checkpoint.
  package func checkpoint(atOrBefore n: Int) throws(StoreError) -> LoadedCheckpoint? {
    if formatMajor >= 2 {
      let inLog = reader.checkpointSeq(atOrBefore: UInt64(n)).map { Int($0) } ?? 0
      if let point = indexSeekSeq(atOrBefore: n), point >= inLog {
        do {
          if let loaded = try indexCheckpoint(atOrBefore: n) { return loaded }
        } catch {
          // Only a cache: what does not check out is dropped (and rebuilt by a later seek).
          reader.discardIndex("\(error)")
        }
      }
    }
    return try logCheckpoint(atOrBefore: n)
  }

  /// The latest checkpoint frame of the log itself (never an index seek point) folding at
  /// most `n` events: what `verify` checks against the fold, and what re-anchors a fold
  /// after a salvage gap.
  package func logCheckpoint(atOrBefore n: Int) throws(StoreError) -> LoadedCheckpoint? {
    try logStart.checkpoint(atOrBefore: n) { (seq) throws(StoreError) in
      try self.decoder(after: seq)
    }
  }
}
