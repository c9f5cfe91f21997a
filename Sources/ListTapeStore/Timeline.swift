import Foundation
import ListTapeLog
import ListTapeModel

/// A read-only view of a log as a sequence of states: any event, any state, any point in
/// time. Seeks go through the nearest checkpoint, so `state(at:)` never replays the whole
/// log. Works on a log that is being recorded (it sees a complete prefix).
public final class Timeline {
  /// The log read.
  public let path: String
  package let reader: LogReader
  /// The last checkpoint decoded, kept so that seeks within one checkpoint interval (a
  /// bisect's last steps, a scrubber's back and forth) decode it once. The copy handed out
  /// is copy-on-write.
  var cachedCheckpoint: (seq: Int, state: ListState, decoder: EventDecoder)?
  /// Events skipped by scans because they follow lost events (salvaged logs).
  package internal(set) var skippedAfterGaps = 0
  /// 2.0: events between the seek points of an index file this timeline builds (65,536 by
  /// default; fewer points make a smaller index and slower seeks).
  package var indexSpacing = Timeline.defaultIndexSpacing
  /// Told how far an index build got (events done, events in all); the CLI draws it.
  package var indexProgress: ((Int, Int) -> Void)?
  /// Set once an index could not be built here (say, a read-only directory): seeks then
  /// fold from checkpoints in the log.
  var indexUnavailable = false
  /// Whether seeks may build or extend the index file (a recorder's timeline never does).
  package var buildsIndex = true
  /// Seeks that folded more than `indexSpacing` events: the second builds the index.
  var longFolds = 0
  /// Whether the index file was checked for seek points in inexact stretches.
  var indexCheckedForGaps = false

  /// Opens and scans a log.
  public init(path: String) throws(StoreError) {
    self.path = path
    do {
      reader = try LogReader(path: path)
    } catch {
      throw .log(error)
    }
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

  /// Picks up events a live recorder appended since; returns how many arrived.
  @discardableResult
  package func refresh() throws(StoreError) -> Int {
    do {
      return Int(try reader.refresh())
    } catch {
      throw .log(error)
    }
  }

  // MARK: Events

  /// Decodes one record, naming the event number when it does not decode.
  package func decode(_ d: inout EventDecoder, _ bytes: UnsafeRawBufferPointer, _ seq: Int)
    throws(StoreError) -> Event
  {
    try Self.decode(&d, bytes, seq, path: path)
  }

  /// Decodes one record of the log at `path` (for threads that must not touch a timeline).
  static func decode(
    _ d: inout EventDecoder, _ bytes: UnsafeRawBufferPointer, _ seq: Int, path: String
  ) throws(StoreError) -> Event {
    if seq != d.expected && !EventCodecLayout.isResetPoint(seq) {
      // Events were lost before this one (a salvaged log): its back-references and time
      // delta point into them, so it cannot be decoded until the next reset point.
      let resume = EventCodecLayout.resetPoint(atOrBefore: seq) + EventCodecLayout.resetInterval
      throw .afterGap(event: seq, decodableFrom: resume, path: path)
    }
    do {
      return try d.decode(bytes, seq: seq)
    } catch {
      throw .undecodableEvent(event: seq, error, path: path)
    }
  }

  /// The decoder state right after event `n`. 1.0: decoded (not folded) from the reset
  /// point at or before it, at most `EventCodecLayout.resetInterval` records. 2.0: the
  /// dictionary the frame holding event `n + 1` needs (`frameDecoder(before:)`).
  package func decoder(after n: Int) throws(StoreError) -> EventDecoder {
    guard n > 0 else { return EventDecoder() }
    if formatMajor >= 2 { return try frameDecoder(before: n + 1) }
    var decoder = EventDecoder()
    let start = EventCodecLayout.resetPoint(atOrBefore: n)
    try scanEvents(from: start, through: n, decoder: &decoder) { _, _ in true }
    return decoder
  }

  /// Decodes events `from...through` in order on this thread with `decoder` (standing
  /// right after event `from - 1`) and calls `body` with each until it returns false.
  /// Events after a salvaged gap that cannot be decoded are skipped and counted.
  package func scanEvents(
    from: Int, through: Int, decoder: inout EventDecoder,
    onFrame: ((FrameEnd) -> Void)? = nil, _ body: (Int, Event) throws(StoreError) -> Bool
  ) throws(StoreError) {
    var skipped = 0
    defer { skippedAfterGaps += skipped }
    try LogEvents.forEach(
      reader, path: path, decoder: &decoder, from: from, through: through,
      skipped: { skipped += $0 }, onFrame: onFrame, body)
  }

  /// Calls `body` with the raw records `from...through`, in windows so that a `false` from
  /// `body` stops the read without inflating the rest of the log.
  package func scan(
    from: Int, through: Int, _ body: (Int, UnsafeRawBufferPointer) throws(StoreError) -> Bool
  ) throws(StoreError) {
    try LogEvents.rawRecords(
      reader, max(from, 1), min(through, eventCount), { skippedAfterGaps += $0 }, body)
  }

  /// Records per `LogReader.forEachRecord` call in scans and in the pipeline's producer: a
  /// stop inflates at most the rest of one window, and a window's records stay a few MiB.
  package static let recordWindow = 65_536

  /// Decodes events `from...through` in order with `decoder` and calls `body` with each;
  /// `body` returns false to stop. `decoder` ends positioned right after the last event
  /// `body` saw. Events after a salvaged gap that cannot be decoded are skipped and counted.
  ///
  /// Long runs are read, inflated and decoded on a second thread (`EventPipeline`) while
  /// `body` runs on this one; `pipelined` overrides that choice (tests). Either way `body`
  /// must not use this timeline. There, `prefetch` is called before each event with the
  /// fold hints of the events around it (`ListState.prefetch`).
  func forEachDecoded(
    from: Int, through: Int, decoder: inout EventDecoder, pipelined: Bool? = nil,
    prefetch: (UnsafeBufferPointer<FoldHint>, Int) -> Void = { _, _ in },
    frames: Bool = false, onFrame: (FrameEnd) -> Void = { _ in },
    _ body: (Int, Event) -> Bool
  ) throws(StoreError) {
    let last = min(through, eventCount)
    let first = max(from, 1)
    guard first <= last else { return }
    if pipelined ?? (last - first >= EventPipeline.minimumEvents),
      let pipeline = EventPipeline(
        reader: reader, path: path, from: first, through: last, decoder: decoder,
        reportsFrames: frames)
    {
      defer { skippedAfterGaps += pipeline.skippedAfterGaps }
      if let stop = try pipeline.consume(prefetch: prefetch, onFrame: onFrame, body) {
        // The producer decoded past the stop: decode up to it again (≤ one reset interval).
        decoder = try self.decoder(after: stop)
      } else {
        decoder = pipeline.decoder
      }
      return
    }
    try withoutActuallyEscaping(onFrame) { onFrame throws(StoreError) in
      try scanEvents(
        from: first, through: last, decoder: &decoder, onFrame: frames ? onFrame : nil
      ) { seq, event in body(seq, event) }
    }
  }

  /// Folds events `from...through` into `state` as `forEachDecoded` delivers them, with the
  /// decoding thread's fold hints, and calls `body` after each with the event, its fault
  /// (nil when it applied) and the state, read in place; `body` returns false to stop. Every
  /// scan that folds (replay, seeks, find, history, stats, verify, the viewers) goes through
  /// here. `progress` gets `(event, through)` every `progressInterval` events.
  ///
  /// In a salvaged log the fold re-anchors after each gap at the self-contained point that
  /// restores it (`foldAnchored`); `exactSteps` says which states are the recorded ones.
  package func foldEach(
    _ state: inout ListState, _ decoder: inout EventDecoder, from: Int, through: Int,
    progress: ((Int, Int) -> Void)? = nil,
    frames: Bool = false, onFrame: (FrameEnd, inout ListState) -> Void = { _, _ in },
    _ body: (Int, Event, ListFault?, inout ListState) -> Bool
  ) throws(StoreError) {
    try foldAnchored(
      &state, &decoder, from: from, through: through, progress: progress, frames: frames,
      onFrame: onFrame, body)
  }

  /// `foldEach` without re-anchoring: one run of events.
  func foldRun(
    _ state: inout ListState, _ decoder: inout EventDecoder, from: Int, through: Int,
    progress: ((Int, Int) -> Void)?, frames: Bool, onFrame: (FrameEnd, inout ListState) -> Void,
    _ body: (Int, Event, ListFault?, inout ListState) -> Bool
  ) throws(StoreError) {
    func prefetch(_ hints: UnsafeBufferPointer<FoldHint>, _ i: Int) {
      Self.prefetch(&state, hints, i)
    }
    func frameEnded(_ end: FrameEnd) { onFrame(end, &state) }
    try forEachDecoded(
      from: from, through: through, decoder: &decoder, prefetch: prefetch, frames: frames,
      onFrame: frameEnded
    ) { seq, event in
      var fault: ListFault?
      do throws(ListFault) {
        try state.apply(event)
      } catch {
        fault = error
      }
      if let progress, seq % Self.progressInterval == 0 { progress(seq, through) }
      return body(seq, event, fault, &state)
    }
  }

  /// Events between two progress reports of a long fold.
  package static let progressInterval = 65_536

  /// `state.prefetch` through `inout`: a closure's captured state is then read in place
  /// rather than copied (which would retain every table) at every event.
  @inline(__always)
  private static func prefetch(
    _ state: inout ListState, _ hints: UnsafeBufferPointer<FoldHint>, _ i: Int
  ) {
    state.prefetch(hints, before: i)
  }

  /// Calls `body(n, event)` for events `from...through` in order; `body` returns false to
  /// stop. Memory stays bounded by one frame whatever the log's length. Events a salvaged
  /// log cannot decode after a gap are skipped (`skippedAfterGaps`).
  public func forEachEvent(
    from: Int = 1, through: Int = .max, _ body: (Int, Event) -> Bool
  ) throws(StoreError) {
    let start = max(from, 1)
    guard start <= min(through, eventCount) else { return }
    var decoder = try decoder(after: start - 1)
    try scanEvents(from: start, through: through, decoder: &decoder) { seq, event in
      body(seq, event)
    }
  }

  /// One event. - Complexity: one checkpoint lookup plus a decode of ≤ K events.
  public func event(_ n: Int) throws(StoreError) -> Event {
    guard n >= 1 && n <= eventCount else {
      throw .eventOutOfRange(n, lowest: 1, last: eventCount, path: path)
    }
    var decoder = try decoder(after: n - 1)
    var found: Event?
    let skipped = skippedAfterGaps
    try scanEvents(from: n, through: n, decoder: &decoder) { _, event in
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

  // MARK: States

  /// The latest checkpoint folding at most `n` events, decoded, with the decoder standing
  /// right after its event (2.0: the index file's seek point when it is as near).
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
      return try frameCheckpoint(atOrBefore: n)
    }
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

  /// The state after events 1...n (n = 0 is empty); faults are skipped as the reducer does.
  /// - Complexity: one checkpoint decode plus a replay of at most K events.
  package func state(at n: Int) throws(StoreError) -> ListState {
    try seek(to: n).state
  }

  /// The state after event `n` and the decoder positioned right after it.
  /// With `cache`, the decoded checkpoint is kept for the next seek into the same interval
  /// (worth it for many nearby seeks; a lone seek would pay for a copy it never uses).
  package func seek(to n: Int, cache: Bool = false) throws(StoreError) -> (
    state: ListState, decoder: EventDecoder
  ) {
    guard n >= 0 && n <= eventCount else {
      throw .eventOutOfRange(n, lowest: 0, last: eventCount, path: path)
    }
    var state = ListState()
    var decoder = EventDecoder()
    var start = 1
    ensureIndex(near: n)
    // A salvaged log: never from a checkpoint inside a stretch of inexact states.
    let bound = seekBound(for: n)
    let nearest = checkpointSeq(atOrBefore: bound)
    if nearest > 0, let cached = cachedCheckpoint, cached.seq == nearest {
      (state, decoder, start) = (cached.state, cached.decoder, cached.seq + 1)
    } else if let cp = try checkpoint(atOrBefore: bound) {
      state = cp.state
      decoder = cp.decoder
      start = cp.seq + 1
      if cache { cachedCheckpoint = (cp.seq, state, decoder) }
    }
    try fold(&state, &decoder, from: start, through: n)
    return (state, decoder)
  }

  /// Folds events `from...through` into `state`, skipping faults; returns the last event
  /// folded.
  @discardableResult
  package func fold(
    _ state: inout ListState, _ decoder: inout EventDecoder, from: Int, through: Int
  ) throws(StoreError) -> Int {
    try fold(&state, &decoder, from: from, through: through, watching: false) { _, _ in false }
  }

  /// Folds events `from...through` into `state`, skipping faults, and stops right after the
  /// first event whose state satisfies `until`; returns that event's number, or the last
  /// event folded.
  package func fold(
    _ state: inout ListState, _ decoder: inout EventDecoder, from: Int, through: Int,
    until: (Int, ListState) -> Bool
  ) throws(StoreError) -> Int {
    try fold(&state, &decoder, from: from, through: through, watching: true, until)
  }

  private func fold(
    _ state: inout ListState, _ decoder: inout EventDecoder, from: Int, through: Int,
    watching: Bool, _ until: (Int, ListState) -> Bool
  ) throws(StoreError) -> Int {
    guard from <= through else { return from - 1 }
    var last = from - 1
    try foldOps(&state, &decoder, from: from, through: through) { seq, _, _, s in
      last = seq
      return watching ? !until(seq, s) : true
    }
    return last
  }

  /// Folds events `from...through` onto the state before `from` and calls `body` after each
  /// with its number, the event, its fault (nil when it applied) and the state after it;
  /// `body` returns false to stop there. Returns the state and the last event folded. A
  /// long fold reads and decodes on a second thread; the callbacks run on this one and must
  /// not use the timeline. `progress` gets `(event, through)` now and then.
  package func forEachState(
    from: Int = 1, through n: Int = .max, progress: ((Int, Int) -> Void)? = nil,
    _ body: (Int, Event, ListFault?, ListState) -> Bool
  ) throws(StoreError) -> (state: ListState, stoppedAt: Int) {
    let last = min(n, eventCount)
    let first = max(from, 1)
    guard first <= last else {
      let stop = min(first - 1, last)
      return (try state(at: max(stop, 0)), max(stop, 0))
    }
    var (state, decoder) = try seek(to: first - 1)
    var done = first - 1
    try foldEach(&state, &decoder, from: first, through: last, progress: progress) {
      seq, event, fault, s in
      done = seq
      return body(seq, event, fault, s)
    }
    progress?(done, last)
    return (state, done)
  }

  /// Folds events 1...n from the start, reporting each fault; `onFault` returns false to
  /// stop there. Returns the state and the last event folded (see `forEachState`).
  package func replay(
    through n: Int, progress: ((Int, Int) -> Void)? = nil,
    onFault: (Int, Event, ListFault) -> Bool
  ) throws(StoreError) -> (state: ListState, stoppedAt: Int) {
    let last = min(n, eventCount)
    guard last >= 1 else { return (try state(at: max(last, 0)), max(last, 0)) }
    var state = ListState()
    var decoder = EventDecoder()
    var done = 0
    var failure: StoreError?
    try foldOps(&state, &decoder, from: 1, through: last, progress: progress) {
      seq, fault, event, _ in
      done = seq
      guard let fault else { return true }
      do throws(StoreError) {
        return onFault(seq, try event(), fault)
      } catch {
        failure = error
        return false
      }
    }
    if let failure { throw failure }
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
