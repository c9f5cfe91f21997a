/// Framing: turns a payload into a frame (compressed, headed, checksummed, bound to its
/// offset and the log's salt) and appends it with one `write()`; keeps the parity group
/// and writes its PARITY frame when due. Owned by a `WriterCore`, used under its lock.
final class FrameOutput {
  let fd: Int32
  let path: String
  private let files: any FileLayer
  private let salt: UInt32
  private let deflater: Deflater
  private var out: UnsafeMutableRawPointer
  private var capacity: Int
  /// The capacity the output buffer returns to after a large frame.
  private let usualCapacity: Int
  /// Where the next frame goes: the file's length.
  private(set) var end: UInt64
  /// The file's length when the last completed sync started: a frame written at this
  /// offset is a sync point.
  private(set) var syncedEnd: UInt64
  /// The parity group being accumulated (nil: the log gets no parity frames).
  var parity: ParityGroup?

  init(
    fd: Int32, path: String, files: any FileLayer, salt: UInt32, deflater: Deflater,
    end: UInt64, syncedEnd: UInt64, batchCapacity: Int
  ) {
    self.fd = fd
    self.path = path
    self.files = files
    self.salt = salt
    self.deflater = deflater
    self.end = end
    self.syncedEnd = syncedEnd
    usualCapacity = Format.frameHeaderLength + deflater.bound(batchCapacity)
    capacity = usualCapacity
    out = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16)
  }

  deinit { out.deallocate() }

  /// What a frame write did: its length, and that of the PARITY frame written after it.
  struct Written {
    var length: UInt64
    var parityLength: UInt64 = 0
  }

  /// Frames `raw` (compressed, unless `stored`) at the end of the file with one write().
  /// On a failed write the partial frame is cut off again and the error returned for the
  /// writer to fail with. A frame other than a PARITY frame joins the parity group, and a
  /// group that is due gets its PARITY frame (event number `nextSeq`) right after.
  func write(
    type: UInt8, count: Int, firstSeq: UInt64, raw: UnsafeRawBufferPointer,
    flushPoints: [Int] = [], stored: Bool = false, nextSeq: UInt64
  ) throws(LogError) -> Written {
    let length = try writeOne(
      type: type, count: count, firstSeq: firstSeq, raw: raw, flushPoints: flushPoints,
      stored: stored)
    var written = Written(length: length)
    if type != Format.typeParity, parity?.isDue == true {
      written.parityLength = try writeParity(nextSeq: nextSeq)
    }
    return written
  }

  /// Writes the parity group's PARITY frame and starts the next group after it; 0 when the
  /// group is empty.
  func writeParity(nextSeq: UInt64) throws(LogError) -> UInt64 {
    guard let group = parity, group.length > 0 else { return 0 }
    let payload = group.payload()
    let written: Result<UInt64, LogError> = payload.withUnsafeBytes { raw in
      Result { () throws(LogError) in
        try writeOne(
          type: Format.typeParity, count: 0, firstSeq: nextSeq, raw: raw, flushPoints: [],
          stored: true)
      }
    }
    let length = try written.get()
    parity?.restart(at: end)
    return length
  }

  private func writeOne(
    type: UInt8, count: Int, firstSeq: UInt64, raw: UnsafeRawBufferPointer, flushPoints: [Int],
    stored: Bool
  ) throws(LogError) -> UInt64 {
    let headerLength = Format.frameHeaderLength
    let need =
      headerLength + (stored ? raw.count : deflater.bound(raw.count, blocks: flushPoints.count + 1))
    if need > capacity {
      out.deallocate()
      capacity = need
      out = UnsafeMutableRawPointer.allocate(byteCount: need, alignment: 16)
    }
    let dst = UnsafeMutableRawBufferPointer(start: out + headerLength, count: need - headerLength)
    let payloadLength: Int
    if stored {
      if let base = raw.baseAddress {
        dst.baseAddress?.copyMemory(from: base, byteCount: raw.count)
      }
      payloadLength = raw.count
    } else {
      guard let n = deflater.compress(raw, into: dst, flushPoints: flushPoints) else {
        throw LogError(.poisoned, path: path, message: "zlib deflate failed")
      }
      payloadLength = n
    }
    let payload = UnsafeRawBufferPointer(start: out + headerLength, count: payloadLength)
    var flags = stored ? 0 : Format.flagCompressed
    if syncedEnd == end { flags |= Format.flagSyncPoint }
    let h = FrameHeader(
      type: type, flags: flags, eventCount: UInt16(count), firstSeq: firstSeq,
      payloadLength: UInt32(payloadLength), rawLength: UInt32(raw.count),
      offsetLow: UInt32(truncatingIfNeeded: end), payloadCRC: crc32Bytes(0, payload))
    h.encode(into: UnsafeMutableRawBufferPointer(start: out, count: headerLength), salt: salt)
    let total = headerLength + payloadLength
    if let e = files.write(fd, UnsafeRawBufferPointer(start: out, count: total)) {
      _ = files.truncate(fd, end)  // drop a partial frame, as Redis does
      throw LogError(
        .poisoned, path: path, message: "write failed: \(errnoText(e)); writer stopped",
        offset: end, lastGoodEvent: firstSeq &- 1, errno: e)
    }
    end += UInt64(total)
    if type != Format.typeParity {
      parity?.add(UnsafeRawBufferPointer(start: out, count: total))
    }
    return UInt64(total)
  }

  /// A sync that started when the file ended at `offset` completed.
  func synced(upTo offset: UInt64) { syncedEnd = max(syncedEnd, offset) }

  /// Returns a buffer grown for a large frame (a checkpoint) to its usual size.
  func shrinkIfLarge() {
    guard capacity > (8 << 20) else { return }
    out.deallocate()
    capacity = usualCapacity
    out = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16)
  }
}
