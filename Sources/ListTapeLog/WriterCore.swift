import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A writer's shared part, used by the appending threads and the background flusher: its
/// state (`WriterState`) and the parts each state uses, all behind one condition. Appends
/// fill the batch (`WriterBatch`); cutting it frames and writes it (`FrameOutput`); the
/// counters of `CheckpointPolicy` say when the caller owes a checkpoint; syncs follow the
/// fsync policy. Opening is `prepare` (LogWriter+Recovery), the thread `flusherLoop`
/// (LogWriter+Flusher).
final class WriterCore: @unchecked Sendable {
  let path: String
  let options: LogWriterOptions
  let files: any FileLayer
  /// Format major version of the file, and (2.0) what turns records into frame payloads.
  let major: UInt16
  private let frames: (any FramePayloadEncoder)?
  let cond = NSCondition()

  // Behind `cond`.
  /// Where the writer is in its life; every change is a named transition.
  var state = WriterState.open
  private(set) var batch: WriterBatch
  let output: FrameOutput
  var policy: CheckpointPolicy
  /// The number the next event appended gets.
  private(set) var nextSeq: UInt64
  /// The event number the current 2.0 segment began before (0: the log's start).
  private(set) var segment: UInt64
  private var framePayload: [UInt8] = []
  private var flushPoints: [Int] = []
  /// Frames written since the last sync of either kind (the interval flusher's cue).
  var dirty = false
  /// Frames written since the last full sync (what `close()` must still force out).
  private var unflushed = false
  /// The first frame after reopening a log that has frames is synced at once: it carries
  /// the sync point that vouches for the prefix (which an unsyncing writer may have left
  /// without one), so no later frame may reach the disk before it (LogWriter+Durability).
  private var syncFirstFrame: Bool
  /// When the last sync of either kind started (monotonic ns).
  var lastSync: UInt64
  /// The descriptor was closed (by `close`, or not yet: `deinit` closes it).
  private var fdClosed = false
  let maxEvents: Int
  let maxRaw: Int
  /// The room a new batch starts with.
  private let batchCapacity: Int
  /// Whether full batches are framed and written on the flusher thread (`cutsAhead`, with a
  /// flusher thread to do it).
  let cutsAhead: Bool
  /// A full batch handed to the flusher thread to frame and write while appends fill
  /// `batch`, with the segment and next event number it was cut at; one at a time.
  private var ahead: (batch: WriterBatch, segment: UInt64, nextSeq: UInt64)?
  /// Whether a thread is framing `ahead` outside the lock.
  private var aheadTaken = false
  /// What writing `ahead` did, for the checkpoint policy: counted when the next batch is
  /// handed ahead or cut, so the policy's answers never depend on the flusher's timing.
  private var aheadWritten: FrameOutput.Written?
  /// Why writing `ahead` failed: thrown by the next cut, even by `close`'s.
  private var aheadFailure: LogError?
  /// Events of batches handed ahead whose write failed: appended, never written.
  private var lostAhead = 0
  /// Batches handed ahead so far.
  private var handedAhead = 0
  /// The emptied batch `ahead` held, for the next hand-off.
  private var spare: WriterBatch?

  /// The flusher thread's bookkeeping (LogWriter+Flusher).
  let flusherDone = DispatchSemaphore(value: 0)
  var flusherRunning = false
  /// When the flusher will next wake by itself (monotonic ns), or nil: it waits for a signal.
  var flusherDeadline: UInt64?
  var wakeups = 0

  /// The writer of the log that `prepare` opened on `fd`.
  init(
    fd: Int32, path: String, options: LogWriterOptions, frames: (any FramePayloadEncoder)?,
    files: any FileLayer, prepared: PreparedLog
  ) throws(LogError) {
    guard let deflater = Deflater(level: min(max(options.compressionLevel, 0), 9)) else {
      throw LogError(.io, path: path, message: "zlib deflateInit failed")
    }
    let maxRaw = min(max(options.maxRawBytesPerFrame, 1), Format.maxEventsRaw)
    let batchCapacity = min(maxRaw, 1 << 20) + 64
    self.path = path
    self.options = options
    self.files = files
    self.major = prepared.header.major
    self.frames = prepared.header.major >= 2 ? frames : nil
    self.maxEvents = min(max(options.maxEventsPerFrame, 1), Int(UInt16.max))
    self.maxRaw = maxRaw
    self.batchCapacity = batchCapacity
    self.cutsAhead = options.cutsAhead && options.clock == nil && options.fsync != .always
    self.batch = WriterBatch(capacity: batchCapacity)
    self.output = FrameOutput(
      fd: fd, path: path, files: files, salt: prepared.header.salt, deflater: deflater,
      end: prepared.scan.end, syncedEnd: prepared.syncedEnd, batchCapacity: batchCapacity)
    output.parity = prepared.parity
    self.policy = CheckpointPolicy(options: options, scan: prepared.scan)
    self.nextSeq = prepared.scan.nextSeq
    self.segment = prepared.scan.lastRestartSeq
    self.lastSync = options.clock?.now ?? Posix.monotonicNanos()
    self.syncFirstFrame =
      options.fsync != .never && prepared.syncedEnd > UInt64(prepared.header.headerLength)
  }

  deinit {
    if !fdClosed { _ = Self.release(output.fd, files: files) }
  }

  /// Unlocks, then closes. A child process being spawned holds a copy of the descriptor
  /// until it execs, and with it the lock; `LOCK_UN` releases the lock for every copy.
  static func release(_ fd: Int32, files: any FileLayer) -> Int32? {
    _ = flock(fd, LOCK_UN)
    return files.close(fd)
  }

  /// Runs `body` under the lock.
  func underLock<R>(_ body: () throws(LogError) -> R) throws(LogError) -> R {
    cond.lock()
    defer { cond.unlock() }
    return try body()
  }

  /// Runs `body` under the lock (for reads that cannot fail).
  func locked<R>(_ body: () -> R) -> R {
    cond.lock()
    defer { cond.unlock() }
    return body()
  }

  // MARK: Appending

  func append(_ r: UnsafeRawBufferPointer) throws(LogError) {
    try underLock { () throws(LogError) in
      try state.checkUsable(path: path)
      let n = r.count
      guard n <= Format.maxRecord else {
        throw LogError(.tooLarge, path: path, message: "record of \(n) bytes exceeds the cap")
      }
      if !batch.isEmpty && batch.bytes + n + 5 > maxRaw { try cutFull() }
      let opened = batch.add(r, seq: nextSeq, now: currentTime)
      state.beginWriting()
      nextSeq += 1
      policy.appended()
      if batch.count >= maxEvents || batch.bytes >= maxRaw {
        try cutFull()
        settle()
      } else if opened {
        noteWork()
      }
    }
  }

  /// Writes a CHECKPOINT (state after `eventCount` events) or, in 2.0, a DICTIONARY frame.
  func appendFrame(_ type: UInt8, _ raw: UnsafeRawBufferPointer, flushPoints: [Int])
    throws(LogError)
  {
    try underLock { () throws(LogError) in
      try state.checkUsable(path: path)
      let what = type == Format.typeCheckpoint ? "checkpoint" : "dictionary"
      guard type == Format.typeCheckpoint || major >= 2 else {
        throw LogError(.unsupportedVersion, path: path, message: "a 1.0 log has no \(what) frames")
      }
      guard raw.count <= Format.maxRaw(type: type) else {
        throw LogError(
          .tooLarge, path: path, message: "\(what) of \(raw.count) bytes exceeds the cap")
      }
      try cut()
      let isCheckpoint = type == Format.typeCheckpoint
      try writeFrame(
        type: type, count: 0, firstSeq: isCheckpoint ? nextSeq &- 1 : nextSeq, raw: raw,
        flushPoints: flushPoints)
      if isCheckpoint {
        output.shrinkIfLarge()
      } else {
        segment = nextSeq
      }
      settle()
    }
  }

  /// Writes a META gap frame: the next `count` event numbers hold no event (a copy of a
  /// salvaged log keeps its numbering). Pending events are cut first.
  func appendGap(_ count: UInt64) throws(LogError) {
    try underLock { () throws(LogError) in
      try state.checkUsable(path: path)
      guard count >= 1, count <= UInt64.max / 2 - nextSeq else {
        throw LogError(.tooLarge, path: path, message: "a gap of \(count) events")
      }
      try cut()
      var raw: [UInt8] = [Format.metaGap]
      withUnsafeBytes(of: count.littleEndian) { raw += $0 }
      let first = nextSeq
      nextSeq += count
      let failure: LogError? = raw.withUnsafeBytes { r in
        do throws(LogError) {
          try writeFrame(type: Format.typeMeta, count: 0, firstSeq: first, raw: r)
        } catch {
          return error
        }
        return nil
      }
      if let failure { throw failure }
      settle()
    }
  }

  func flush() throws(LogError) {
    try underLock { () throws(LogError) in
      try state.checkUsable(path: path)
      try cut()
      settle()
    }
  }

  func sync() throws(LogError) {
    try underLock { () throws(LogError) in
      try state.checkUsable(path: path)
      try cut()
      try closeParityGroup()
      try syncLocked()
      settle()
    }
  }

  /// Writes the open parity group's PARITY frame when the group is worth one (at least
  /// `groupWidths` blocks: its parity then costs no more than a full group's), so that what
  /// `sync()` and `close()` make durable is protected as a closed group is. A smaller group
  /// stays open (a reopening writer continues it). Lock held.
  private func closeParityGroup() throws(LogError) {
    guard output.parity?.isWorthClosing == true else { return }
    let length: UInt64
    do {
      length = try output.writeParity(nextSeq: nextSeq)
    } catch {
      throw fail(error)
    }
    policy.wrote(Format.typeParity, length: 0, parityLength: length)
    unflushed = true
    dirty = true
  }

  /// Compresses and writes the batch as one EVENTS frame, after the batch handed ahead.
  /// Lock held.
  func cut() throws(LogError) {
    try settleAhead()
    guard !batch.isEmpty else { return }
    let written: FrameOutput.Written
    do {
      written = try writeEvents(batch, segment: segment, nextSeq: nextSeq)
    } catch {
      throw fail(error)
    }
    policy.wrote(Format.typeEvents, length: written.length, parityLength: written.parityLength)
    try frameWritten()
    batch.clear()
  }

  /// Frames `events` (2.0: its payload from `frames`) and writes it as one EVENTS frame;
  /// the caller fails the writer on an error. Lock held, or `ahead` taken.
  private func writeEvents(_ events: WriterBatch, segment: UInt64, nextSeq: UInt64)
    throws(LogError) -> FrameOutput.Written
  {
    guard let frames else {
      return try output.write(
        type: Format.typeEvents, count: events.count, firstSeq: events.firstSeq,
        raw: events.records, nextSeq: nextSeq)
    }
    framePayload.removeAll(keepingCapacity: true)
    flushPoints.removeAll(keepingCapacity: true)
    if let problem = frames.payload(
      records: events.records, count: events.count, segment: segment, into: &framePayload,
      flushPoints: &flushPoints)
    {
      throw LogError(.poisoned, path: path, message: "cannot encode frame: \(problem)")
    }
    let points = flushPoints
    let written: Result<FrameOutput.Written, LogError> = framePayload.withUnsafeBytes { raw in
      Result { () throws(LogError) in
        try output.write(
          type: Format.typeEvents, count: events.count, firstSeq: events.firstSeq, raw: raw,
          flushPoints: points, nextSeq: nextSeq)
      }
    }
    if framePayload.capacity > (8 << 20) { framePayload = [] }
    return try written.get()
  }

  // MARK: Cutting ahead

  /// Cuts a full batch: hands it to the flusher thread when the writer cuts ahead (appends
  /// go on into the spare batch while it is framed), else cuts it here. Lock held.
  private func cutFull() throws(LogError) {
    guard cutsAhead, flusherRunning else { return try cut() }
    try settleAhead()
    guard !batch.isEmpty else { return }
    ahead = (batch, segment, nextSeq)
    handedAhead += 1
    batch = spare ?? WriterBatch(capacity: batchCapacity)
    spare = nil
    cond.broadcast()
  }

  /// Waits for the batch handed ahead to be written (writing it here when no thread has
  /// taken it), counts its frame for the policy, and throws its failure. Lock held.
  private func settleAhead() throws(LogError) {
    while ahead != nil {
      if aheadTaken { cond.wait() } else { writeAhead() }
    }
    if let written = aheadWritten {
      aheadWritten = nil
      policy.wrote(Format.typeEvents, length: written.length, parityLength: written.parityLength)
    }
    if let failure = aheadFailure {
      aheadFailure = nil
      throw failure
    }
  }

  /// Frames and writes the batch handed ahead, outside the lock, unless a thread already
  /// does. Lock held on entry and exit.
  func writeAhead() {
    guard let job = ahead, !aheadTaken else { return }
    if case .failed = state {
      // Nothing is written after a failure (the writer's error is what the next call throws).
      lostAhead += job.batch.count
      job.batch.clear()
      spare = job.batch
      ahead = nil
      cond.broadcast()
      return
    }
    aheadTaken = true
    cond.unlock()
    let result = Result { () throws(LogError) in
      try writeEvents(job.batch, segment: job.segment, nextSeq: job.nextSeq)
    }
    cond.lock()
    switch result {
    case .success(let written):
      aheadWritten = written
      do throws(LogError) {
        try frameWritten()
      } catch {
        aheadFailure = error
      }
    case .failure(let error):
      aheadFailure = fail(error)
      lostAhead += job.batch.count
    }
    job.batch.clear()
    spare = job.batch
    ahead = nil
    aheadTaken = false
    cond.broadcast()
  }

  /// Whether a batch waits for the flusher thread to take it. Lock held.
  var aheadWaiting: Bool { ahead != nil && !aheadTaken }

  /// Writes one frame (and the parity frame it makes due), counts it, and syncs under
  /// `.always`; fails the writer when the write does. Lock held.
  private func writeFrame(
    type: UInt8, count: Int, firstSeq: UInt64, raw: UnsafeRawBufferPointer, flushPoints: [Int] = []
  ) throws(LogError) {
    let written: FrameOutput.Written
    do {
      written = try output.write(
        type: type, count: count, firstSeq: firstSeq, raw: raw, flushPoints: flushPoints,
        nextSeq: nextSeq)
    } catch {
      throw fail(error)
    }
    policy.wrote(type, length: written.length, parityLength: written.parityLength)
    try frameWritten()
  }

  /// A frame reached the file: it is unsynced, and the interval flusher gets a deadline.
  /// Lock held.
  private func frameWritten() throws(LogError) {
    let wasDirty = dirty
    dirty = true
    unflushed = true
    state.beginWriting()
    if options.fsync == .always || syncFirstFrame {
      syncFirstFrame = false
      try syncLocked()
    }
    // The first unsynced frame since a sync gives the interval flusher its deadline; later
    // frames do not wake it again.
    if !wasDirty && syncIntervalNanos > 0 { noteWork() }
  }

  /// A full sync of everything written; fails the writer when it fails. Lock held.
  private func syncLocked() throws(LogError) {
    if options.fsync != .never {
      if let e = files.sync(output.fd, .full) {
        throw fail(
          LogError(
            .poisoned, path: path, message: "fsync failed: \(errnoText(e)); writer stopped",
            offset: output.end, errno: e))
      }
      output.synced(upTo: output.end)
      lastSync = currentTime()
    }
    dirty = false
    unflushed = false
  }

  /// writing → open when nothing waits and nothing is unsynced: after every call. Lock held.
  func settle() { state.settle(idle: batch.isEmpty && ahead == nil && !dirty) }

  /// Fails the writer with `e` (the first failure stays) and returns it for throwing.
  func fail(_ e: LogError) -> LogError {
    state.fail(e)
    return e
  }

  // MARK: Reading the counters

  var eventCount: UInt64 { locked { nextSeq - 1 } }
  var checkpointDue: Bool { locked { policy.checkpointDue } }
  func due(restartEstimate: UInt64) -> (checkpoint: Bool, recoveryPoint: Bool) {
    locked { (policy.checkpointDue, policy.recoveryPointDue(estimate: restartEstimate)) }
  }
  var currentSegment: UInt64 { locked { segment } }
  var unwrittenEvents: Int { locked { batch.count + (ahead?.batch.count ?? 0) + lostAhead } }
  var flusherWakeups: Int { locked { wakeups } }
  var batchesCutAhead: Int { locked { handedAhead } }
  var currentState: WriterState { locked { state } }

  // MARK: Close

  /// Stops the flusher, writes the batch and a parity frame worth writing, syncs (unless
  /// the policy is `.never`), and closes the descriptor: any state → closed. Throws the
  /// failure that stopped the writer, if any.
  func close() throws(LogError) {
    cond.lock()
    if case .closed = state {
      cond.unlock()
      return
    }
    let failed: LogError?
    if case .failed(let e) = state { failed = e } else { failed = nil }
    state.close()
    cond.broadcast()
    let running = flusherRunning
    cond.unlock()
    if running { flusherDone.wait() }
    cond.lock()
    defer { cond.unlock() }
    var failure: LogError?
    if failed == nil {
      do throws(LogError) {
        try cut()
        // A group large enough closes with its parity; a smaller one is continued (re-read)
        // by the next writer.
        try closeParityGroup()
        if unflushed { try syncLocked() }
      } catch {
        failure = error
      }
      state = .closed
    }
    fdClosed = true
    if let e = Self.release(output.fd, files: files), failure == nil, failed == nil {
      failure = .io("close failed", path: path, errno: e)
    }
    if let failure { throw failure }
    if let failed { throw failed }
  }
}
