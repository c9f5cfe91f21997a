#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A run of bytes in the damaged log that held no usable frame.
public struct ByteRange: Sendable, Equatable {
  /// First byte of the run.
  public var offset: UInt64
  /// Length of the run.
  public var length: UInt64
}

/// What `LogReader.salvage(from:to:)` kept and lost.
public struct SalvageReport: Sendable, Equatable, CustomStringConvertible {
  /// Frames copied into the new log (META gap frames it added not counted).
  public var framesKept = 0
  /// Events copied.
  public var eventsKept: UInt64 = 0
  /// The last event number of the new log (gaps included).
  public var lastEvent: UInt64 = 0
  /// Lost event ranges, each recorded in the new log as a META gap frame.
  public var gaps: [LogGap] = []
  /// Byte runs of the old log that were skipped.
  public var damagedRanges: [ByteRange] = []
  /// Where a dictionary frame was lost without any event (the events of its segment do not
  /// decode): the event number of the META frame (kind 2) recording it, before which it
  /// stood.
  package var lostRestarts: [UInt64] = []
  /// Valid frames skipped because they repeat or precede events already kept.
  public var framesDropped = 0
  /// Where salvage gave up because the file is full of frame headers whose payloads do not
  /// check out (only a crafted file gets there); nil when it read the whole file.
  public var gaveUpAt: UInt64?
  /// Damaged blocks rebuilt exactly from the log's PARITY frames before anything was read.
  package var repaired: [ByteRange] = []
  /// Damaged blocks that PARITY frames cover but could not rebuild (too much damage in one
  /// group).
  package var unrepaired: [ByteRange] = []

  /// The same in words, for people.
  public var description: String {
    let lost = gaps.reduce(UInt64(0)) { $0 + $1.count }
    var summary =
      "kept \(eventsKept) events in \(framesKept) frames; lost \(lost) events in \(gaps.count) gaps; "
      + "skipped \(damagedRanges.count) damaged ranges and \(framesDropped) stray frames"
    if !repaired.isEmpty {
      let bytes = repaired.reduce(UInt64(0)) { $0 + $1.length }
      summary += "; rebuilt \(bytes) damaged bytes from parity"
    }
    guard let gaveUpAt else { return summary }
    return summary
      + "; gave up at byte \(gaveUpAt): too many frame headers there whose payloads do not check "
      + "out (a crafted file?), the rest is counted as damaged"
  }
}

extension LogReader {
  /// Writes a new log at `destination` holding every readable frame of `source`, in order.
  ///
  /// Resynchronises past damage by searching for frame headers of the source log (even
  /// ones displaced from their offsets); a jump in event numbers becomes a META gap frame.
  /// Event numbers are preserved, so event N means the same event in both logs. The new
  /// log gets a fresh identity and is renamed into place only after fsync. The source's
  /// header must be intact. Folding across a gap needs a checkpoint after it.
  public static func salvage(from source: String, to destination: String) throws(LogError)
    -> SalvageReport
  {
    try salvage(from: source, to: destination, files: SystemFiles.shared)
  }

  /// `salvage(from:to:)` for a 2.0 log whose payloads `segments` can place: it tells the
  /// segment an EVENTS or CHECKPOINT payload (inflated) belongs to, the event number its
  /// DICTIONARY frame came before (0: the log's start), or nil. With it, salvage notices a
  /// dictionary frame lost without any event (the frames after it name a segment whose
  /// dictionary it never kept): it records that with a META frame (kind 2), which readers
  /// treat as a gap of no event, and drops the checkpoints of that segment (they cannot be
  /// decoded without its dictionary).
  package static func salvage(
    from source: String, to destination: String, segments: SegmentOfPayload?
  ) throws(LogError) -> SalvageReport {
    try salvage(from: source, to: destination, files: SystemFiles.shared, segments: segments)
  }

  /// What `salvage(from:to:segments:)` asks of a payload: (whether it is a checkpoint, the
  /// inflated payload) → its segment.
  package typealias SegmentOfPayload = (_ checkpoint: Bool, _ payload: UnsafeRawBufferPointer) ->
    UInt64?

  /// `salvage(from:to:)`, setting the new file's protection class through `files` (tests).
  static func salvage(
    from source: String, to destination: String, files: any FileLayer,
    segments: SegmentOfPayload? = nil
  )
    throws(LogError) -> SalvageReport
  {
    var st = stat()
    if lstat(destination, &st) == 0 {
      throw LogError(.exists, path: destination, message: "salvage target already exists")
    }
    let srcFD = try Posix.openFile(source)
    defer { _ = Posix.close(srcFD) }
    let src = try ByteSource(fd: srcFD, path: source)
    let oldHeader = try FileHeader.read(from: src, path: source)
    var newHeader = oldHeader
    newHeader.uuid = randomUUID()
    newHeader.createdMillis = Posix.nowMillis()
    newHeader.headerLength = UInt32(Format.headerLength)
    newHeader.minor = Format.minor

    let tmp = "\(destination).salvage-\(getpid())"
    let dstFD: Int32
    switch Posix.open(tmp, O_WRONLY | O_CREAT | O_EXCL) {
    case .success(let f): dstFD = f
    case .failure(let e): throw .io("cannot create", path: tmp, errno: e)
    }
    files.protect(tmp, like: source)
    var ok = false
    defer {
      _ = Posix.close(dstFD)
      if !ok { _ = unlink(tmp) }
    }
    guard let inflater = Inflater(), let deflater = Deflater(level: 6) else {
      throw LogError(.io, path: source, message: "zlib init failed")
    }
    var out = SalvageWriter(
      fd: dstFD, path: tmp, salt: newHeader.salt, end: 0)
    try out.write(newHeader.encode())
    if oldHeader.major >= 2 { out.parity = ParityGroup(options: ParityOptions(), start: out.end) }

    let scan = FrameScan(
      source: src, salt: oldHeader.salt, start: UInt64(oldHeader.headerLength),
      major: oldHeader.major)
    var report = SalvageReport()
    // First what the log's parity can rebuild: the rest of salvage then reads those blocks
    // as they were written.
    let repairs = try scan.parityRepairs()
    if !repairs.patches.isEmpty { src.patch(repairs.patches) }
    report.repaired = repairs.patches.map { ByteRange(offset: $0.0, length: UInt64($0.1.count)) }
    report.unrepaired = repairs.unrepaired
    var nextSeq: UInt64 = 1
    var offset = UInt64(oldHeader.headerLength)
    var damageStart: UInt64?
    var scratch: [UInt8] = []
    // 2.0: the segment of the frames kept last, and whether its dictionary frame was kept
    // (the log's start needs none).
    var segment: UInt64 = 0
    var segmentKept = true
    // The event after the last one an intact event frame header vouches for.
    var claimedEnd: UInt64 = 0
    let segments = oldHeader.major >= 2 ? segments : nil

    /// Records a META gap frame for events `nextSeq..<upTo`.
    func gap(upTo: UInt64) throws(LogError) {
      guard upTo > nextSeq else { return }
      let lost = LogGap(firstEvent: nextSeq, count: upTo - nextSeq)
      var raw: [UInt8] = [Format.metaGap]
      withUnsafeBytes(of: lost.count.littleEndian) { raw += $0 }
      try out.writeCompressed(type: Format.typeMeta, firstSeq: nextSeq, raw: raw, deflater)
      report.gaps.append(lost)
      nextSeq = upTo
    }

    /// Records that the dictionary frame of segment `lost` was lost with no event: a META
    /// frame (kind 2) before event `nextSeq`.
    func lostRestart(_ lost: UInt64) throws(LogError) {
      var raw: [UInt8] = [Format.metaLostRestart]
      withUnsafeBytes(of: lost.littleEndian) { raw += $0 }
      try out.writeCompressed(type: Format.typeMeta, firstSeq: nextSeq, raw: raw, deflater)
      report.lostRestarts.append(nextSeq)
    }

    // Checking a candidate frame costs its payload (and its inflated size). A damaged file
    // has few candidates that fail; a crafted one can put a header that claims the rest of
    // the file at every byte, which would make salvage quadratic. Past this budget for
    // candidates that failed, it stops and counts the rest as damaged.
    let budget = UInt64(256 << 20) + 4 * src.size
    var spent: UInt64 = 0
    while offset < src.size {
      // Header, events lost (META gap), and the payload's segment (2.0, `segments`).
      var usable: (FrameHeader, UInt64, UInt64?)?
      if case .ok(let h) = try scan.check(at: offset, placed: false, payload: false) {
        // An event frame whose header checks out at its own place, next in numbering, but
        // whose payload may not: its header vouches that its events were recorded (a lost
        // tail is then a gap too, not a shorter log).
        if h.type == Format.typeEvents, h.offsetLow == UInt32(truncatingIfNeeded: offset),
          h.firstSeq == max(nextSeq, claimedEnd)
        {
          claimedEnd = h.firstSeq + UInt64(h.eventCount)
        }
        if try scan.payloadProblem(h, at: offset) == nil {
          if let (lost, seg) = try decodes(
            h, at: offset, src: src, major: oldHeader.major, inflater: inflater, scratch: &scratch,
            segments: segments)
          {
            usable = (h, lost, seg)
          } else {
            spent += UInt64(h.payloadLength) + UInt64(h.rawLength)
          }
        } else {
          spent += UInt64(h.payloadLength)
        }
      }
      guard let (h, lost, frameSegment) = usable else {
        if damageStart == nil { damageStart = offset }
        guard spent <= budget else {
          report.gaveUpAt = offset
          offset = src.size
          break
        }
        // Headers only: the candidate's payload is checked at the top of the loop.
        guard let (next, _) = try scan.findFrame(from: offset + 1, payload: false) else {
          offset = src.size
          break
        }
        offset = next
        continue
      }
      if let start = damageStart {
        report.damagedRanges.append(ByteRange(offset: start, length: offset - start))
        damageStart = nil
      }
      var keep = true
      switch h.type {
      case Format.typeEvents:
        if h.firstSeq < nextSeq {
          keep = false
        } else {
          try gap(upTo: h.firstSeq)
          if let s = frameSegment, s > segment {
            // Its segment's dictionary frame was lost with the damage.
            try lostRestart(s)
            (segment, segmentKept) = (s, false)
          }
          nextSeq += UInt64(h.eventCount)
          report.eventsKept += UInt64(h.eventCount)
        }
      case Format.typeCheckpoint:
        keep = h.firstSeq == nextSeq - 1
        if let s = frameSegment, s != segment || !segmentKept {
          // Its segment's dictionary was lost: it cannot be decoded here.
          keep = false
          if s > segment {
            try lostRestart(s)
            (segment, segmentKept) = (s, false)
          }
        }
      case Format.typeDictionary:
        if h.firstSeq < nextSeq {
          keep = false
        } else {
          try gap(upTo: h.firstSeq)
          (segment, segmentKept) = (h.firstSeq, true)
        }
      case Format.typeMeta:
        keep = false
        if lost > 0 { try gap(upTo: max(nextSeq, h.firstSeq &+ lost)) }
      case Format.typeParity:
        keep = false  // it describes the old file's bytes; the new log gets its own
      default:
        break
      }
      if keep {
        guard let payload = try src.bytes(at: offset + 36, count: Int(h.payloadLength)) else {
          throw LogError(.io, path: source, message: "file changed during salvage")
        }
        try out.copy(h, payload: payload)
        report.framesKept += 1
      } else if h.type != Format.typeMeta && h.type != Format.typeParity {
        report.framesDropped += 1
      }
      offset += h.frameLength
    }
    if let start = damageStart {
      report.damagedRanges.append(ByteRange(offset: start, length: src.size - start))
    }
    // Events whose frames' headers survived at the end, their payloads not: a gap.
    try gap(upTo: claimedEnd)
    report.lastEvent = nextSeq - 1
    try out.closeParity()
    if let e = Posix.dataSync(dstFD) { throw .io("cannot sync", path: tmp, errno: e) }
    guard rename(tmp, destination) == 0 else {
      throw .io("cannot rename \(tmp)", path: destination, errno: errno)
    }
    ok = true
    if let e = Posix.syncDirectory(of: destination) {
      throw .io("cannot sync directory", path: destination, errno: e)
    }
    return report
  }

  /// Whether a frame that passed its checksums also decodes: inflates exactly, splits into
  /// its records, or (META) parses. Returns events lost for a META gap (0 otherwise), nil if bad.
  private static func decodes(
    _ h: FrameHeader, at offset: UInt64, src: ByteSource, major: UInt16, inflater: Inflater,
    scratch: inout [UInt8], segments: SegmentOfPayload?
  ) throws(LogError) -> (lost: UInt64, segment: UInt64?)? {
    guard let pb = try src.bytes(at: offset + 36, count: Int(h.payloadLength)) else { return nil }
    if scratch.count < Int(h.rawLength) {
      scratch = [UInt8](repeating: 0, count: Int(h.rawLength))
    }
    let n = Int(h.rawLength)
    return scratch.withUnsafeMutableBytes { all -> (lost: UInt64, segment: UInt64?)? in
      let dst = UnsafeMutableRawBufferPointer(rebasing: all[0..<n])
      if h.isCompressed {
        if inflater.inflateExact(pb, into: dst) != nil { return nil }
      } else {
        dst.copyMemory(from: pb)
      }
      let raw = UnsafeRawBufferPointer(dst)
      switch h.type {
      case Format.typeEvents:
        guard major == 1 else { return (0, segments?(false, raw)) }
        return RecordFraming.check(raw, count: Int(h.eventCount)) == nil ? (0, nil) : nil
      case Format.typeCheckpoint:
        return (0, segments?(true, raw))
      case Format.typeMeta:
        guard let kind = raw.first else { return nil }
        guard kind == Format.metaGap else { return (0, nil) }
        guard raw.count >= 9 else { return nil }
        let lost = raw.loadLE(UInt64.self, at: 1)
        return lost >= 1 && lost < UInt64.max / 2 ? (lost, nil) : nil
      default:
        return (0, nil)
      }
    }
  }
}

/// Appends frames to the salvage output, re-binding each to its new offset and salt.
private struct SalvageWriter {
  let fd: Int32
  let path: String
  let salt: UInt32
  var end: UInt64
  /// The output's parity group (2.0 logs), as a writer keeps it.
  var parity: ParityGroup?

  mutating func write(_ bytes: [UInt8]) throws(LogError) {
    if let e = bytes.withUnsafeBytes({ Posix.writeAll(fd, $0) }) {
      throw .io("write failed", path: path, errno: e, offset: end)
    }
    end += UInt64(bytes.count)
  }

  mutating func copy(_ old: FrameHeader, payload: UnsafeRawBufferPointer) throws(LogError) {
    var h = old
    h.offsetLow = UInt32(truncatingIfNeeded: end)
    var head = [UInt8](repeating: 0, count: Format.frameHeaderLength)
    head.withUnsafeMutableBytes { h.encode(into: $0, salt: salt) }
    try write(head)
    if let e = Posix.writeAll(fd, payload) {
      throw .io("write failed", path: path, errno: e, offset: end)
    }
    end += UInt64(payload.count)
    head.withUnsafeBytes { parity?.add($0) }
    parity?.add(payload)
    if parity?.isDue == true { try writeParity() }
  }

  /// Writes the parity group's PARITY frame (uncompressed) and starts the next group.
  mutating func writeParity() throws(LogError) {
    guard let group = parity, group.length > 0 else { return }
    let payload = group.payload()
    let h = FrameHeader(
      type: Format.typeParity, flags: 0, eventCount: 0, firstSeq: 0,
      payloadLength: UInt32(payload.count), rawLength: UInt32(payload.count),
      offsetLow: UInt32(truncatingIfNeeded: end),
      payloadCRC: payload.withUnsafeBytes { crc32Bytes(0, $0) })
    var head = [UInt8](repeating: 0, count: Format.frameHeaderLength)
    head.withUnsafeMutableBytes { h.encode(into: $0, salt: salt) }
    try write(head + payload)
    parity?.restart(at: end)
  }

  /// The last group's parity, when it is large enough to be worth one.
  mutating func closeParity() throws(LogError) {
    if parity?.isWorthClosing == true { try writeParity() }
  }

  mutating func writeCompressed(type: UInt8, firstSeq: UInt64, raw: [UInt8], _ d: Deflater)
    throws(LogError)
  {
    var payload = [UInt8](repeating: 0, count: d.bound(raw.count))
    let n = raw.withUnsafeBytes { r in payload.withUnsafeMutableBytes { d.compress(r, into: $0) } }
    guard let n else { throw LogError(.io, path: path, message: "zlib deflate failed") }
    payload.removeSubrange(n...)
    let h = FrameHeader(
      type: type, flags: Format.flagCompressed, eventCount: 0, firstSeq: firstSeq,
      payloadLength: UInt32(n), rawLength: UInt32(raw.count), offsetLow: 0,
      payloadCRC: payload.withUnsafeBytes { crc32Bytes(0, $0) })
    var head = [UInt8](repeating: 0, count: Format.frameHeaderLength)
    var moved = h
    moved.offsetLow = UInt32(truncatingIfNeeded: end)
    head.withUnsafeMutableBytes { moved.encode(into: $0, salt: salt) }
    let frame = head + payload
    try write(frame)
    frame.withUnsafeBytes { parity?.add($0) }
    if parity?.isDue == true { try writeParity() }
  }
}
