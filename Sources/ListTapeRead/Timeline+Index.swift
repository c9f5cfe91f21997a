import Foundation
import ListTapeLog
import ListTapeModel
import ListTapeStore

/// Seeks in a 2.0 log through its index file (`LogIndex`): states every `indexSpacing`
/// events, kept next to the log, built by the first seek that needs them and extended as
/// the log grows. The index is only a cache: without it (or when it cannot be written)
/// every read and seek still works, from the log's own checkpoints.
extension Timeline {
  /// Events between seek points: a seek folds half of it on average (docs/log-format.md).
  static let defaultIndexSpacing = 49_152

  /// Events from one seek point to the next: `base`, or half the state's items when
  /// that is more. A point costs the build in proportion to the items it stores, and a seek
  /// loads one before it folds, so a larger state spaces its points in step: the build's
  /// share stays bounded and a seek's fold stays near its load's cost (docs/log-format.md).
  package static func seekPointSpacing(_ base: Int, items: Int) -> Int {
    max(base, items / 2)
  }

  /// What became of the log's index file when the log was opened (2.0 logs).
  package var indexStatus: IndexStatus { reader.indexStatus }

  /// Size of the index file in use, if any.
  package var indexBytes: Int? { reader.index.map { Int($0.fileSize) } }

  /// The index file's latest seek point at or before event `n`.
  func indexSeekSeq(atOrBefore n: Int) -> Int? {
    reader.index?.seekPoint(atOrBefore: UInt64(max(n, 0))).map { Int($0.seq) }
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
      throw .log(error)
    }
    var state = ListState()
    // The build reads sites (whatever this timeline's callers want): each seek point keeps
    // the site model its frames go on with.
    var decoder = startDecoder()
    decoder.sites.enabled = true
    var from = 1
    // A salvaged log: no seek point where the fold is not the recorded state (between a gap
    // and the point that restores it), so no seek starts from one (Timeline+Anchors).
    var build = IndexBuild(
      builder: builder, spacing: indexSpacing, byItems: spacesPointsByItems, steps: exactSteps,
      path: path, lastPoint: 0)
    if let old, let start {
      guard let resumed = try indexCheckpoint(atOrBefore: Int(start.seq)) else {
        throw .undecodableIndex(
          event: Int(start.seq), CodecError("no such seek point", offset: 0), path: old.path)
      }
      state = resumed.state
      decoder = resumed.decoder
      build.segment = start.segment
      from = Int(start.seq) + 1
      // The segment being extended: its entries so far come from the old index.
      do {
        (build.stored, build.ends) = try old.dictionary(at: start)
        build.written = build.ends.count
      } catch {
        throw .log(error)
      }
    }
    build.lastPoint = from - 1
    let total = eventCount
    // A failure stops the fold at the next progress step (the frames meanwhile do nothing),
    // and is the one told, whatever the fold met after it.
    do {
      try fold(
        &state, &decoder, from: from, through: total, frames: true,
        onFrame: { end, state in build.frameEnded(end, &state) },
        { ops, i, _, _ in
          let seq = ops.seqs[i]
          guard seq & 0xFFFF == 0 else { return true }
          indexProgress?(seq, total)
          return build.failure == nil
        })
    } catch {
      throw build.failure ?? error
    }
    if let failure = build.failure { throw failure }
    do {
      try builder.addSegment(key: build.segment, stored: build.stored, ends: build.ends)
    } catch {
      throw .log(error)
    }
    do {
      reader.adopt(try builder.finish(reader: reader))
    } catch {
      throw .log(error)
    }
    indexProgress?(total, total)
  }

  /// The state at the index file's latest seek point at or before event `n`, with a
  /// decoder holding that point's segment dictionary (read in one piece from the index).
  /// The dictionary is read and decoded on another thread while this one inflates the
  /// state and reads its items, which need only its size until their end.
  func indexCheckpoint(atOrBefore n: Int) throws(StoreError) -> LoadedCheckpoint? {
    guard let index = reader.index, let p = index.seekPoint(atOrBefore: UInt64(max(n, 0))) else {
      return nil
    }
    var decoder = startDecoder()
    // The lineage the decoder gives the dictionary: the state's ids and the decoder's are
    // then one numbering (the fold adopts the decoder's without renumbering).
    let dictionary = DictionaryRead(
      index, p, lineage: EventDecoder.lineage(log: decoder.logID, segment: p.segment))
    let count = index.dictionaryCount(at: p)
    let promised = CompactIDs(count: count) { () throws(CodecError) in
      switch dictionary.wait() {
      case .success(let ids): return ids
      case .failure: throw CodecError("the index dictionary does not read", offset: 0)
      }
    }
    let decoded: Result<ListState, CodecError>
    do {
      decoded = try index.loadState(at: p, ids: promised)
    } catch {
      _ = dictionary.wait()
      throw .log(error)
    }
    // The dictionary's own failure is the one to tell (the state's load reports only that
    // the dictionary did not come).
    let ids: IdSpace
    switch dictionary.wait() {
    case .success(let read): ids = read
    case .failure(let error): throw .log(error)
    }
    let state: ListState
    do {
      state = try decoded.get()
    } catch {
      throw .undecodableIndex(event: Int(p.seq), error, path: index.path)
    }
    decoder.load(
      ids, aliases: DefinitionAliases(vetted: ids.count, map: [:]),
      segment: p.segment, defined: p.dictionaryCount, before: Int(p.seq) + 1)
    try catchUpSites(&decoder, after: p)
    return LoadedCheckpoint(seq: Int(p.seq), state: state, decoder: decoder, lastTime: nil)
  }

  /// Gives a decoder loaded at seek point `p` the site model of the frames before it, when
  /// the frame after the point codes its sites against one (layout 3): the model the index
  /// stores with the point, else (an index written before its models, or one that does not
  /// check out) the segment's frames up to the point read for it, as a seek without an
  /// index reads them (docs/log-format.md, "Sites").
  private func catchUpSites(_ decoder: inout EventDecoder, after p: IndexSeekPoint)
    throws(StoreError)
  {
    guard decoder.sites.enabled else { return }
    // The model stored with the point (only frames that need one leave one to store).
    if let index = reader.index {
      do {
        if let stored = try index.siteModel(at: p) {
          let sites = try stored.withUnsafeBytes { raw throws(CodecError) in
            try SiteSync(stored: raw, entries: p.dictionaryCount)
          }
          if sites.segment == p.segment {
            decoder.sites = sites
            return
          }
        }
      } catch {
        // A model that does not check out: the frames give it.
      }
    }
    // None stored: the frame after the point says whether it needs one.
    var needed = false
    let head = FramePrefix(head: EventDecoder.definitionsHead) { _ in EventDecoder.definitionsHead }
    do {
      try reader.forEachFrame(
        from: p.seq + 1, through: p.seq + 1, start: p.frameOffset, eventPrefix: head
      ) { view in
        if view.kind == .events { needed = EventDecoder.needsSiteModel(ofFrame: view.payload) }
        return view.kind != .events
      }
    } catch {
      throw .log(error)
    }
    guard needed else { return }
    // Sites only: the dictionary is the index's, so the frames' definitions are not read.
    let restart = reader.restart(atOrBefore: p.seq + 1)
    var walker = startDecoder()
    var failure: CodecError?
    var failedAt = 0
    do {
      try reader.forEachFrame(
        from: restart?.seq ?? 1, through: p.seq, start: restart?.offset ?? reader.firstFrameOffset
      ) { view in
        guard view.kind == .events else { return true }
        do throws(CodecError) {
          try walker.skipSites(ofFrame: view.payload)
          return true
        } catch {
          (failure, failedAt) = (error, Int(view.firstSeq))
          return false
        }
      }
    } catch {
      throw .log(error)
    }
    if let failure {
      throw .undecodableEvent(event: failure.event ?? failedAt, failure, path: path)
    }
    decoder.sites = walker.sites
  }

  /// A decoder standing after seek point `p`, holding its segment's dictionary as far as
  /// the index covers it (every entry of it checked when the index was built).
  private func indexDecoder(_ index: LogIndex, _ p: IndexSeekPoint) throws(LogError)
    -> EventDecoder
  {
    let (stored, ends) = try index.dictionary(at: p)
    let dictionary: IdSpace
    do {
      dictionary = try IdSpace(stored: stored, ends: ends)
    } catch {
      throw LogError(.damaged, path: index.path, message: "index dictionary: \(error)")
    }
    var decoder = startDecoder()
    decoder.load(
      dictionary, aliases: DefinitionAliases(vetted: dictionary.count, map: [:]),
      segment: p.segment, defined: p.dictionaryCount, before: Int(p.seq) + 1)
    return decoder
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
    var decoder: EventDecoder
    do {
      decoder = try indexDecoder(index, p)
    } catch {
      reader.discardIndex("\(error)")
      return nil
    }
    try catchUpSites(&decoder, after: p)
    try logStart.absorbDefinitions(
      &decoder, from: Int(p.seq) + 1, through: seq - 1, start: p.frameOffset)
    return decoder
  }
}

/// A seek point's dictionary read, decoded and checked on another thread
/// (`LogIndex.dictionary(at:)`, which reads apart from the index's read window), waited
/// for once or many times.
private final class DictionaryRead: @unchecked Sendable {
  private var result: Result<IdSpace, LogError> = .failure(LogError(.io, path: "", message: ""))
  private let done = DispatchSemaphore(value: 0)
  private var finished = false

  init(_ index: LogIndex, _ p: IndexSeekPoint, lineage: UInt64) {
    // The thread reads the file apart from the index's read window (see
    // `LogIndex.dictionary(segment:)`) and touches nothing else of it.
    nonisolated(unsafe) let index = index
    DispatchQueue.global(qos: .userInitiated).async {
      self.result = Result { () throws(LogError) in
        let (stored, ends) = try index.dictionary(at: p)
        do {
          return try IdSpace(stored: stored, ends: ends, lineage: lineage)
        } catch {
          throw LogError(.damaged, path: index.path, message: "index dictionary: \(error)")
        }
      }
      self.done.signal()
    }
  }

  /// The dictionary, or why it does not read; waits for the thread the first time.
  func wait() -> Result<IdSpace, LogError> {
    if !finished {
      done.wait()
      finished = true
    }
    return result
  }
}

extension LogIndex {
  /// The state stored at seek point `p`, loaded over `ids` (its segment's dictionary, which
  /// may still be decoding): a large state's last column inflates on another thread while
  /// the rest is read. Throws when the stored bytes do not check out (checked before the
  /// load's own failure is told, and before its state is kept); the load's failure is the
  /// result's.
  package func loadState(at p: IndexSeekPoint, ids: CompactIDs) throws(LogError) -> Result<
    ListState, CodecError
  > {
    let parts = try stateParts(at: p)
    let aliases = DefinitionAliases(vetted: dictionaryCount(at: p), map: [:])
    let decoded = parts.head.withUnsafeBytes { raw in
      Result { () throws(CodecError) in
        let head = try ListState.compactHeader(raw)
        guard head.segment == p.segment else {
          throw CodecError(
            "checkpoint of the segment before event \(head.segment) read with the dictionary "
              + "of the segment before event \(p.segment)", offset: 0)
        }
        guard let tail = parts.tail else {
          return try ListState(compact: raw, ids: ids, aliases: aliases)
        }
        return try ListState(
          compact: raw, strings: CompactStrings(count: tail.count) { tail.bytes() }, ids: ids,
          aliases: aliases)
      }
    }
    try check(parts, of: p)
    return decoded
  }
}

/// What an index build keeps from frame to frame: the segment's dictionary written so far
/// and where the last seek point was. One value the fold's callback mutates through a
/// method (a dozen variables captured by the callback were each checked for exclusive
/// access at run time, at every frame).
private struct IndexBuild {
  let builder: LogIndexBuilder
  let spacing: Int
  let byItems: Bool
  let steps: ExactSteps
  let path: String
  var lastPoint: Int
  var segment: UInt64 = 0
  /// The segment's entries written so far (its dictionary is the state's ids).
  var written = 0
  var stored: [UInt8] = []
  var ends: [UInt32] = []
  /// Whether every entry of the segment so far is known and none repeats another (the
  /// index keeps no record of repeats: a segment with one gets no seek points after it).
  var whole = true
  var failure: StoreError?

  /// Events after the last seek point before the next one is due, for `state`.
  private func due(_ state: ListState) -> Int {
    byItems ? Timeline.seekPointSpacing(spacing, items: state.numberOfAllItems) : spacing
  }

  mutating func frameEnded(_ end: FrameEndRecord, _ state: inout ListState) {
    guard failure == nil else { return }
    do throws(LogError) {
      if end.restarted || end.segment != segment {
        try builder.addSegment(key: segment, stored: stored, ends: ends)
        stored.removeAll(keepingCapacity: true)
        ends.removeAll(keepingCapacity: true)
        written = 0
        segment = end.segment
        // A segment met without its dictionary frame (a salvage lost it) has entries no
        // frame names: no seek point in it, even where a checkpoint restores the state.
        whole = end.restarted
      }
      let ids = state.ids
      let count = min(end.dictionaryCount, ids.count)
      if whole && written < count {
        let base = UInt32(truncatingIfNeeded: stored.count)
        let lo = written == 0 ? 0 : Int(ids.ends[written - 1])
        let hi = Int(ids.ends[count - 1])
        stored.append(contentsOf: ids.bytes[lo..<hi])
        for e in written..<count {
          ends.append(base &+ ids.ends[e] &- UInt32(truncatingIfNeeded: lo))
          if ids.extent(e).isEmpty { whole = false }
        }
        written = count
      }
      if !end.aliasesFree { whole = false }
      guard
        !end.restarted && end.lastSeq - lastPoint >= due(state) && whole
          && steps.stateIsExact(at: end.lastSeq)
      else { return }
      let (key, defined, seq) = (end.segment, end.dictionaryCount, end.lastSeq)
      if let sites = end.sites?.stored { try builder.addSiteModel(seq: UInt64(seq), sites) }
      if ids.count <= defined {
        // Every item's entry is below `defined`: the state is copied here, then encoded
        // and compressed on another thread while the fold goes on.
        let image = CompactImage(state)
        try builder.addSeekPoint(
          seq: UInt64(seq), frameOffset: end.offset, segment: key, dictionaryCount: defined
        ) { try? image.encoded(segment: key, dictionaryCount: defined) }
      } else {
        // Encoded here, where a failure names the id.
        let encoded: (bytes: [UInt8], flushPoints: [Int])
        do throws(CodecError) {
          encoded = try state.compactEncoded(segment: key, dictionaryCount: defined)
        } catch {
          failure = .undecodableEvent(event: seq, error, path: path)
          return
        }
        try builder.addSeekPoint(
          seq: UInt64(seq), frameOffset: end.offset, segment: key, dictionaryCount: defined,
          state: encoded.bytes, flushPoints: encoded.flushPoints)
      }
      lastPoint = end.lastSeq
    } catch {
      failure = .log(error)
    }
  }
}
