import ListTapeLog
import ListTapeModel

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Seeks in a 2.0 log through its index file (`LogIndex`): states every `indexSpacing`
/// events, kept next to the log, built by the first seek that needs them and extended as
/// the log grows. The index is only a cache: without it (or when it cannot be written)
/// every read and seek still works, from the log's own checkpoints.
extension Timeline {
  /// Events between seek points: a seek folds half of it on average (docs/log-format.md).
  static let defaultIndexSpacing = 65_536

  /// What became of the log's index file when the log was opened (2.0 logs).
  package var indexStatus: IndexStatus { reader.indexStatus }

  /// Size of the index file in use, if any.
  package var indexBytes: Int? { reader.index.map { Int($0.fileSize) } }

  /// The index file's latest seek point at or before event `n`.
  func indexSeekSeq(atOrBefore n: Int) -> Int? {
    reader.index?.seekPoint(atOrBefore: UInt64(max(n, 0))).map { Int($0.seq) }
  }

  /// Builds or extends the index when a seek to `n` would fold more than one spacing from
  /// the nearest state known (and the index would gain seek points): at once when `eager`
  /// (the caller will seek many times), else from the second such seek on (one long fold
  /// costs less than the replay that builds the index). A failure leaves the log readable
  /// as it was: the index is only a cache.
  func ensureIndex(near n: Int, eager: Bool = false) {
    guard formatMajor >= 2, buildsIndex, !indexUnavailable, n > indexSpacing else { return }
    guard n - checkpointSeq(atOrBefore: n) > indexSpacing else { return }
    let last = reader.index?.seekPoints.last.map { Int($0.seq) } ?? 0
    guard eventCount - last > indexSpacing else { return }
    guard eager || longFolds > 0 else {
      longFolds += 1
      return
    }
    do {
      try buildIndex()
    } catch {
      indexUnavailable = true
    }
  }

  /// Writes the log's index file, or extends it from its last seek point: folds the log
  /// once (reading on a second thread), storing the state every `indexSpacing` events at
  /// a frame boundary, and the dictionary of each segment.
  package func buildIndex() throws(StoreError) {
    guard let old = reader.index else { return try buildIndex(extending: nil) }
    if hasInexactSeekPoints(old) {
      // Built across a salvage gap by an older version: its points after the gap cannot be
      // trusted.
      reader.discardIndex("seek points between a gap and the point that restores it")
      return try buildIndex(extending: nil)
    }
    do {
      try buildIndex(extending: old)
    } catch {
      // The old index does not read back where it is to be extended: build afresh.
      reader.discardIndex("\(error)")
      try buildIndex(extending: nil)
    }
  }

  private func buildIndex(extending old: LogIndex?) throws(StoreError) {
    let start = old?.seekPoints.last
    let builder: LogIndexBuilder
    do {
      builder = try LogIndexBuilder(reader: reader, keeping: old, through: start?.seq ?? 0)
    } catch {
      indexUnavailable = true
      throw .log(error)
    }
    var state = ListState()
    var decoder = EventDecoder()
    var table = IdTable()
    var stored: [UInt8] = []
    var ends: [UInt32] = []
    var segment: UInt64 = 0
    var from = 1
    if let old, let start {
      guard let resumed = try indexCheckpoint(atOrBefore: Int(start.seq)) else {
        throw .undecodableIndex(
          event: Int(start.seq), CodecError("no such seek point", offset: 0), path: old.path)
      }
      state = resumed.state
      decoder = resumed.decoder
      do {
        (stored, ends) = try old.dictionary(at: start)
      } catch {
        throw .log(error)
      }
      do {
        var dictionary = decoder.dictionary
        table = try IdTable(&dictionary)
      } catch {
        throw .undecodableIndex(event: Int(start.seq), error, path: old.path)
      }
      segment = start.segment
      from = Int(start.seq) + 1
    }
    var lastPoint = from - 1
    var failure: StoreError?
    let total = eventCount
    let spacing = indexSpacing
    // A salvaged log: no seek point where the fold is not the recorded state (between a gap
    // and the point that restores it), so no seek starts from one (Timeline+Anchors).
    let steps = exactSteps
    // Whether every entry of the segment so far is known: after a gap, entries defined in
    // lost frames are not, and the segment's dictionary stops at the first one (its states
    // after the gap are inexact anyway, until the next restart).
    var whole = true
    func frameEnded(_ end: FrameEnd, _ state: inout ListState) {
      guard failure == nil else { return }
      do throws(LogError) {
        if end.restarted {
          try builder.addSegment(key: segment, stored: stored, ends: ends)
          table = IdTable()
          stored.removeAll(keepingCapacity: true)
          ends.removeAll(keepingCapacity: true)
          segment = end.segment
          whole = true
        } else if ends.count + end.entries.count != end.dictionaryCount {
          whole = false
        }
        for id in end.entries where whole {
          table.add(id)
          IdDictionary.appendStored(id, to: &stored)
          ends.append(UInt32(truncatingIfNeeded: stored.count))
        }
        if !end.restarted && end.lastSeq - lastPoint >= spacing && whole
          && steps.stateIsExact(at: end.lastSeq)
        {
          let encoded: (bytes: [UInt8], flushPoints: [Int])
          do throws(CodecError) {
            encoded = try state.compactEncoded(
              segment: end.segment, dictionaryCount: end.dictionaryCount, table: table,
              lineage: end.lineage)
          } catch {
            failure = .undecodableEvent(event: end.lastSeq, error, path: path)
            return
          }
          try builder.addSeekPoint(
            seq: UInt64(end.lastSeq), frameOffset: end.nextOffset, segment: end.segment,
            dictionaryCount: end.dictionaryCount, state: encoded.bytes,
            flushPoints: encoded.flushPoints)
          lastPoint = end.lastSeq
        }
      } catch {
        failure = .log(error)
      }
    }
    try foldOps(&state, &decoder, from: from, through: total, frames: true, onFrame: frameEnded) {
      seq, _, _, _ in
      if seq & 0xFFFF == 0 { indexProgress?(seq, total) }
      return failure == nil
    }
    if let failure { throw failure }
    do {
      try builder.addSegment(key: segment, stored: stored, ends: ends)
      reader.adopt(try builder.finish(reader: reader))
    } catch {
      throw .log(error)
    }
    indexProgress?(total, total)
  }

  /// The state at the index file's latest seek point at or before event `n`, with a
  /// decoder holding that point's dictionary (read in one piece from the index).
  func indexCheckpoint(atOrBefore n: Int) throws(StoreError) -> LoadedCheckpoint? {
    guard let index = reader.index, let p = index.seekPoint(atOrBefore: UInt64(max(n, 0))) else {
      return nil
    }
    let stored: [UInt8]
    let ends: [UInt32]
    let blob: [UInt8]
    do {
      (stored, ends) = try index.dictionary(at: p)
      blob = try index.state(at: p)
    } catch {
      throw .log(error)
    }
    var decoder = EventDecoder()
    let decoded: Result<ListState, CodecError> = blob.withUnsafeBytes { raw in
      Result { () throws(CodecError) in
        decoder.load(
          try IdDictionary(stored: stored, ends: ends), segment: p.segment, before: Int(p.seq) + 1)
        return try decoder.decodeCheckpoint(raw)
      }
    }
    do {
      return LoadedCheckpoint(
        seq: Int(p.seq), state: try decoded.get(), decoder: decoder, lastTime: nil)
    } catch {
      throw .undecodableIndex(event: Int(p.seq), error, path: index.path)
    }
  }

  /// 2.0: a decoder for the frame holding event `seq` starting from the index's latest seek
  /// point in the same segment (its dictionary in one read, then the definitions of the
  /// frames after it), or nil when no such point exists.
  func indexedFrameDecoder(before seq: Int) throws(StoreError) -> EventDecoder? {
    guard let index = reader.index, seq > 1,
      let p = index.seekPoint(atOrBefore: UInt64(seq - 1))
    else { return nil }
    let restart = reader.restart(atOrBefore: UInt64(seq))?.seq ?? 0
    guard restart <= p.seq + 1 else { return nil }
    var decoder = EventDecoder()
    do {
      let (stored, ends) = try index.dictionary(at: p)
      decoder.load(
        try IdDictionary(stored: stored, ends: ends), segment: p.segment, before: Int(p.seq) + 1)
    } catch {
      reader.discardIndex("\(error)")
      return nil
    }
    try absorbDefinitions(&decoder, from: Int(p.seq) + 1, through: seq - 1, start: p.frameOffset)
    return decoder
  }
}
