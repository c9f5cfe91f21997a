#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads a log without ever locking or changing it, including one a writer is appending to.
///
/// Open validates the header and scans every frame (header and payload checksums, event
/// numbering) into a sparse in-memory index; `refresh()` extends the scan to frames appended
/// since. Not thread safe: use one reader per thread.
package final class LogReader {
  /// The log file (or a label, for in-memory logs).
  package let path: String
  private let fd: Int32?
  let source: ByteSource
  let header: FileHeader
  var scan: FrameScan
  let inflater: Inflater
  private var raw: UnsafeMutableRawPointer
  private var rawCapacity: Int

  /// The log's index file, when it matched the log and was used (2.0 logs).
  package internal(set) var index: LogIndex?
  /// What became of the index file at open.
  package internal(set) var indexStatus = IndexStatus.missing
  /// `exactStretches` for the scan so far (LogReader+Recovery).
  var stretchCache: (key: StretchKey, stretches: [ExactStretch])?

  /// Opens and scans the log at `path`. With `useIndex` (2.0 logs), a valid index file
  /// next to it stands in for the scan of the frames it covers; only later ones are scanned.
  package convenience init(path: String, useIndex: Bool = true) throws(LogError) {
    let fd = try Posix.openFile(path)
    let source: ByteSource
    do throws(LogError) {
      source = try ByteSource(fd: fd, path: path)
    } catch {
      _ = Posix.close(fd)
      throw error
    }
    try self.init(source: source, fd: fd, useIndex: useIndex)
  }

  /// Reads a log held in memory (tests, fuzzing, logs received over the wire).
  package convenience init(bytes: [UInt8], label: String = "<memory>") throws(LogError) {
    try self.init(source: ByteSource(bytes: bytes, path: label), fd: nil)
  }

  private init(source: ByteSource, fd: Int32?, useIndex: Bool = false) throws(LogError) {
    self.path = source.path
    self.fd = fd
    self.source = source
    self.rawCapacity = 64 << 10
    self.raw = UnsafeMutableRawPointer.allocate(byteCount: 64 << 10, alignment: 16)
    do throws(LogError) {
      let header = try FileHeader.read(from: source, path: path)
      guard source.size >= UInt64(header.headerLength) else {
        throw LogError(
          .incompleteHeader, path: path,
          message: "incomplete header: file has \(source.size) of \(header.headerLength) bytes")
      }
      guard let inflater = Inflater() else {
        throw LogError(.io, path: path, message: "zlib inflateInit failed")
      }
      self.header = header
      self.inflater = inflater
      self.scan = FrameScan(
        source: source, salt: header.salt, start: UInt64(header.headerLength),
        major: header.major)
      if useIndex && header.major >= 2 { try adoptIndex() }
      try scan.run(inflater: inflater)
      source.shrink()
    } catch {
      raw.deallocate()
      if let fd { _ = Posix.close(fd) }
      throw error
    }
  }

  deinit {
    raw.deallocate()
    if let fd { _ = Posix.close(fd) }
  }

  // MARK: What the scan found

  /// Events readable in order from event 1 (the last event number, counting lost gaps).
  package var eventCount: UInt64 { scan.lastSeq }
  /// Why the readable prefix ends before the end of the file, or nil if it reaches it.
  ///
  /// While a writer is recording, a `.tornTail` here usually means a frame being written.
  package var stop: LogDamage? { scan.stop }
  /// Byte offset where the readable prefix ends.
  package var validEnd: UInt64 { scan.end }
  /// File size when last scanned.
  package var fileSize: UInt64 { source.size }
  /// Events lost in a salvaged log (first 1024 gaps).
  package var gaps: [LogGap] { scan.gaps }
  /// The log's random identity.
  package var uuid: [UInt8] { header.uuid }
  /// Creation time, milliseconds since the Unix epoch.
  package var createdMillis: UInt64 { header.createdMillis }
  /// Event encoding version recorded by the writer that created the log.
  package var eventCodecVersion: UInt32 { header.eventCodecVersion }
  /// Checkpoint encoding version recorded by the writer that created the log.
  package var stateCodecVersion: UInt32 { header.stateCodecVersion }
  /// Format version of the file.
  package var formatVersion: (major: UInt16, minor: UInt16) { (header.major, header.minor) }

  /// Whether a writer currently holds the log's lock (probes with a shared lock, released at once).
  package var isBeingWritten: Bool {
    guard fd != nil else { return false }
    guard case .success(let probe) = Posix.open(path, O_RDONLY) else { return false }
    defer { _ = Posix.close(probe) }
    if flock(probe, LOCK_SH | LOCK_NB) == 0 {
      _ = flock(probe, LOCK_UN)
      return false
    }
    return errno == EWOULDBLOCK
  }

  /// What the path this reader opened names now: a follower stops once it names another
  /// file or none, having read what its descriptor still holds.
  package enum PathStatus: Sendable, Equatable {
    /// The file this reader opened.
    case same
    /// Nothing: the log was removed (or its directory was).
    case removed
    /// Another file (another inode or device): the log was replaced, say by a rename; or
    /// this file no longer starts with this log's header (another log copied over it in
    /// place between two looks).
    case replaced
  }

  /// Compares the file at `path` with the one open here (`stat` against `fstat`), then the
  /// open file's first bytes with the header read at opening (magic, version, UUID).
  package var pathStatus: PathStatus {
    guard let fd else { return .same }
    var opened = stat()
    guard fstat(fd, &opened) == 0 else { return .same }
    var named = stat()
    guard stat(path, &named) == 0 else {
      return errno == ENOENT || errno == ENOTDIR ? .removed : .same
    }
    guard opened.st_ino == named.st_ino && opened.st_dev == named.st_dev else { return .replaced }
    return startsWithOwnHeader(fd) ? .same : .replaced
  }

  /// Whether the file open as `fd` still starts with the header this reader read (its
  /// first 32 bytes: magic, version, header length and UUID); a read error says yes (the
  /// next read of frames reports it).
  private func startsWithOwnHeader(_ fd: Int32) -> Bool {
    let identity = 32
    let expected = header.encode()
    return withUnsafeTemporaryAllocation(byteCount: identity, alignment: 1) { buffer in
      guard let base = buffer.baseAddress,
        let n = try? Posix.pread(fd, base, identity, 0, path: path)
      else { return true }
      guard n == identity else { return false }
      return UnsafeRawBufferPointer(start: base, count: identity).elementsEqual(
        expected.prefix(identity))
    }
  }

  /// Picks up complete frames appended since the last scan; returns how many events arrived.
  ///
  /// A partial frame at the end stays "not yet" (`stop` says torn tail) until it completes.
  @discardableResult
  package func refresh() throws(LogError) -> UInt64 {
    let before = scan.lastSeq
    try source.refresh()
    try scan.run(inflater: inflater)
    source.shrink()
    return scan.lastSeq - before
  }

  // MARK: Records

  /// Calls `body` with each record numbered `from...through` (clamped to the readable prefix),
  /// in order; returns the last event number delivered (or `from - 1` if none).
  ///
  /// `body` gets a view into the inflated frame, valid only during the call: copy what you keep.
  /// Memory is bounded by one frame. Throws `.damaged` if a frame no longer decodes (the
  /// records before it were delivered), `.io` on read errors. `body` must not use this reader.
  /// - Complexity: O(frames from the nearest index mark to `through`).
  @discardableResult
  package func forEachRecord(
    from: UInt64 = 1, through: UInt64 = .max, _ body: (UInt64, UnsafeRawBufferPointer) -> Void
  ) throws(LogError) -> UInt64 {
    guard header.major == 1 else {
      throw LogError(
        .unsupportedVersion, path: path,
        message:
          "format \(header.major).\(header.minor) event frames hold no records; read them by frame")
    }
    let first = max(from, 1)
    let last = min(through, scan.lastSeq)
    guard first <= last else { return first - 1 }
    let marks = scan.marks
    let lo = Self.countThrough(first, in: marks)
    var offset = lo > 0 ? marks[lo - 1].offset : UInt64(header.headerLength)
    var delivered = first - 1
    while offset < scan.end && delivered < last {
      let h = try frameHeader(at: offset, lastGood: delivered)
      if h.type == Format.typeEvents {
        let frameLast = h.firstSeq + UInt64(h.eventCount) - 1
        if frameLast >= first {
          let p = try inflate(h, at: offset, lastGood: delivered)
          try deliver(h, p, at: offset, from: first, through: last, body)
          delivered = min(frameLast, last)
        }
      }
      offset += h.frameLength
    }
    return delivered
  }

  /// The first event number after `seq` that an events frame holds, nil when none does:
  /// reads frame headers only, so a loop over windows of event numbers jumps a lost gap of
  /// any size instead of stepping through it.
  /// - Complexity: O(frames from the nearest index mark to the answer).
  package func firstRecordedEvent(after seq: UInt64) throws(LogError) -> UInt64? {
    guard seq < scan.lastSeq else { return nil }
    let marks = scan.marks
    let lo = Self.countThrough(seq &+ 1, in: marks)
    var offset = lo > 0 ? marks[lo - 1].offset : UInt64(header.headerLength)
    while offset < scan.end {
      let h = try frameHeader(at: offset, lastGood: seq)
      if h.type == Format.typeEvents, h.eventCount > 0 {
        let frameLast = h.firstSeq + UInt64(h.eventCount) - 1
        if frameLast > seq { return max(h.firstSeq, seq + 1) }
      }
      offset += h.frameLength
    }
    return nil
  }

  /// The latest checkpoint folding at most `seq` events, with its state bytes.
  ///
  /// Seek to N = decode this state, then `forEachRecord(from: cp.seq + 1, through: N)`.
  /// (Past 262,144 checkpoints the index thins them, so an older one may be chosen.)
  package func checkpoint(atOrBefore seq: UInt64) throws(LogError) -> (seq: UInt64, state: [UInt8])?
  {
    let cps = scan.checkpoints
    let lo = Self.countThrough(seq, in: cps)
    guard lo > 0 else { return nil }
    let mark = cps[lo - 1]
    let h = try frameHeader(at: mark.offset, lastGood: mark.seq)
    guard h.type == Format.typeCheckpoint, h.firstSeq == mark.seq else {
      throw damage(at: mark.offset, lastGood: mark.seq, .fileChanged)
    }
    let p = try inflate(h, at: mark.offset, lastGood: mark.seq)
    let state = [UInt8](p)
    if rawCapacity > (4 << 20) { shrinkRaw() }
    return (h.firstSeq, state)
  }

  /// Frames, checkpoint frames and checkpoint bytes the scan accepted (for `stats`, without
  /// the second full pass `verify()` makes).
  package var frameCounts: (frames: Int, checkpoints: Int, checkpointBytes: UInt64) {
    (scan.frames, scan.checkpointFrames, scan.checkpointBytes)
  }

  /// Sequence numbers of checkpoints in the index, in order.
  package var checkpointSeqs: [UInt64] { scan.checkpoints.map(\.seq) }

  /// Number of checkpoints in the index.
  package var checkpointCount: Int { scan.checkpoints.count }

  /// The event count of the latest indexed checkpoint at or before `seq` (no I/O).
  package func checkpointSeq(atOrBefore seq: UInt64) -> UInt64? {
    let n = Self.countThrough(seq, in: scan.checkpoints)
    return n > 0 ? scan.checkpoints[n - 1].seq : nil
  }

  /// How many index entries (sorted by `seq`) have a `seq` at or before `seq`.
  static func countThrough(_ seq: UInt64, in entries: [Mark]) -> Int {
    var lo = 0
    var hi = entries.count
    while lo < hi {
      let mid = (lo + hi) / 2
      if entries[mid].seq <= seq { lo = mid + 1 } else { hi = mid }
    }
    return lo
  }

  // MARK: Frame decoding

  /// Re-reads and re-checks a frame header the scan accepted (the file may have changed since).
  func frameHeader(at offset: UInt64, lastGood: UInt64) throws(LogError) -> FrameHeader {
    guard let hb = try source.bytes(at: offset, count: Format.frameHeaderLength),
      let h = FrameHeader.decode(hb, salt: header.salt),
      h.offsetLow == UInt32(truncatingIfNeeded: offset), h.shapeProblem(major: header.major) == nil
    else { throw damage(at: offset, lastGood: lastGood, .fileChanged) }
    return h
  }

  /// The frame's payload inflated into the reusable raw buffer, after a payload CRC check;
  /// with `prefix`, only as far as it asks (the rest of the deflate stream is not read).
  func inflate(_ h: FrameHeader, at offset: UInt64, lastGood: UInt64, prefix: FramePrefix? = nil)
    throws(LogError) -> UnsafeRawBufferPointer
  {
    let start = offset + UInt64(Format.frameHeaderLength)
    guard let pb = try source.bytes(at: start, count: Int(h.payloadLength)) else {
      throw damage(at: offset, lastGood: lastGood, .fileChanged)
    }
    guard crc32Bytes(0, pb) == h.payloadCRC else {
      throw damage(at: offset, lastGood: lastGood, .payloadChecksum)
    }
    let n = Int(h.rawLength)
    if n > rawCapacity {
      raw.deallocate()
      rawCapacity = n
      raw = UnsafeMutableRawPointer.allocate(byteCount: n, alignment: 16)
    }
    let out = UnsafeMutableRawBufferPointer(start: raw, count: n)
    guard h.isCompressed else {
      out.copyMemory(from: pb)
      return UnsafeRawBufferPointer(out)
    }
    if let prefix, n > prefix.head {
      switch inflater.inflatePrefix(pb, into: out, head: prefix.head, want: prefix.want) {
      case .success(let got): return UnsafeRawBufferPointer(rebasing: out[0..<got])
      case .failure(let f): throw damage(at: offset, lastGood: lastGood, .decompression(f.why))
      }
    }
    if let err = inflater.inflateExact(pb, into: out) {
      throw damage(at: offset, lastGood: lastGood, .decompression(err))
    }
    return UnsafeRawBufferPointer(out)
  }

  func shrinkRaw() {
    raw.deallocate()
    rawCapacity = 64 << 10
    raw = UnsafeMutableRawPointer.allocate(byteCount: rawCapacity, alignment: 16)
  }

  /// Splits an inflated EVENTS payload into records and hands those in range to `body`.
  private func deliver(
    _ h: FrameHeader, _ p: UnsafeRawBufferPointer, at offset: UInt64, from: UInt64,
    through: UInt64, _ body: (UInt64, UnsafeRawBufferPointer) -> Void
  ) throws(LogError) {
    // Validate the framing of the whole frame first, so a bad frame delivers nothing.
    if let problem = RecordFraming.check(p, count: Int(h.eventCount)) {
      throw damage(at: offset, lastGood: h.firstSeq - 1, .recordFraming(problem))
    }
    guard let base = p.baseAddress else { return }
    var pos = 0
    var seq = h.firstSeq
    let end = min(through, h.firstSeq + UInt64(h.eventCount) - 1)
    while seq <= end {
      let (len, used) = RecordFraming.length(base, pos)
      pos += used
      if seq >= from { body(seq, UnsafeRawBufferPointer(start: base + pos, count: len)) }
      pos += len
      seq += 1
    }
  }

  func damage(at offset: UInt64, lastGood: UInt64, _ reason: DamageReason) -> LogError {
    let d = LogDamage(
      kind: .damaged, offset: offset, bytesToEnd: source.size &- offset, lastGoodEvent: lastGood,
      reason: reason)
    return .damaged(d, path: path)
  }

  // MARK: Verify

  /// Re-reads the whole file: every checksum, every inflate, every record's framing, numbering.
  ///
  /// Scans afresh (not from the index), so it also sees bytes appended since open.
  package func verify() throws(LogError) -> VerifyReport {
    try source.refresh()
    var s = FrameScan(
      source: source, salt: header.salt, start: UInt64(header.headerLength), major: header.major)
    try s.run(inflater: inflater)
    var status = VerifyReport.Status.intact
    if let stop = s.stop {
      status = stop.kind == .tornTail ? .tornTail(stop) : .damaged(stop)
    }
    // Decode every accepted frame; the first that fails ends the verified prefix.
    var offset = UInt64(header.headerLength)
    var report = VerifyReport(
      status: status, frames: s.frames, eventFrames: s.eventFrames,
      checkpointFrames: s.checkpointFrames, metaFrames: s.metaFrames,
      skippedFrames: s.skippedFrames, events: s.lastSeq, fileBytes: source.size,
      headerBytes: UInt64(header.headerLength),
      frameHeaderBytes: UInt64(s.frames * Format.frameHeaderLength),
      payloadBytes: s.payloadBytes, rawBytes: s.rawBytes, checkpointBytes: s.checkpointBytes,
      gaps: s.gapCount)
    var lastGood: UInt64 = 0
    while offset < s.end {
      let h = try frameHeader(at: offset, lastGood: lastGood)
      do throws(LogError) {
        let p = try inflate(h, at: offset, lastGood: lastGood)
        if h.type == Format.typeEvents, header.major == 1,
          let problem = RecordFraming.check(p, count: Int(h.eventCount))
        {
          throw damage(at: offset, lastGood: lastGood, .recordFraming(problem))
        }
      } catch {
        guard var d = error.damage else { throw error }
        d.bytesToEnd = source.size - offset
        if let (next, nh) = try s.findFrame(from: offset + 1) {
          d.nextFrameOffset = next
          d.nextEvent = nh.type == Format.typeCheckpoint ? nh.firstSeq &+ 1 : nh.firstSeq
        }
        report.status = .damaged(d)
        report.events = lastGood
        break
      }
      if h.type == Format.typeEvents { lastGood = h.firstSeq + UInt64(h.eventCount) - 1 }
      offset += h.frameLength
    }
    if rawCapacity > (4 << 20) { shrinkRaw() }
    source.shrink()
    return report
  }
}

/// What `verify()` found, with the counts `stats` prints.
package struct VerifyReport: Sendable, Equatable {
  /// Overall verdict.
  package enum Status: Sendable, Equatable {
    /// Every byte of the file belongs to a valid frame.
    case intact
    /// The file ends in bytes that are not a complete frame; nothing readable follows.
    case tornTail(LogDamage)
    /// A bad frame with readable data after it, or a frame that fails to decode.
    case damaged(LogDamage)
  }

  /// Intact, torn tail or damaged.
  package var status: Status
  /// Valid frames of every type.
  package var frames: Int
  /// Valid EVENTS frames.
  package var eventFrames: Int
  /// Valid CHECKPOINT frames.
  package var checkpointFrames: Int
  /// Valid META frames.
  package var metaFrames: Int
  /// Valid frames of skippable extension types.
  package var skippedFrames: Int
  /// Events readable in order (the last good event number).
  package var events: UInt64
  /// File size.
  package var fileBytes: UInt64
  /// File header size.
  package var headerBytes: UInt64
  /// Frame header bytes of valid frames.
  package var frameHeaderBytes: UInt64
  /// Compressed payload bytes of valid frames.
  package var payloadBytes: UInt64
  /// Inflated payload bytes of valid frames.
  package var rawBytes: UInt64
  /// On-disk bytes of checkpoint frames (header included).
  package var checkpointBytes: UInt64
  /// META gap frames (events lost by a salvage).
  package var gaps: Int
}

/// The record framing inside an EVENTS payload: each record is a LEB128 length, then its bytes.
enum RecordFraming {
  /// nil if `p` holds exactly `count` well-formed records, else what is wrong.
  static func check(_ p: UnsafeRawBufferPointer, count: Int) -> String? {
    guard let base = p.baseAddress else { return count == 0 ? nil : "empty payload" }
    var pos = 0
    var n = 0
    let size = p.count
    while pos < size {
      var len = 0
      var shift = 0
      while true {
        guard pos < size else { return "truncated length in record \(n + 1)" }
        let b = base.load(fromByteOffset: pos, as: UInt8.self)
        pos += 1
        guard shift < 28 || (shift == 28 && b < 0x10) else { return "length overflow" }
        len |= Int(b & 0x7F) << shift
        if b < 0x80 { break }
        shift += 7
      }
      guard len <= size - pos else { return "record \(n + 1) runs past the frame" }
      pos += len
      n += 1
      guard n <= count else { return "more than \(count) records" }
    }
    return n == count ? nil : "\(n) records, header says \(count)"
  }

  /// The length prefix at `pos` of an already checked payload: (length, prefix bytes).
  @inline(__always)
  static func length(_ base: UnsafeRawPointer, _ pos: Int) -> (Int, Int) {
    let b0 = base.load(fromByteOffset: pos, as: UInt8.self)
    if b0 < 0x80 { return (Int(b0), 1) }
    var len = Int(b0 & 0x7F)
    var shift = 7
    var used = 1
    while true {
      let b = base.load(fromByteOffset: pos + used, as: UInt8.self)
      used += 1
      len |= Int(b & 0x7F) << shift
      if b < 0x80 { return (len, used) }
      shift += 7
    }
  }

  /// Appends the LEB128 encoding of `n` at `p`; returns bytes written (1...5).
  @inline(__always)
  static func putLength(_ n: Int, _ p: UnsafeMutableRawPointer) -> Int {
    var v = UInt32(truncatingIfNeeded: n)
    var i = 0
    while v >= 0x80 {
      p.storeBytes(of: UInt8(truncatingIfNeeded: v) | 0x80, toByteOffset: i, as: UInt8.self)
      v >>= 7
      i += 1
    }
    p.storeBytes(of: UInt8(v), toByteOffset: i, as: UInt8.self)
    return i + 1
  }
}

extension LogReader {
  /// Inflates every EVENTS frame and nothing else: the zlib floor that replay is measured
  /// against by listtape-bench. Returns the inflated byte count.
  package func inflateAllEventFrames() throws(LogError) -> Int {
    var offset = UInt64(header.headerLength)
    var total = 0
    while offset < scan.end {
      let h = try frameHeader(at: offset, lastGood: 0)
      if h.type == Format.typeEvents {
        total += try inflate(h, at: offset, lastGood: 0).count
      }
      offset += h.frameLength
    }
    return total
  }
}
