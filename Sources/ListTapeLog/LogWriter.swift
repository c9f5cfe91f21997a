import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Appends records and checkpoints to a log: the only process allowed to write it.
///
/// Records are batched into frames (group commit): a frame is cut when it reaches
/// `maxEventsPerFrame` events or `maxRawBytesPerFrame` bytes, on `flush()`, or by a background
/// thread once its first event is `batchDelay` old; each frame is one `write()`. Thread safe.
/// After any write or fsync failure every call throws `.poisoned`: reopen to recover.
package final class LogWriter: @unchecked Sendable {
  /// The log file.
  package let path: String
  /// What was cut from a torn tail when the log was opened, or nil if nothing was.
  package let recovery: RecoveryReport?
  private let core: WriterCore

  private init(path: String, recovery: RecoveryReport?, core: WriterCore) {
    self.path = path
    self.recovery = recovery
    self.core = core
  }

  deinit { try? core.close() }

  /// Creates the log (its header written and synced under a temporary name, then linked into
  /// place) or opens it for appending.
  ///
  /// Takes an exclusive lock (a second writer fails at once with `.locked`). On an existing log
  /// it scans every frame: a torn tail, or damage followed only by frames written after the
  /// last sync (what a power loss leaves), is cut, saved to `<path>.tail-<offset>.broken` and
  /// described in `recovery`; other mid-file damage throws `.damaged` (see
  /// `LogReader.salvage`).
  ///
  /// `frames` makes the payload of each event frame of a 2.0 log (ignored for a 1.0 log);
  /// without it a 2.0 event frame holds its records as they are.
  package static func open(
    path: String, options: LogWriterOptions = LogWriterOptions(),
    frames: (any FramePayloadEncoder)? = nil
  ) throws(LogError) -> LogWriter {
    try open(path: path, options: options, frames: frames, files: SystemFiles.shared)
  }

  /// Opens through `files` (a simulated disk in the power-loss tests).
  package static func open(
    path: String, options: LogWriterOptions, frames: (any FramePayloadEncoder)? = nil,
    files: any FileLayer
  ) throws(LogError) -> LogWriter {
    var created = false
    var fd: Int32 = -1
    // Another process may create the log between our open and our link: then open again.
    // A name that neither opens nor links (a dangling symlink) ends after a few rounds.
    for _ in 0..<3 where fd < 0 {
      switch files.open(path, O_RDWR | O_APPEND) {
      case .success(let f): fd = f
      case .failure(ENOENT):
        if let f = try create(path: path, options: options, files: files) {
          fd = f
          created = true
        }
      case .failure(let e): throw .io("cannot open", path: path, errno: e)
      }
    }
    guard fd >= 0 else { throw .io("cannot create", path: path, errno: EEXIST) }
    do throws(LogError) {
      if !created { try lock(fd, path: path) }
      let (core, recovery) = try WriterCore.prepare(
        fd: fd, path: path, options: options, created: created, frames: frames, files: files)
      core.startFlusher()
      return LogWriter(path: path, recovery: recovery, core: core)
    } catch {
      _ = files.close(fd)
      throw error
    }
  }

  /// flock(LOCK_EX|LOCK_NB), retried for a few milliseconds so a reader's liveness probe
  /// (a momentary shared lock) is not mistaken for a writer.
  static func lock(_ fd: Int32, path: String) throws(LogError) {
    for attempt in 0..<10 {
      if flock(fd, LOCK_EX | LOCK_NB) == 0 { return }
      let e = errno
      guard e == EWOULDBLOCK || e == EINTR else {
        throw .io("cannot lock", path: path, errno: e)
      }
      if attempt < 9 { usleep(2000) }
    }
    throw LogError(
      .locked, path: path, message: "log is being recorded by another process", errno: EWOULDBLOCK)
  }

  /// Events in the log, pending ones included; the next record gets `eventCount + 1`.
  package var eventCount: UInt64 { core.eventCount }

  /// Appended events not yet written in a frame (what a kill -9 now would lose).
  package var unwrittenEvents: Int { core.unwrittenEvents }

  /// Times the background flusher woke up (deadlines reached, new work, close).
  package var flusherWakeups: Int { core.flusherWakeups }

  /// The log's format major version (1 or 2): an existing log keeps its own.
  package var formatMajor: UInt16 { core.major }

  /// Appends one record (an encoded event); it is written with its frame.
  /// - Complexity: amortised O(record size); a frame cut compresses and writes.
  package func append(_ record: UnsafeRawBufferPointer) throws(LogError) {
    try core.append(record)
  }

  /// Appends one record held in an array.
  package func append(_ record: [UInt8]) throws(LogError) {
    let failure: LogError? = record.withUnsafeBytes { p in
      do throws(LogError) { try core.append(p) } catch { return error }
      return nil
    }
    if let failure { throw failure }
  }

  /// True when the caller should call `appendCheckpoint` with the state after `eventCount` events.
  package var checkpointDue: Bool { core.checkpointDue }

  /// Writes the folded state after exactly `eventCount` events (pending events are cut first).
  /// `flushPoints` are offsets where the compressor starts a new block (one per column).
  package func appendCheckpoint(_ state: UnsafeRawBufferPointer, flushPoints: [Int] = [])
    throws(LogError)
  {
    try core.appendFrame(Format.typeCheckpoint, state, flushPoints: flushPoints)
  }

  /// Writes the folded state held in an array.
  package func appendCheckpoint(_ state: [UInt8], flushPoints: [Int] = []) throws(LogError) {
    let failure: LogError? = state.withUnsafeBytes { p in
      do throws(LogError) {
        try core.appendFrame(Format.typeCheckpoint, p, flushPoints: flushPoints)
      } catch { return error }
      return nil
    }
    if let failure { throw failure }
  }

  /// Format 2.0: starts a new segment whose dictionary is `entries` (pending events are cut
  /// first); event frames written after it belong to the segment beginning at the next event.
  package func appendDictionary(_ entries: [UInt8], flushPoints: [Int] = []) throws(LogError) {
    let failure: LogError? = entries.withUnsafeBytes { p in
      do throws(LogError) {
        try core.appendFrame(Format.typeDictionary, p, flushPoints: flushPoints)
      } catch { return error }
      return nil
    }
    if let failure { throw failure }
  }

  /// Format 2.0: the event number the current segment began before (0: the log's start).
  package var segment: UInt64 { core.currentSegment }

  /// Writes the pending frame now (kill -9 safe once this returns).
  package func flush() throws(LogError) { try core.flush() }

  /// Writes the pending frame and fdatasyncs (power-loss safe once this returns).
  package func sync() throws(LogError) { try core.sync() }

  /// Flushes, syncs (unless the policy is `.never`), stops the background thread, unlocks.
  package func close() throws(LogError) { try core.close() }
}

/// The writer's state, shared with its background flusher thread; every field behind `cond`.
final class WriterCore: @unchecked Sendable {
  let path: String
  let options: LogWriterOptions
  private let files: any FileLayer
  /// Format major version of the file, and (2.0) what turns records into frame payloads.
  let major: UInt16
  private let frames: (any FramePayloadEncoder)?
  private var segment: UInt64
  private var framePayload: [UInt8] = []
  private var flushPoints: [Int] = []
  private let fd: Int32
  private let salt: UInt32
  private let deflater: Deflater
  private let cond = NSCondition()
  private let flusherDone = DispatchSemaphore(value: 0)
  private var flusherRunning = false
  /// When the flusher will next wake by itself (monotonic ns), or nil: it waits for a signal.
  private var flusherDeadline: UInt64?
  private var wakeups = 0

  private var fileEnd: UInt64
  private var nextSeq: UInt64
  private var pending: UnsafeMutableRawPointer
  private var pendingCapacity: Int
  private var pendingBytes = 0
  private var pendingCount = 0
  private var pendingFirstSeq: UInt64 = 0
  private var pendingSince: UInt64 = 0
  private var out: UnsafeMutableRawPointer
  private var outCapacity: Int
  /// The file's length when the last completed sync started: a frame written at this
  /// offset is a sync point.
  private var syncedEnd: UInt64
  private var poison: LogError?
  private var closed = false
  private var fdClosed = false
  /// Frames written since the last sync of either kind (the interval flusher's cue).
  private var dirty = false
  /// Frames written since the last full sync (what `close()` must still force out).
  private var unflushed = false
  private var lastSync: UInt64
  private var eventsSinceCheckpoint: UInt64
  private var bytesSinceCheckpoint: UInt64
  private var lastCheckpointLength: UInt64
  private let maxEvents: Int
  private let maxRaw: Int

  private init(
    fd: Int32, path: String, options: LogWriterOptions, header: FileHeader, deflater: Deflater,
    scan: FrameScan, frames: (any FramePayloadEncoder)?, files: any FileLayer, syncedEnd: UInt64
  ) {
    self.fd = fd
    self.files = files
    self.syncedEnd = syncedEnd
    self.path = path
    self.options = options
    self.major = header.major
    self.frames = header.major >= 2 ? frames : nil
    self.segment = scan.lastRestartSeq
    self.salt = header.salt
    self.deflater = deflater
    self.fileEnd = scan.end
    self.nextSeq = scan.nextSeq
    self.eventsSinceCheckpoint = scan.lastSeq - (scan.lastCheckpointSeq ?? 0)
    self.bytesSinceCheckpoint = scan.bytesSinceCheckpoint
    self.lastCheckpointLength = scan.lastCheckpointLength
    self.maxEvents = min(max(options.maxEventsPerFrame, 1), Int(UInt16.max))
    self.maxRaw = min(max(options.maxRawBytesPerFrame, 1), Format.maxEventsRaw)
    self.pendingCapacity = min(self.maxRaw, 1 << 20) + 64
    self.pending = UnsafeMutableRawPointer.allocate(byteCount: pendingCapacity, alignment: 16)
    self.outCapacity = Format.frameHeaderLength + deflater.bound(pendingCapacity)
    self.out = UnsafeMutableRawPointer.allocate(byteCount: outCapacity, alignment: 16)
    self.lastSync = Posix.monotonicNanos()
  }

  deinit {
    pending.deallocate()
    out.deallocate()
    if !fdClosed { _ = files.close(fd) }
  }

  // MARK: Open and recovery

  /// Writes a fresh header or validates the existing log, cutting a torn tail.
  static func prepare(
    fd: Int32, path: String, options: LogWriterOptions, created: Bool,
    frames: (any FramePayloadEncoder)?, files: any FileLayer
  ) throws(LogError) -> (WriterCore, RecoveryReport?) {
    let syncing = options.fsync != .never
    guard let deflater = Deflater(level: min(max(options.compressionLevel, 0), 9)) else {
      throw LogError(.io, path: path, message: "zlib deflateInit failed")
    }
    let source = try ByteSource(fd: fd, path: path)
    var recovery: RecoveryReport?
    var header: FileHeader
    if created {
      guard let hb = try source.bytes(at: 0, count: Format.headerLength) else {
        throw LogError(.io, path: path, message: "cannot read header")
      }
      header = try FileHeader.decode(hb, path: path)
    } else if source.size == 0 {
      header = try initialize(fd: fd, path: path, options: options, syncing: syncing, files: files)
      if syncing, let e = files.syncDirectory(of: path) {
        throw .io("cannot sync directory", path: path, errno: e)
      }
    } else if source.size < UInt64(Format.headerLength) {
      // Only a crash during creation leaves a short header; no event was ever written.
      do {
        _ = try FileHeader.read(from: source, path: path)
      } catch let e where e.kind == .incompleteHeader {
        // A prefix of the magic: what a crash while creating the file leaves.
      }
      let saved = try saveAside(
        source: source, from: 0, path: path, syncing: syncing, files: files)
      if let e = files.truncate(fd, 0) { throw .io("cannot truncate", path: path, errno: e) }
      header = try initialize(fd: fd, path: path, options: options, syncing: syncing, files: files)
      recovery = RecoveryReport(
        offset: 0, bytesCut: source.size, savedTo: saved, lastGoodEvent: 0,
        reason: .incompleteHeader)
    } else {
      header = try FileHeader.read(from: source, path: path)
    }
    try source.refresh()
    var scan = FrameScan(
      source: source, salt: header.salt, start: UInt64(header.headerLength), major: header.major)
    guard scan.end <= source.size else {
      throw LogError(.incompleteHeader, path: path, message: "incomplete header")
    }
    guard let inflater = Inflater() else {
      throw LogError(.io, path: path, message: "zlib inflateInit failed")
    }
    try scan.run(inflater: inflater)
    var syncedEnd: UInt64 = created && syncing ? UInt64(header.headerLength) : 0
    if let stop = scan.stop {
      var powerLoss = false
      if stop.kind == .damaged {
        powerLoss = try scan.isPowerLossShape(stop, headerLength: UInt64(header.headerLength))
      }
      guard stop.kind == .tornTail || powerLoss else {
        var e = LogError.damaged(stop, path: path)
        e.message = "cannot append: \(e.message); salvage the log into a new file"
        throw e
      }
      let saved = try saveAside(
        source: source, from: stop.offset, path: path, syncing: syncing, files: files)
      if let e = files.truncate(fd, stop.offset) {
        throw .io("cannot cut torn tail", path: path, errno: e, offset: stop.offset)
      }
      if syncing, let e = files.sync(fd, .full) {
        throw .io("cannot sync after cutting torn tail", path: path, errno: e)
      }
      recovery = RecoveryReport(
        offset: stop.offset, bytesCut: stop.bytesToEnd, savedTo: saved,
        lastGoodEvent: stop.lastGoodEvent, reason: stop.reason, framesFollowed: powerLoss)
      if syncing { syncedEnd = stop.offset }
    } else if syncing && !created {
      // What the last session left unsynced becomes durable before anything follows it, so
      // the next frame can say so (a sync point).
      if let e = files.sync(fd, .full) { throw .io("cannot sync", path: path, errno: e) }
      syncedEnd = scan.end
    }
    let core = WriterCore(
      fd: fd, path: path, options: options, header: header, deflater: deflater, scan: scan,
      frames: frames, files: files, syncedEnd: syncedEnd)
    return (core, recovery)
  }

  /// Writes a new header and syncs it (the caller syncs the directory entry).
  static func initialize(
    fd: Int32, path: String, options: LogWriterOptions, syncing: Bool, files: any FileLayer
  ) throws(LogError) -> FileHeader {
    let header = FileHeader(
      major: Format.readableMajors.contains(options.formatMajor)
        ? options.formatMajor : Format.latestMajor,
      uuid: randomUUID(), createdMillis: Posix.nowMillis(),
      eventCodecVersion: options.eventCodecVersion, stateCodecVersion: options.stateCodecVersion,
      levelHint: UInt8(min(max(options.compressionLevel, 0), 9)))
    let bytes = header.encode()
    if let e = bytes.withUnsafeBytes({ files.write(fd, $0) }) {
      throw .io("cannot write header", path: path, errno: e)
    }
    if syncing {
      if let e = files.sync(fd, .full) { throw .io("cannot sync header", path: path, errno: e) }
    }
    return header
  }

  /// Copies `[from, EOF)` to `<path>.tail-<from>.broken` (a free name) before it is cut.
  private static func saveAside(
    source: ByteSource, from: UInt64, path: String, syncing: Bool, files: any FileLayer
  ) throws(LogError) -> String {
    var name = "\(path).tail-\(from).broken"
    var fd: Int32 = -1
    for n in 0..<100 {
      if n > 0 { name = "\(path).tail-\(from).broken.\(n)" }
      switch files.open(name, O_WRONLY | O_CREAT | O_EXCL) {
      case .success(let f): fd = f
      case .failure(EEXIST): continue
      case .failure(let e): throw .io("cannot save torn tail to \(name)", path: path, errno: e)
      }
      break
    }
    guard fd >= 0 else {
      throw LogError(.io, path: path, message: "too many saved tails named \(name)")
    }
    defer { _ = files.close(fd) }
    var pos = from
    while pos < source.size {
      let n = Int(min(UInt64(1 << 20), source.size - pos))
      guard let chunk = try source.bytes(at: pos, count: n) else { break }
      if let e = files.write(fd, chunk) {
        throw .io("cannot save torn tail to \(name)", path: path, errno: e)
      }
      pos += UInt64(n)
    }
    if syncing {
      if let e = files.sync(fd, .full) { throw .io("cannot sync \(name)", path: path, errno: e) }
      if let e = files.syncDirectory(of: name) {
        throw .io("cannot sync directory", path: path, errno: e)
      }
    }
    return name
  }

  // MARK: Appending

  var eventCount: UInt64 {
    cond.lock()
    defer { cond.unlock() }
    return nextSeq - 1
  }

  var checkpointDue: Bool {
    cond.lock()
    defer { cond.unlock() }
    guard eventsSinceCheckpoint > 0 else { return false }
    if eventsSinceCheckpoint >= options.maxEventsBetweenCheckpoints { return true }
    let spacing = max(
      options.minCheckpointSpacingBytes,
      options.checkpointBytesRatio.multipliedReportingOverflow(by: lastCheckpointLength)
        .partialValue)
    return bytesSinceCheckpoint >= spacing
  }

  @inline(__always)
  private func usable() throws(LogError) {
    if let poison { throw poison }
    if closed { throw LogError(.closed, path: path, message: "log writer is closed") }
  }

  func append(_ r: UnsafeRawBufferPointer) throws(LogError) {
    cond.lock()
    defer { cond.unlock() }
    try usable()
    let n = r.count
    guard n <= Format.maxRecord else {
      throw LogError(.tooLarge, path: path, message: "record of \(n) bytes exceeds the cap")
    }
    if pendingCount > 0 && pendingBytes + n + 5 > maxRaw { try cut() }
    let opensBatch = pendingCount == 0
    if opensBatch {
      pendingSince = Posix.monotonicNanos()
      pendingFirstSeq = nextSeq
    }
    if pendingBytes + n + 5 > pendingCapacity { growPending(pendingBytes + n + 5) }
    pendingBytes += RecordFraming.putLength(n, pending + pendingBytes)
    if n > 0, let src = r.baseAddress {
      (pending + pendingBytes).copyMemory(from: src, byteCount: n)
      pendingBytes += n
    }
    pendingCount += 1
    nextSeq += 1
    eventsSinceCheckpoint += 1
    if pendingCount >= maxEvents || pendingBytes >= maxRaw {
      try cut()
    } else if opensBatch {
      noteWork()
    }
  }

  private func growPending(_ need: Int) {
    let cap = max(need, pendingCapacity * 2)
    let p = UnsafeMutableRawPointer.allocate(byteCount: cap, alignment: 16)
    p.copyMemory(from: pending, byteCount: pendingBytes)
    pending.deallocate()
    pending = p
    pendingCapacity = cap
  }

  var currentSegment: UInt64 {
    cond.lock()
    defer { cond.unlock() }
    return segment
  }

  /// Writes a CHECKPOINT (state after `eventCount` events) or, in 2.0, a DICTIONARY frame.
  func appendFrame(_ type: UInt8, _ raw: UnsafeRawBufferPointer, flushPoints: [Int])
    throws(LogError)
  {
    cond.lock()
    defer { cond.unlock() }
    try usable()
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
    let length = try writeFrame(
      type: type, count: 0, firstSeq: isCheckpoint ? nextSeq - 1 : nextSeq, raw: raw,
      flushPoints: flushPoints)
    if !isCheckpoint {
      segment = nextSeq
      bytesSinceCheckpoint += length
      return
    }
    lastCheckpointLength = length
    bytesSinceCheckpoint = 0
    eventsSinceCheckpoint = 0
    if outCapacity > (8 << 20) {
      out.deallocate()
      outCapacity = Format.frameHeaderLength + deflater.bound(pendingCapacity)
      out = UnsafeMutableRawPointer.allocate(byteCount: outCapacity, alignment: 16)
    }
  }

  func flush() throws(LogError) {
    cond.lock()
    defer { cond.unlock() }
    try usable()
    try cut()
  }

  func sync() throws(LogError) {
    cond.lock()
    defer { cond.unlock() }
    try usable()
    try cut()
    try syncLocked()
  }

  /// Compresses and writes the pending events as one EVENTS frame. Lock held.
  private func cut() throws(LogError) {
    guard pendingCount > 0 else { return }
    let records = UnsafeRawBufferPointer(start: pending, count: pendingBytes)
    let length: UInt64
    if let frames {
      framePayload.removeAll(keepingCapacity: true)
      flushPoints.removeAll(keepingCapacity: true)
      if let problem = frames.payload(
        records: records, count: pendingCount, segment: segment, into: &framePayload,
        flushPoints: &flushPoints)
      {
        throw fail(LogError(.poisoned, path: path, message: "cannot encode frame: \(problem)"))
      }
      let points = flushPoints
      let written: Result<UInt64, LogError> = framePayload.withUnsafeBytes { raw in
        Result { () throws(LogError) in
          try writeFrame(
            type: Format.typeEvents, count: pendingCount, firstSeq: pendingFirstSeq, raw: raw,
            flushPoints: points)
        }
      }
      length = try written.get()
      if framePayload.capacity > (8 << 20) { framePayload = [] }
    } else {
      length = try writeFrame(
        type: Format.typeEvents, count: pendingCount, firstSeq: pendingFirstSeq, raw: records)
    }
    bytesSinceCheckpoint += length
    pendingCount = 0
    pendingBytes = 0
  }

  /// Frames `raw` (compressed) at the end of the file with one write(); poisons on failure.
  private func writeFrame(
    type: UInt8, count: Int, firstSeq: UInt64, raw: UnsafeRawBufferPointer,
    flushPoints: [Int] = []
  ) throws(LogError) -> UInt64 {
    let headerLength = Format.frameHeaderLength
    let need = headerLength + deflater.bound(raw.count, blocks: flushPoints.count + 1)
    if need > outCapacity {
      out.deallocate()
      outCapacity = need
      out = UnsafeMutableRawPointer.allocate(byteCount: need, alignment: 16)
    }
    let dst = UnsafeMutableRawBufferPointer(start: out + headerLength, count: need - headerLength)
    guard let payloadLength = deflater.compress(raw, into: dst, flushPoints: flushPoints) else {
      throw fail(LogError(.poisoned, path: path, message: "zlib deflate failed"))
    }
    let payload = UnsafeRawBufferPointer(start: out + headerLength, count: payloadLength)
    var flags = Format.flagCompressed
    if syncedEnd == fileEnd { flags |= Format.flagSyncPoint }
    let h = FrameHeader(
      type: type, flags: flags, eventCount: UInt16(count), firstSeq: firstSeq,
      payloadLength: UInt32(payloadLength), rawLength: UInt32(raw.count),
      offsetLow: UInt32(truncatingIfNeeded: fileEnd), payloadCRC: crc32Bytes(0, payload))
    h.encode(into: UnsafeMutableRawBufferPointer(start: out, count: headerLength), salt: salt)
    let total = headerLength + payloadLength
    if let e = files.write(fd, UnsafeRawBufferPointer(start: out, count: total)) {
      _ = files.truncate(fd, fileEnd)  // drop a partial frame, as Redis does
      throw fail(
        LogError(
          .poisoned, path: path, message: "write failed: \(errnoText(e)); writer stopped",
          offset: fileEnd, lastGoodEvent: firstSeq - 1, errno: e))
    }
    fileEnd += UInt64(total)
    let wasDirty = dirty
    dirty = true
    unflushed = true
    if options.fsync == .always { try syncLocked() }
    // The first unsynced frame since a sync gives the interval flusher its deadline; later
    // frames do not wake it again.
    if !wasDirty && syncIntervalNanos > 0 { noteWork() }
    return UInt64(total)
  }

  private func syncLocked() throws(LogError) {
    guard options.fsync != .never else { return }
    if let e = files.sync(fd, .full) {
      throw fail(
        LogError(
          .poisoned, path: path, message: "fsync failed: \(errnoText(e)); writer stopped",
          offset: fileEnd, errno: e))
    }
    dirty = false
    unflushed = false
    syncedEnd = fileEnd
    lastSync = Posix.monotonicNanos()
  }

  /// Poisons the writer with `e` and returns it for throwing.
  private func fail(_ e: LogError) -> LogError {
    poison = e
    return e
  }

  // MARK: Background flusher and close

  func startFlusher() {
    flusherRunning = true
    let t = Thread { [self] in
      files.threadStarted("ListTapeLog flusher")
      flusherLoop()
    }
    t.name = "ListTapeLog flusher"
    t.start()
  }

  private var batchDelayNanos: UInt64 { UInt64(max(options.batchDelay, 0.001) * 1e9) }

  /// The interval policy's period in nanoseconds, or 0 under the other policies.
  private var syncIntervalNanos: UInt64 {
    guard case .interval(let s) = options.fsync else { return 0 }
    return UInt64(max(s, 0.001) * 1e9)
  }

  /// When the flusher next has work: the pending batch reaching `batchDelay`, or the next
  /// interval sync while frames are unsynced; nil when nothing is due until the next append.
  /// Lock held.
  private func nextDeadline() -> UInt64? {
    guard !closed, poison == nil else { return nil }
    var deadline: UInt64?
    if pendingCount > 0 { deadline = pendingSince &+ batchDelayNanos }
    let interval = syncIntervalNanos
    if interval > 0, dirty {
      let d = lastSync &+ interval
      deadline = min(deadline ?? d, d)
    }
    return deadline
  }

  /// Wakes the flusher when it sleeps past work just created (a new batch, an unsynced
  /// frame), so it can sleep without a timeout while the writer is idle. Lock held.
  private func noteWork() {
    guard flusherRunning, let d = nextDeadline(), let sleeping = flusherDeadline, d < sleeping
    else { return }
    cond.signal()
  }

  /// Cuts batches that reached `batchDelay` and runs the interval sync, sleeping in between
  /// until the next deadline, or until signalled when there is none (an idle writer's thread
  /// does not wake).
  private func flusherLoop() {
    cond.lock()
    while !closed {
      var now = Posix.monotonicNanos()
      if poison == nil, pendingCount > 0, now &- pendingSince >= batchDelayNanos { try? cut() }
      let interval = syncIntervalNanos
      if interval > 0, dirty, poison == nil, now &- lastSync >= interval {
        backgroundSync(startedAt: now)
        now = Posix.monotonicNanos()
      }
      guard !closed else { break }
      let deadline = nextDeadline()
      if let deadline, deadline <= now { continue }
      flusherDeadline = deadline ?? .max
      if let deadline {
        _ = cond.wait(until: Date(timeIntervalSinceNow: Double(deadline - now) / 1e9))
      } else {
        cond.wait()
      }
      flusherDeadline = nil
      wakeups += 1
    }
    cond.unlock()
    flusherDone.signal()
  }

  /// The interval policy's sync, run outside the lock so appenders are not blocked; a
  /// barrier on Apple platforms (ordered, not waiting for the drive's cache). Lock held on
  /// entry and exit.
  private func backgroundSync(startedAt now: UInt64) {
    dirty = false
    let end = fileEnd
    cond.unlock()
    let e = files.sync(fd, .barrier)
    cond.lock()
    if let e {
      _ = fail(
        LogError(
          .poisoned, path: path, message: "fsync failed: \(errnoText(e)); writer stopped",
          errno: e))
    } else {
      lastSync = now
      syncedEnd = max(syncedEnd, end)
    }
  }

  var unwrittenEvents: Int { underLock { pendingCount } }

  var flusherWakeups: Int { underLock { wakeups } }

  private func underLock<R>(_ body: () -> R) -> R {
    cond.lock()
    defer { cond.unlock() }
    return body()
  }

  func close() throws(LogError) {
    cond.lock()
    if closed {
      cond.unlock()
      return
    }
    closed = true
    cond.broadcast()
    let running = flusherRunning
    cond.unlock()
    if running { flusherDone.wait() }
    cond.lock()
    defer { cond.unlock() }
    var failure: LogError?
    if poison == nil {
      do throws(LogError) {
        try cut()
        if unflushed { try syncLocked() }
      } catch {
        failure = error
      }
    }
    fdClosed = true
    if let e = files.close(fd), failure == nil, poison == nil {
      failure = .io("close failed", path: path, errno: e)
    }
    if let failure { throw failure }
    if let poison { throw poison }
  }
}
