// libFuzzer entry for the ListTapeLog reader (the frame layer, both formats). Not part of
// the package: Tools/fuzz/run.sh compiles it together with Sources/ListTapeLog/*.swift.

/// Opens arbitrary bytes as a log and exercises every read path; any crash, hang or
/// oversized allocation is a bug (a corrupt file is input, never a precondition failure).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzReader(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
  var bytes = Array(UnsafeBufferPointer(start: data, count: size))
  // Odd first byte of the last position: read with checksums repaired (deeper paths).
  if size > 0 && data[size - 1] & 1 == 1 { fixChecksums(&bytes) }
  return exercise(bytes)
}

/// Every read path of the reader over `bytes`.
func exercise(_ bytes: [UInt8]) -> CInt {
  guard let reader = try? LogReader(bytes: bytes, label: "fuzz") else { return 0 }
  var total = 0
  _ = try? reader.forEachRecord { seq, record in total &+= Int(seq) &+ record.count }
  _ = try? reader.forEachRecord(from: reader.eventCount / 2, through: reader.eventCount) { _, r in
    total &+= r.count
  }
  _ = try? reader.forEachFrame(from: 1, checkpoints: true) { view in
    total &+= view.payload.count
    return true
  }
  _ = try? reader.forEachFrame(from: reader.eventCount / 2, through: reader.eventCount) { _ in
    true
  }
  // Event frames inflated only as far as their first bytes ask (any answer).
  let prefix = FramePrefix(head: 8) { head in head.isEmpty ? nil : Int(head[0]) &* 37 }
  _ = try? reader.forEachFrame(from: 1, eventPrefix: prefix) { view in
    total &+= view.payload.count
    return true
  }
  if let r = reader.restart(atOrBefore: reader.eventCount) {
    _ = try? reader.withFrame(at: r.offset) { total &+= $0.payload.count }
  }
  _ = try? reader.checkpoint(atOrBefore: reader.eventCount)
  _ = try? reader.checkpoint(atOrBefore: 1)
  _ = try? reader.verify()
  _ = try? reader.refresh()
  _ = reader.stop?.description
  return total == -1 ? 1 : 0
}

/// Rewrites the file header's and every frame's checksums (and stored offsets) to match their
/// bytes, so mutations reach inflate, record framing and sequence checks instead of dying at a
/// checksum. Frames are walked by their declared lengths.
func fixChecksums(_ b: inout [UInt8]) {
  guard b.count >= Format.headerLength else { return }
  b.withUnsafeMutableBytes { p in
    let crc = crc32Bytes(0, UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(p)[0..<60]))
    p.storeLE(crc, at: 60)
  }
  let salt = b.withUnsafeBytes { crc32Bytes(0, UnsafeRawBufferPointer(rebasing: $0[16..<32])) }
  var off = Format.headerLength
  while off + Format.frameHeaderLength <= b.count {
    let start = off
    let done: Bool = b.withUnsafeMutableBytes { p in
      let ro = UnsafeRawBufferPointer(p)
      let payloadLength = Int(ro.loadLE(UInt32.self, at: start + 16))
      let payloadStart = start + Format.frameHeaderLength
      guard payloadLength <= ro.count - payloadStart else { return true }
      p.storeLE(Format.frameMagic, at: start)
      p.storeLE(UInt32(truncatingIfNeeded: start), at: start + 24)
      let body = UnsafeRawBufferPointer(rebasing: ro[payloadStart..<payloadStart + payloadLength])
      p.storeLE(crc32Bytes(0, body), at: start + 28)
      let head = UnsafeRawBufferPointer(rebasing: ro[start..<start + 32])
      p.storeLE(crc32Bytes(salt, head), at: start + 32)
      off = payloadStart + payloadLength
      return false
    }
    if done { break }
  }
}
