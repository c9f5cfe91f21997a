import Foundation
import ListTapeLog
import ListTapeModel
import ListTapeStore

/// A read-only view of a log as a sequence of states: any event, any state, any point in
/// time. Seeks go through the nearest state the log or its index keeps, so `state(at:)`
/// never replays the whole log. Works on a log that is being recorded (it sees a complete
/// prefix).
///
/// Every read goes through one fold (`fold(_:_:from:through:…)`): the log's events decoded
/// into operation records (on a second thread for long runs) and folded with the one
/// reducer; an `Event` with its strings is made only for whoever reads it.
public final class Timeline {
  /// The log read.
  public let path: String
  package let reader: LogReader
  /// Names the log for the lineage of its dictionaries (`LogEvents.logID`).
  package let logID: UInt64
  /// 2.0: events between the seek points of an index file this timeline builds (fewer
  /// points make a smaller index and slower seeks).
  package var indexSpacing = Timeline.defaultIndexSpacing
  /// Whether a large state spaces the index's points further than `indexSpacing`
  /// (`seekPointSpacing`); tests of small spacings over large states turn it off.
  package var spacesPointsByItems = true
  /// Whether events read from this timeline carry their sites. A caller that wants states
  /// only (`show --json`) turns it off: layout 3 sites are then not decoded, and a seek
  /// from the index does not read the segment's frames for their site model.
  package var readsSites = true
  /// Told how far an index build got (events done, events in all); the CLI draws it.
  package var indexProgress: ((Int, Int) -> Void)?
  /// Whether seeks may build or extend the index file.
  package var buildsIndex = true
  /// Called once, on the first seek that folds more than `indexSpacing` events where an
  /// index could be built: a one-shot command leaves the build to a process of its own.
  package var onLongFold: (() -> Void)?
  /// Events scans passed over because they follow lost events (salvaged logs).
  package private(set) var skippedAfterGaps = 0
  /// The last state a seek started from, kept so that seeks within one interval (a
  /// bisect's last steps, a scrubber's back and forth) load it once. Copies are
  /// copy-on-write.
  private var cachedStart: LoadedCheckpoint?
  /// Set once an index could not be built here (say, a read-only directory): seeks then
  /// fold from checkpoints in the log.
  private var indexUnavailable = false
  /// Seeks that folded more than `indexSpacing` events: the second builds the index.
  private var longFolds = 0
  /// Whether the index file was checked for seek points in inexact stretches.
  private var indexCheckedForGaps = false

  /// Opens and scans a log.
  public init(path: String) throws(StoreError) {
    self.path = path
    do {
      reader = try LogReader(path: path)
    } catch {
      throw .log(error)
    }
    logID = LogEvents.logID(reader)
  }

  /// Events readable from event 1 on.
  public var eventCount: Int { Int(reader.eventCount) }

  /// Where and why reading stops before the end of the file (a torn tail or damage); nil
  /// when the whole file reads, and nil for an incomplete last frame while a recorder holds
  /// the log (a frame being written is not damage).
  public var damage: LogDamage? {
    guard let stop = reader.stop else { return nil }
    if stop.kind == .tornTail && reader.isBeingWritten { return nil }
    return stop
  }

  /// The event ranges a salvaged log lost, in order; states after a gap are exact only from
  /// the next checkpoint on.
  public var gaps: [LogGap] { reader.gaps }

  /// Writes a new log at `output` holding every readable frame of the damaged log at
  /// `path`, with each lost range recorded; returns what was kept and lost.
  public static func salvage(_ path: String, to output: String) throws(StoreError)
    -> SalvageReport
  {
    do {
      return try LogReader.salvage(from: path, to: output, segments: segment(ofPayload:_:))
    } catch {
      throw .log(error)
    }
  }

  /// The segment a 2.0 event frame's or checkpoint's payload belongs to (salvage asks, to
  /// notice a dictionary frame lost without any event).
  static func segment(ofPayload checkpoint: Bool, _ payload: UnsafeRawBufferPointer) -> UInt64? {
    checkpoint
      ? (try? ListState.compactHeader(payload))?.segment
      : FrameLayout.segment(ofEventFrame: payload)
  }

  /// Size of the file in bytes.
  package var fileBytes: Int { Int(reader.fileSize) }

  /// The log's format major version (1 or 2).
  package var formatMajor: Int { Int(reader.formatVersion.major) }

  /// Picks up events a live recorder appended since; returns how many arrived.
  @discardableResult
  package func refresh() throws(StoreError) -> Int {
    do {
      return Int(try reader.refresh())
    } catch {
      throw .log(error)
    }
  }

  /// A decoder for the start of this log (event 1, the first segment's empty dictionary).
  package func startDecoder() -> EventDecoder { logStart.startDecoder() }

  // MARK: The fold

  /// Events between two progress reports of a long fold.
  package static let progressInterval = 65_536

  /// Folds events `from...through` onto `state` (the state after event `from - 1`, with
  /// `decoder` standing there: `seek(to:)` gives both) and calls `body` after each event
  /// with the records it was read as, its index, its fault (nil when it applied) and the
  /// state after it, read in place; `body` returns false to stop there. The event itself
  /// is `ops.event(i, state.ids)`, made only by who wants it. Every read of a log goes
  /// through here.
  ///
  /// Long runs are read, inflated and decoded on a second thread while `body` runs on this
  /// one (unless `readAhead` is false: many logs searched at once, one per core), so
  /// callbacks must not use the timeline. Without `applying`, the state only
  /// follows the log's ids (a listing of events, which needs their text but no state).
  /// With `frames` (2.0), `onFrame` hears of each frame read to its end, and of each
  /// dictionary restart, with the state after it. `before` sees each event with the state
  /// it is about to be applied to (in place, not copied: it must not change it).
  /// `beforeIds` sees the state before its ids take another numbering (a dictionary
  /// restart, a recovery point's state), while the old one still reads. `progress` gets
  /// `(event, through)` now and then. `decoder` ends standing right after the last event
  /// folded.
  ///
  /// In a salvaged log the fold re-anchors after each gap at the recovery point that
  /// restores it (the state of that point, decoded before the run that reaches it); the
  /// states between are folded without the lost events (`exactSteps` labels them).
  package func fold(
    _ state: inout ListState, _ decoder: inout EventDecoder, from: Int, through: Int,
    progress: ((Int, Int) -> Void)? = nil, applying: Bool = true, frames: Bool = false,
    readAhead: Bool = true, onFrame: (FrameEndRecord, inout ListState) -> Void = { _, _ in },
    before: ((FoldOps, Int, inout ListState) -> Void)? = nil,
    beforeIds: ((ListState) -> Void)? = nil,
    _ body: (FoldOps, Int, ListFault?, inout ListState) -> Bool
  ) throws(StoreError) {
    let options = FoldOptions(
      progress: progress, applying: applying, frames: frames, readAhead: readAhead,
      beforeIds: beforeIds)
    let first = max(from, 1)
    let last = min(through, eventCount)
    guard first <= last else { return }
    let points = anchors(from: first, through: last)
    guard !points.isEmpty else {
      _ = try foldRun(&state, &decoder, first, last, options, onFrame, before, body, restore: nil)
      return
    }
    var lo = first
    for point in points {
      guard let restored = try logCheckpoint(atOrBefore: point), restored.seq == point else {
        throw .log(LogError(.damaged, path: path, message: "no checkpoint after event \(point)"))
      }
      let go = try foldRun(
        &state, &decoder, lo, point, options, onFrame, before, body, restore: restored)
      if !go { return }
      beforeIds?(state)
      state = restored.state
      decoder = restored.decoder
      lo = point + 1
    }
    _ = try foldRun(&state, &decoder, lo, last, options, onFrame, before, body, restore: nil)
  }

  /// How `fold` goes about it (its arguments, passed on to each run).
  private struct FoldOptions {
    var progress: ((Int, Int) -> Void)?
    var applying: Bool
    var frames: Bool
    var readAhead: Bool
    var beforeIds: ((ListState) -> Void)?
  }

  /// One run of `fold` without re-anchoring; with `restore`, the state becomes that point's
  /// when the fold reaches it (its event, or the end of its frame when its event was lost).
  /// Returns false when `body` stopped.
  private func foldRun(
    _ state: inout ListState, _ decoder: inout EventDecoder, _ first: Int, _ last: Int,
    _ options: FoldOptions, _ onFrame: (FrameEndRecord, inout ListState) -> Void,
    _ before: ((FoldOps, Int, inout ListState) -> Void)?,
    _ body: (FoldOps, Int, ListFault?, inout ListState) -> Bool,
    restore: LoadedCheckpoint?
  ) throws(StoreError) -> Bool {
    guard first <= last else { return true }
    let beforeIds = options.beforeIds
    beforeIds?(state)
    try align(&state, &decoder)
    var failure: StoreError?
    var stoppedAt: Int?
    var restored = restore == nil
    let path = self.path
    let applying = options.applying
    let progress = options.progress
    func foldChunk(_ chunk: inout FoldOps) -> Bool {
      // Read through a local copy sharing the chunk's arrays: each call on the inout
      // parameter copied its 152 bytes first, several times per record.
      var ops = chunk
      for i in 0..<ops.count {
        let seq = ops.seqs[i]
        var fault: ListFault?
        do throws(CodecError) {
          // The record's kind first: binding a closure retains its context, once per
          // record otherwise.
          if ops.isEvent(i), let before {
            try state.follow(ops, i)
            before(ops, i, &state)
          }
          if ops.isRestart(i), let beforeIds { beforeIds(state) }
          if applying { fault = try state.apply(ops, i) } else { try state.follow(ops, i) }
        } catch {
          failure = .undecodableEvent(event: seq, error, path: path)
          return false
        }
        if ops.isFrameEnd(i), let end = ops.frameEnd(i) {
          if !restored, let restore, end.lastSeq >= restore.seq {
            beforeIds?(state)
            state = restore.state
            restored = true
          }
          onFrame(end, &state)
          continue
        }
        guard ops.isEvent(i) else { continue }
        if !restored, let restore, seq == restore.seq {
          // The point's event is read with the ids of the state it was folded onto.
          ops.keepEvent(i, state.ids)
          beforeIds?(state)
          state = restore.state
          restored = true
        }
        if let progress, seq % Self.progressInterval == 0 { progress(seq, last) }
        if !body(ops, i, fault, &state) {
          stoppedAt = seq
          return false
        }
      }
      return true
    }
    // A run ending at a recovery point also reads the frame that ends there.
    let wantsFrames = options.frames || restore != nil
    var ahead: ReadAhead?
    if options.readAhead && last - first >= ReadAhead.minimumEvents {
      // Handed over, not shared (see `ReadAhead.init`).
      var handed = startDecoder()
      swap(&handed, &decoder)
      let started = ReadAhead(
        reader: reader, path: path, from: first, through: last, decoder: consume handed,
        frames: wantsFrames)
      if started.isRunning { ahead = started } else { decoder = started.decoder }
    }
    if let ahead {
      defer { skippedAfterGaps += ahead.skipped }
      try ahead.consume(foldChunk)
      if let failure { throw failure }
      decoder = ahead.decoder
    } else {
      var ops = FoldOps()
      var skipped = 0
      defer { skippedAfterGaps += skipped }
      func skip(_ k: Int) { skipped += k }
      try LogEvents.decode(
        reader, path: path, decoder: &decoder, from: first, through: last, ops: &ops,
        frames: wantsFrames, skipped: skip
      ) { chunk in
        defer { chunk.removeAll() }
        return foldChunk(&chunk)
      }
      if let failure { throw failure }
    }
    if let stoppedAt {
      // The decoder read past the stop: position one there again.
      decoder = try self.decoder(after: stoppedAt)
      return false
    }
    return true
  }

  /// Makes `state` and `decoder` number ids alike before a fold: a 2.0 state takes the
  /// decoder's dictionary (at once when it holds nothing, else renumbering its ids into
  /// it); a 1.0 decoder takes the state's ids as its numbering.
  private func align(_ state: inout ListState, _ decoder: inout EventDecoder) throws(StoreError) {
    if formatMajor < 2 {
      state.shareIDs(with: &decoder)
      return
    }
    do {
      try state.adopt(decoder.dictionary, aliases: decoder.aliases)
    } catch {
      throw .undecodableDictionary(event: Int(decoder.segment), error, path: path)
    }
  }

  // MARK: Seeks

  /// The state after events 1...n (n = 0 is empty); faults are skipped as the reducer does.
  /// - Complexity: one state load plus a fold of at most one seek spacing.
  package func state(at n: Int) throws(StoreError) -> ListState {
    try seek(to: n).state
  }

  /// The state after event `n` and a decoder standing right after it. With `cache`, the
  /// state the seek started from is kept for the next seek into the same interval (worth it
  /// for many nearby seeks; a lone seek would pay for a copy it never uses).
  package func seek(to n: Int, cache: Bool = false) throws(StoreError) -> (
    state: ListState, decoder: EventDecoder
  ) {
    guard n >= 0 && n <= eventCount else {
      throw .eventOutOfRange(n, lowest: 0, last: eventCount, path: path)
    }
    ensureIndex(near: n)
    // A salvaged log: never from a checkpoint inside a stretch of inexact states.
    let bound = seekBound(for: n)
    var state = ListState()
    var decoder = startDecoder()
    var start = 1
    let nearest = checkpointSeq(atOrBefore: bound)
    if nearest > 0, let cached = cachedStart, cached.seq == nearest {
      (state, decoder, start) = (cached.state, cached.decoder, cached.seq + 1)
    } else if let cp = try checkpoint(atOrBefore: bound) {
      (state, decoder, start) = (cp.state, cp.decoder, cp.seq + 1)
      if cache { cachedStart = cp }
    }
    if n - start > indexSpacing {
      longFolds += 1
      if longFolds == 1, formatMajor >= 2, buildsIndex, !indexUnavailable { onLongFold?() }
    }
    try fold(&state, &decoder, from: start, through: n) { _, _, _, _ in true }
    return (state, decoder)
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
    guard eager || longFolds > 0 else { return }
    do {
      try buildIndex()
    } catch {
      indexUnavailable = true
    }
  }

  /// Drops an index file whose seek points fall where states are not the recorded ones
  /// (built across a salvage gap by an older version), once.
  func checkIndexForGaps() {
    guard !indexCheckedForGaps, let index = reader.index else { return }
    indexCheckedForGaps = true
    if hasInexactSeekPoints(index) {
      reader.discardIndex("seek points between a gap and the point that restores it")
    }
  }

  // MARK: Events

  /// Calls `body(n, event)` for events `from...through` in order; `body` returns false to
  /// stop. Memory stays bounded by a few chunks whatever the log's length. Events a salvaged
  /// log cannot decode after a gap are skipped (`skippedAfterGaps`).
  public func forEachEvent(
    from: Int = 1, through: Int = .max, _ body: (Int, Event) -> Bool
  ) throws(StoreError) {
    let start = max(from, 1)
    guard start <= min(through, eventCount) else { return }
    var (state, decoder) = try ids(before: start)
    try fold(&state, &decoder, from: start, through: through, applying: false) {
      ops, i, _, s in
      body(ops.seqs[i], ops.event(i, s.ids))
    }
  }

  /// Calls `body(n, event)` for events `from...through` in order, read with `decoder` (which
  /// must stand after event `from - 1`) and numbering ids as `ids` does (a state that only
  /// follows the log's ids: start with an empty one and keep both for the next call).
  package func forEachEvent(
    from: Int, through: Int, ids: inout ListState, decoder: inout EventDecoder,
    _ body: (Int, Event) -> Bool
  ) throws(StoreError) {
    try fold(&ids, &decoder, from: from, through: through, applying: false) { ops, i, _, s in
      body(ops.seqs[i], ops.event(i, s.ids))
    }
  }

  /// Calls `body` with the raw records `from...through` of a 1.0 log, in windows so that a
  /// `false` from `body` stops the read without inflating the rest of the log.
  package func rawRecords(
    from: Int, through: Int, _ body: (Int, UnsafeRawBufferPointer) throws(StoreError) -> Bool
  ) throws(StoreError) {
    var skipped = 0
    defer { skippedAfterGaps += skipped }
    try LogEvents.rawRecords(
      reader, max(from, 1), min(through, eventCount), { skipped += $0 }, body)
  }

  /// An empty state and a decoder standing before event `from`: the fold gives the state
  /// the log's ids as they stand there (a listing of events needs their text, not the
  /// list).
  func ids(before from: Int) throws(StoreError) -> (ListState, EventDecoder) {
    (ListState(), try decoder(after: from - 1))
  }

  /// One event. - Complexity: one decoder positioning plus a decode of one frame.
  public func event(_ n: Int) throws(StoreError) -> Event {
    guard n >= 1 && n <= eventCount else {
      throw .eventOutOfRange(n, lowest: 1, last: eventCount, path: path)
    }
    var found: Event?
    let skipped = skippedAfterGaps
    try forEachEvent(from: n, through: n) { _, event in
      found = event
      return false
    }
    guard let found else {
      // Scans pass over events after a salvaged gap; a lone read must say why it has none.
      if skippedAfterGaps > skipped {
        throw .afterGap(event: n, decodableFrom: decodable(after: n), path: path)
      }
      throw .log(LogError(.damaged, path: path, message: "event \(n) could not be read"))
    }
    return found
  }

  /// The first event after `n` known to decode in a salvaged log: 1.0, the next reset
  /// point; 2.0, the next dictionary restart (events before it decode only when they name
  /// no lost entry), else the end of the log.
  private func decodable(after n: Int) -> Int {
    guard formatMajor >= 2 else {
      return EventCodecLayout.resetPoint(atOrBefore: n) + EventCodecLayout.resetInterval
    }
    return reader.restartSeq(after: UInt64(n)).map { Int($0) } ?? eventCount + 1
  }

  /// Folds events `from...through` onto the state before `from` (a seek there) and calls
  /// `body` after each as `fold` does; returns the state and the last event folded.
  package func forEachState(
    from: Int = 1, through n: Int = .max, progress: ((Int, Int) -> Void)? = nil,
    _ body: (FoldOps, Int, ListFault?, inout ListState) -> Bool
  ) throws(StoreError) -> (state: ListState, stoppedAt: Int) {
    let last = min(n, eventCount)
    let first = max(from, 1)
    guard first <= last else {
      let stop = max(min(first - 1, last), 0)
      return (try state(at: stop), stop)
    }
    var (state, decoder) = try seek(to: first - 1)
    var done = first - 1
    try fold(&state, &decoder, from: first, through: last, progress: progress) { ops, i, f, s in
      done = ops.seqs[i]
      return body(ops, i, f, &s)
    }
    progress?(done, last)
    return (state, done)
  }

  /// Folds events 1...n from the start, reporting each fault; `onFault` returns false to
  /// stop there. Returns the state and the last event folded.
  package func replay(
    through n: Int, progress: ((Int, Int) -> Void)? = nil,
    onFault: (Int, Event, ListFault) -> Bool
  ) throws(StoreError) -> (state: ListState, stoppedAt: Int) {
    let last = min(n, eventCount)
    var state = ListState()
    var decoder = startDecoder()
    var done = 0
    try fold(&state, &decoder, from: 1, through: last, progress: progress) { ops, i, fault, s in
      done = ops.seqs[i]
      guard let fault else { return true }
      return onFault(done, ops.event(i, s.ids), fault)
    }
    progress?(done, last)
    return (state, done)
  }
}

extension Timeline {
  /// Number of checkpoints the log holds (in its frames).
  package var checkpointCount: Int { reader.checkpointCount }

  /// Event numbers of the states a seek starts from, in order: the log's checkpoints and,
  /// for a 2.0 log, its index file's seek points (asking means many seeks will follow, so
  /// the index is built first if it is missing and the log is long).
  package var checkpointSeqs: [Int] {
    ensureIndex(near: eventCount, eager: true)
    let inLog = reader.checkpointSeqs.map { Int($0) }
    guard let index = reader.index else { return inLog }
    return Array(Set(inLog + index.seekPoints.map { Int($0.seq) })).sorted()
  }

  /// The latest checkpoint or seek point at or before event `n` (0 when none: the empty
  /// state).
  package func checkpointSeq(atOrBefore n: Int) -> Int {
    guard n >= 1 else { return 0 }
    let inLog = reader.checkpointSeq(atOrBefore: UInt64(n)).map { Int($0) } ?? 0
    return max(inLog, indexSeekSeq(atOrBefore: n) ?? 0)
  }
}
