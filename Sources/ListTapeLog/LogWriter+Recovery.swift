#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Opening a log for appending: a new log's header, or the scan of an existing one, with
// what a crash left at its end cut off and saved aside (docs/log-format.md, "Where reading
// stops" and "Power loss"), and the parity group the log's last frames began.

/// What opening found: the log's header, the scan of its frames (the counters the writer
/// continues), how far it is known synced, what was cut, and the open parity group.
struct PreparedLog {
  var header: FileHeader
  var scan: FrameScan
  var syncedEnd: UInt64
  var recovery: RecoveryReport?
  var parity: ParityGroup?
}

extension WriterCore {
  /// Writes a fresh header or validates the existing log, cutting a torn tail.
  static func prepare(
    fd: Int32, path: String, options: LogWriterOptions, created: Bool, files: any FileLayer
  ) throws(LogError) -> PreparedLog {
    let syncing = options.fsync != .never
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
    var parity: ParityGroup?
    if let options = options.parity {
      guard options.isValid else {
        throw LogError(.io, path: path, message: "invalid parity options \(options)")
      }
      parity = try resumeParity(options, source: source, scan: scan)
    }
    return PreparedLog(
      header: header, scan: scan, syncedEnd: syncedEnd, recovery: recovery, parity: parity)
  }

  /// The parity group the frames after the log's last PARITY frame began: re-read from the
  /// file (at most a few groups of it), so that a group spans sessions; a longer unprotected
  /// run (a log written without parity) is left as it is and a group starts at its end.
  static func resumeParity(
    _ options: ParityOptions, source: ByteSource, scan: FrameScan
  ) throws(LogError) -> ParityGroup {
    let from = scan.parityGroupStart
    guard from <= scan.end, scan.end - from <= 4 * options.groupBytes else {
      return ParityGroup(options: options, start: scan.end)
    }
    var group = ParityGroup(options: options, start: from)
    var pos = from
    while pos < scan.end {
      let n = Int(min(UInt64(1 << 20), scan.end - pos))
      guard let chunk = try source.bytes(at: pos, count: n) else {
        return ParityGroup(options: options, start: scan.end)
      }
      group.add(chunk)
      pos += UInt64(n)
    }
    return group
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
  static func saveAside(
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
    files.protect(name, like: path)
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
}
