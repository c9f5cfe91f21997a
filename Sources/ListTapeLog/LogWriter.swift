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
public final class LogWriter: @unchecked Sendable {
  /// The log file.
  public let path: String
  /// What was cut from a torn tail when the log was opened, or nil if nothing was.
  public let recovery: RecoveryReport?
  private let core: WriterCore

  private init(path: String, recovery: RecoveryReport?, core: WriterCore) {
    self.path = path
    self.recovery = recovery
    self.core = core
  }

  deinit { try? core.close() }

  /// Creates the log (header written, file and directory fsynced) or opens it for appending.
  ///
  /// Takes an exclusive lock (a second writer fails at once with `.locked`). On an existing log
  /// it scans every frame: a torn tail is cut, saved to `<path>.tail-<offset>.broken` and
  /// described in `recovery`; mid-file damage throws `.damaged` (see `LogReader.salvage`).
  ///
  /// `frames` makes the payload of each event frame of a 2.0 log (ignored for a 1.0 log);
  /// without it a 2.0 event frame holds its records as they are.
  public static func open(
    path: String, options: LogWriterOptions = LogWriterOptions(),
    frames: (any FramePayloadEncoder)? = nil
  ) throws(LogError) -> LogWriter {
    var created = false
    let fd: Int32
    switch Posix.open(path, O_RDWR | O_APPEND | O_CREAT | O_EXCL) {
    case .success(let f):
      fd = f
      created = true
    case .failure(EEXIST):
      switch Posix.open(path, O_RDWR | O_APPEND) {
      case .success(let f): fd = f
      case .failure(let e): throw .io("cannot open", path: path, errno: e)
      }
    case .failure(let e):
      throw .io("cannot create", path: path, errno: e)
    }
    do throws(LogError) {
      try lock(fd, path: path)
      let (core, recovery) = try WriterCore.prepare(
        fd: fd, path: path, options: options, created: created, frames: frames)
      core.startFlusher()
      return LogWriter(path: path, recovery: recovery, core: core)
    } catch {
      _ = Posix.close(fd)
      throw error
    }
  }

  /// flock(LOCK_EX|LOCK_NB), retried for a few milliseconds so a reader's liveness probe
  /// (a momentary shared lock) is not mistaken for a writer.
  private static func lock(_ fd: Int32, path: String) throws(LogError) {
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
  public var eventCount: UInt64 { core.eventCount }

  /// The log's format major version (1 or 2): an existing log keeps its own.
  public var formatMajor: UInt16 { core.major }

  /// Appends one record (an encoded event); it is written with its frame.
  /// - Complexity: amortised O(record size); a frame cut compresses and writes.
  public func append(_ record: UnsafeRawBufferPointer) throws(LogError) {
    try core.append(record)
  }

  /// Appends one record held in an array.
  public func append(_ record: [UInt8]) throws(LogError) {
    let failure: LogError? = record.withUnsafeBytes { p in
      do throws(LogError) { try core.append(p) } catch { return error }
      return nil
    }
    if let failure { throw failure }
  }

  /// True when the caller should call `appendCheckpoint` with the state after `eventCount` events.
  public var checkpointDue: Bool { core.checkpointDue }

  /// Writes the folded state after exactly `eventCount` events (pending events are cut first).
  /// `flushPoints` are offsets where the compressor starts a new block (one per column).
  public func appendCheckpoint(_ state: UnsafeRawBufferPointer, flushPoints: [Int] = [])
    throws(LogError)
  {
    try core.appendFrame(Format.typeCheckpoint, state, flushPoints: flushPoints)
  }

  /// Writes the folded state held in an array.
  public func appendCheckpoint(_ state: [UInt8], flushPoints: [Int] = []) throws(LogError) {
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
  public func appendDictionary(_ entries: [UInt8], flushPoints: [Int] = []) throws(LogError) {
    let failure: LogError? = entries.withUnsafeBytes { p in
      do throws(LogError) {
        try core.appendFrame(Format.typeDictionary, p, flushPoints: flushPoints)
      } catch { return error }
      return nil
    }
    if let failure { throw failure }
  }

  /// Format 2.0: the event number the current segment began before (0: the log's start).
  public var segment: UInt64 { core.currentSegment }

  /// Writes the pending frame now (kill -9 safe once this returns).
  public func flush() throws(LogError) { try core.flush() }

  /// Writes the pending frame and fdatasyncs (power-loss safe once this returns).
  public func sync() throws(LogError) { try core.sync() }

  /// Flushes, syncs (unless the policy is `.never`), stops the background thread, unlocks.
  public func close() throws(LogError) { try core.close() }
}

/// The writer's state, shared with its background flusher thread; every field behind `cond`.
final class WriterCore: @unchecked Sendable {
  let path: String
  let options: LogWriterOptions
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
  private var segmentStart = true
  private var poison: LogError?
  private var closed = false
  private var fdClosed = false
  private var dirty = false
  private var lastSync: UInt64
  private var eventsSinceCheckpoint: UInt64
  private var bytesSinceCheckpoint: UInt64
  private var lastCheckpointLength: UInt64
  private let maxEvents: Int
  private let maxRaw: Int

  private init(
    fd: Int32, path: String, options: LogWriterOptions, header: FileHeader, deflater: Deflater,
    scan: FrameScan, frames: (any FramePayloadEncoder)?
  ) {
    self.fd = fd
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
    if !fdClosed { _ = Posix.close(fd) }
  }

  // MARK: Open and recovery

  /// Writes a fresh header or validates the existing log, cutting a torn tail.
  static func prepare(
    fd: Int32, path: String, options: LogWriterOptions, created: Bool,
    frames: (any FramePayloadEncoder)?
  ) throws(LogError) -> (WriterCore, RecoveryReport?) {
    let syncing = options.fsync != .never
    guard let deflater = Deflater(level: min(max(options.compressionLevel, 0), 9)) else {
      throw LogError(.io, path: path, message: "zlib deflateInit failed")
    }
    let source = try ByteSource(fd: fd, path: path)
    var recovery: RecoveryReport?
    var header: FileHeader
    if created || source.size == 0 {
      header = try initialize(fd: fd, path: path, options: options, syncing: syncing)
    } else if source.size < UInt64(Format.headerLength) {
      // Only a crash during creation leaves a short header; no event was ever written.
      guard let hb = try source.bytes(at: 0, count: Int(source.size)) else {
        throw LogError(.io, path: path, message: "cannot read header")
      }
      _ = try FileHeader.decode(hb, path: path)  // throws notALog unless a magic prefix
      let saved = try saveAside(source: source, from: 0, path: path, syncing: syncing)
      guard ftruncate(fd, 0) == 0 else { throw .io("cannot truncate", path: path, errno: errno) }
      header = try initialize(fd: fd, path: path, options: options, syncing: syncing)
      recovery = RecoveryReport(
        offset: 0, bytesCut: source.size, savedTo: saved, lastGoodEvent: 0,
        reason: .incompleteHeader)
    } else {
      guard let hb = try source.bytes(at: 0, count: Format.headerLength) else {
        throw LogError(.io, path: path, message: "cannot read header")
      }
      header = try FileHeader.decode(hb, path: path)
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
    if let stop = scan.stop {
      guard stop.kind == .tornTail else {
        var e = LogError.damaged(stop, path: path)
        e.message = "cannot append: \(e.message); salvage the log into a new file"
        throw e
      }
      let saved = try saveAside(source: source, from: stop.offset, path: path, syncing: syncing)
      guard ftruncate(fd, off_t(stop.offset)) == 0 else {
        throw .io("cannot cut torn tail", path: path, errno: errno, offset: stop.offset)
      }
      if syncing, let e = Posix.dataSync(fd) {
        throw .io("cannot sync after cutting torn tail", path: path, errno: e)
      }
      recovery = RecoveryReport(
        offset: stop.offset, bytesCut: stop.bytesToEnd, savedTo: saved,
        lastGoodEvent: stop.lastGoodEvent, reason: stop.reason)
    }
    let core = WriterCore(
      fd: fd, path: path, options: options, header: header, deflater: deflater, scan: scan,
      frames: frames)
    return (core, recovery)
  }

  /// Writes a new header and makes it and the directory entry durable.
  private static func initialize(
    fd: Int32, path: String, options: LogWriterOptions, syncing: Bool
  ) throws(LogError) -> FileHeader {
    let header = FileHeader(
      major: Format.readableMajors.contains(options.formatMajor)
        ? options.formatMajor : Format.latestMajor,
      uuid: randomUUID(), createdMillis: Posix.nowMillis(),
      eventCodecVersion: options.eventCodecVersion, stateCodecVersion: options.stateCodecVersion,
      levelHint: UInt8(min(max(options.compressionLevel, 0), 9)))
    let bytes = header.encode()
    if let e = bytes.withUnsafeBytes({ Posix.writeAll(fd, $0) }) {
      throw .io("cannot write header", path: path, errno: e)
    }
    if syncing {
      if let e = Posix.dataSync(fd) { throw .io("cannot sync header", path: path, errno: e) }
      if let e = Posix.syncDirectory(of: path) {
        throw .io("cannot sync directory", path: path, errno: e)
      }
    }
    return header
  }

  /// Copies `[from, EOF)` to `<path>.tail-<from>.broken` (a free name) before it is cut.
  private static func saveAside(source: ByteSource, from: UInt64, path: String, syncing: Bool)
    throws(LogError) -> String
  {
    var name = "\(path).tail-\(from).broken"
    var fd: Int32 = -1
    for n in 0..<100 {
      if n > 0 { name = "\(path).tail-\(from).broken.\(n)" }
      switch Posix.open(name, O_WRONLY | O_CREAT | O_EXCL) {
      case .success(let f): fd = f
      case .failure(EEXIST): continue
      case .failure(let e): throw .io("cannot save torn tail to \(name)", path: path, errno: e)
      }
      break
    }
    guard fd >= 0 else {
      throw LogError(.io, path: path, message: "too many saved tails named \(name)")
    }
    defer { _ = Posix.close(fd) }
    var pos = from
    while pos < source.size {
      let n = Int(min(UInt64(1 << 20), source.size - pos))
      guard let chunk = try source.bytes(at: pos, count: n) else { break }
      if let e = Posix.writeAll(fd, chunk) {
        throw .io("cannot save torn tail to \(name)", path: path, errno: e)
      }
      pos += UInt64(n)
    }
    if syncing {
      if let e = Posix.dataSync(fd) { throw .io("cannot sync \(name)", path: path, errno: e) }
      if let e = Posix.syncDirectory(of: name) {
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
    if pendingCount == 0 {
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
    if pendingCount >= maxEvents || pendingBytes >= maxRaw { try cut() }
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
    if segmentStart { flags |= Format.flagSegmentStart }
    let h = FrameHeader(
      type: type, flags: flags, eventCount: UInt16(count), firstSeq: firstSeq,
      payloadLength: UInt32(payloadLength), rawLength: UInt32(raw.count),
      offsetLow: UInt32(truncatingIfNeeded: fileEnd), payloadCRC: crc32Bytes(0, payload))
    h.encode(into: UnsafeMutableRawBufferPointer(start: out, count: headerLength), salt: salt)
    let total = headerLength + payloadLength
    if let e = Posix.writeAll(fd, UnsafeRawBufferPointer(start: out, count: total)) {
      _ = ftruncate(fd, off_t(fileEnd))  // drop a partial frame, as Redis does
      throw fail(
        LogError(
          .poisoned, path: path, message: "write failed: \(errnoText(e)); writer stopped",
          offset: fileEnd, lastGoodEvent: firstSeq - 1, errno: e))
    }
    fileEnd += UInt64(total)
    segmentStart = false
    dirty = true
    if options.fsync == .always { try syncLocked() }
    return UInt64(total)
  }

  private func syncLocked() throws(LogError) {
    guard options.fsync != .never else { return }
    if let e = Posix.dataSync(fd) {
      throw fail(
        LogError(
          .poisoned, path: path, message: "fsync failed: \(errnoText(e)); writer stopped",
          offset: fileEnd, errno: e))
    }
    dirty = false
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
    let t = Thread { [self] in flusherLoop() }
    t.name = "ListTapeLog flusher"
    t.start()
  }

  private func flusherLoop() {
    let delay = UInt64(max(options.batchDelay, 0.001) * 1e9)
    var interval: UInt64 = 0
    if case .interval(let s) = options.fsync { interval = UInt64(max(s, 0.001) * 1e9) }
    let tickNanos = max(min(delay / 2, interval == 0 ? delay / 2 : interval / 4), 1_000_000)
    let tick = min(Double(tickNanos) / 1e9, 0.1)
    cond.lock()
    while !closed {
      _ = cond.wait(until: Date(timeIntervalSinceNow: tick))
      if closed || poison != nil { continue }
      let now = Posix.monotonicNanos()
      if pendingCount > 0 && now &- pendingSince >= delay { try? cut() }
      if interval > 0, dirty, poison == nil, now &- lastSync >= interval {
        dirty = false
        cond.unlock()
        let e = Posix.dataSync(fd)
        cond.lock()
        if let e {
          _ = fail(
            LogError(
              .poisoned, path: path, message: "fsync failed: \(errnoText(e)); writer stopped",
              errno: e))
        } else {
          lastSync = now
        }
      }
    }
    cond.unlock()
    flusherDone.signal()
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
        if dirty { try syncLocked() }
      } catch {
        failure = error
      }
    }
    fdClosed = true
    if Posix.close(fd) != 0, failure == nil, poison == nil {
      failure = .io("close failed", path: path, errno: errno)
    }
    if let failure { throw failure }
    if let poison { throw poison }
  }
}
