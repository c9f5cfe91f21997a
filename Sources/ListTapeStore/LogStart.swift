import ListTapeLog
import ListTapeModel

/// A loaded state to fold on from: the state after event `seq`, and a decoder standing
/// right after that event.
package struct LoadedCheckpoint {
  package var seq: Int
  package var state: ListState
  package var decoder: EventDecoder
  /// 1.0: the event codec's running time stored with the state (2.0 frames need none).
  package var lastTime: Int64?

  package init(seq: Int, state: ListState, decoder: EventDecoder, lastTime: Int64?) {
    self.seq = seq
    self.state = state
    self.decoder = decoder
    self.lastTime = lastTime
  }
}

/// Where a fold of a log can start from the log alone (no index file): its checkpoints,
/// and decoders positioned between its events. A reader adds its index's seek points on
/// top (`Timeline`); a recorder that reopens a log needs only these.
package struct LogStart {
  package let reader: LogReader
  package let path: String
  package let logID: UInt64
  /// Whether its decoders read events' sites (`SiteSync.enabled`).
  package var readsSites = true

  package init(reader: LogReader, path: String, readsSites: Bool = true) {
    self.reader = reader
    self.path = path
    self.readsSites = readsSites
    logID = LogEvents.logID(reader)
  }

  /// A decoder for the log's first event.
  package func startDecoder() -> EventDecoder {
    var decoder = EventDecoder(logID: logID)
    decoder.sites.enabled = readsSites
    return decoder
  }

  /// The decoder state right after event `n`. 1.0: decoded (not folded) from the reset
  /// point at or before it, at most `EventCodecLayout.resetInterval` records. 2.0: the
  /// dictionary the frame holding event `n + 1` needs, read from its segment's restart (or
  /// the log's start) through the frames before it.
  package func decoder(after n: Int) throws(StoreError) -> EventDecoder {
    guard n > 0 else { return startDecoder() }
    var decoder = startDecoder()
    if reader.formatVersion.major >= 2 {
      let restart = reader.restart(atOrBefore: UInt64(n + 1))
      let from = restart?.seq ?? 1
      let start = restart?.offset ?? reader.firstFrameOffset
      try absorbDefinitions(&decoder, from: Int(from), through: n, start: start)
      return decoder
    }
    let first = EventCodecLayout.resetPoint(atOrBefore: n)
    let path = self.path
    var skipped = 0
    func skip(_ k: Int) { skipped += k }
    var ops = FoldOps()
    try LogEvents.rawRecords(reader, first, n, skip) { (seq, bytes) throws(StoreError) in
      try LogEvents.decode1(&decoder, bytes, seq, path: path, into: &ops)
      ops.removeAll()
      return true
    }
    return decoder
  }

  /// Reads dictionary restarts and the definitions of event frames `from...through` into
  /// `decoder` (starting at frame offset `start`), without decoding events. A run of at
  /// least `aheadFrom` events has its frames read and inflated on a second thread while
  /// this one enters definitions.
  package func absorbDefinitions(
    _ decoder: inout EventDecoder, from: Int, through: Int, start: UInt64,
    aheadFrom: Int = FramesAhead.minimumEvents
  ) throws(StoreError) {
    // Only the definitions of an event frame are read, so it is inflated only through
    // them (its payload checksum, over the compressed bytes, is still checked).
    let prefix = FramePrefix(head: EventDecoder.definitionsHead) {
      EventDecoder.definitionsEnd(ofFrame: $0)
    }
    if through - from >= aheadFrom,
      let ahead = FramesAhead(
        reader: reader, from: from, through: through, start: start, prefix: prefix)
    {
      var failure: StoreError?
      do {
        try ahead.consume { frame in
          frame.payload.withUnsafeBytes { payload in
            failure = absorb(
              &decoder, frame.kind, payload, seq: frame.firstSeq, count: frame.eventCount)
          }
          return failure == nil
        }
      } catch {
        throw .log(error)
      }
      if let failure { throw failure }
      return
    }
    var failure: StoreError?
    do {
      try reader.forEachFrame(
        from: UInt64(from), through: UInt64(max(through, 0)), start: start, eventPrefix: prefix
      ) { view in
        failure = absorb(
          &decoder, view.kind, view.payload, seq: Int(view.firstSeq), count: view.eventCount)
        return failure == nil
      }
    } catch {
      throw .log(error)
    }
    if let failure { throw failure }
  }

  /// Enters one frame's definitions (or its dictionary restart) into `decoder`; the error
  /// it meets, or nil.
  private func absorb(
    _ decoder: inout EventDecoder, _ kind: FrameView.Kind, _ payload: UnsafeRawBufferPointer,
    seq: Int, count: Int
  ) -> StoreError? {
    do throws(CodecError) {
      switch kind {
      case .dictionary:
        try decoder.restart(payload, seq: seq)
        Self.makeRoom(&decoder)
      case .events:
        let before = decoder.dictionary.count
        _ = try decoder.skipFrame(
          payload, firstSeq: seq, count: count, prefix: true, acrossGaps: !reader.gaps.isEmpty)
        if before == 0 { Self.makeRoom(&decoder) }
      case .checkpoint: break
      }
    } catch {
      return kind == .dictionary
        ? .undecodableDictionary(event: seq, error, path: path)
        : .undecodableEvent(event: error.event ?? seq, error, path: path)
    }
    return nil
  }

  /// Makes room in a dictionary just begun (a restart, or a segment's first frame) for as
  /// many entries as a writer lets a segment reach (about twice the live ids, which a
  /// restart lists, plus 4,096), so that reading the rest of its definitions does not copy
  /// it at every doubling (each copy also touches new pages in a fresh process). The bytes
  /// reserved stay within three times those read plus 1 MiB, whatever long ids a hostile
  /// log makes the average.
  private static func makeRoom(_ decoder: inout EventDecoder) {
    let n = decoder.dictionary.count
    guard n >= 1_024 else { return }
    let entries = 2 &* n &+ 4_096
    let stored = decoder.dictionary.bytes.count
    let bytes = min(entries &* (stored / n &+ 1), 3 &* stored &+ (1 << 20))
    decoder.reserveDictionary(entries: entries, bytes: bytes)
  }

  /// The latest checkpoint frame of the log folding at most `n` events, loaded, with a
  /// decoder standing right after its event (2.0: against its segment's dictionary, given
  /// by `decoder(before:)`, which defaults to reading the segment's definitions).
  package func checkpoint(
    atOrBefore n: Int, decoder positioned: ((Int) throws(StoreError) -> EventDecoder)? = nil
  ) throws(StoreError) -> LoadedCheckpoint? {
    guard reader.formatVersion.major >= 2 else { return try checkpoint1(atOrBefore: n) }
    guard let mark = reader.checkpointMark(atOrBefore: UInt64(n)) else { return nil }
    let seq = Int(mark.seq)
    var decoder: EventDecoder
    if let positioned {
      decoder = try positioned(seq)
    } else {
      decoder = try self.decoder(after: seq)
    }
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

  private func checkpoint1(atOrBefore n: Int) throws(StoreError) -> LoadedCheckpoint? {
    let found: (seq: UInt64, state: [UInt8])?
    do {
      found = try reader.checkpoint(atOrBefore: UInt64(n))
    } catch {
      throw .log(error)
    }
    guard let found else { return nil }
    let checkpoint: Checkpoint
    do {
      checkpoint = try Checkpoint(decoding: found.state)
    } catch {
      throw .undecodableCheckpoint(event: Int(found.seq), error, path: path)
    }
    let seq = Int(found.seq)
    return LoadedCheckpoint(
      seq: seq, state: checkpoint.state, decoder: try decoder(after: seq),
      lastTime: checkpoint.lastTime)
  }

  /// Folds events `from...through` onto `state` on this thread (a recorder reopening a
  /// log: at most one checkpoint interval), calling `each` with every event number.
  package func fold(
    _ state: inout ListState, _ decoder: inout EventDecoder, from: Int, through: Int,
    _ each: (Int) -> Void = { _ in }
  ) throws(StoreError) {
    if reader.formatVersion.major >= 2 {
      do {
        try state.adopt(decoder.dictionary, aliases: decoder.aliases)
      } catch {
        throw .undecodableDictionary(event: Int(decoder.segment), error, path: path)
      }
    } else {
      state.shareIDs(with: &decoder)
    }
    var ops = FoldOps()
    var failure: StoreError?
    let path = self.path
    func skip(_: Int) {}
    try LogEvents.decode(
      reader, path: path, decoder: &decoder, from: from, through: through, ops: &ops,
      skipped: skip
    ) { chunk in
      defer { chunk.removeAll() }
      for i in 0..<chunk.count {
        do throws(CodecError) {
          _ = try state.apply(chunk, i)
        } catch {
          failure = .undecodableEvent(event: chunk.seqs[i], error, path: path)
          return false
        }
        if chunk.isEvent(i) { each(chunk.seqs[i]) }
      }
      return true
    }
    if let failure { throw failure }
  }
}
