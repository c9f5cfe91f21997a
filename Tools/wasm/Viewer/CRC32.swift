/// CRC-32 (IEEE, zlib's) for the page's checks of its copy of the log: the library computes
/// it with zlib, which the WebAssembly module does not link, so the frame checks that
/// `Sources/ListTapeLog/FrameFormat.swift` shares with the reader call this one here.
func crc32Bytes(_ seed: UInt32, _ p: UnsafeRawBufferPointer) -> UInt32 {
  var crc = ~seed
  for b in p {
    crc = CRC32Table.entries[Int((crc ^ UInt32(b)) & 0xFF)] ^ (crc >> 8)
  }
  return ~crc
}

/// The 256 remainders of the reflected polynomial 0xEDB88320, made once.
enum CRC32Table {
  static let entries: [UInt32] = (0..<256).map { n -> UInt32 in
    var c = UInt32(n)
    for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
    return c
  }
}
