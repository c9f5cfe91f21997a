import CListTapeZlib
internal import ListTapeDeflate

extension FileHeader {
  /// Reads and checks the header at the start of `source` (as much of it as the file holds).
  static func read(from source: ByteSource, path: String) throws(LogError) -> FileHeader {
    let available = Int(min(source.size, UInt64(Format.headerLength)))
    guard let bytes = try source.bytes(at: 0, count: available) else {
      throw LogError(.io, path: path, message: "cannot read header")
    }
    return try decode(bytes, path: path)
  }

  /// Parses and checks a header (`parse`), naming the file in the error.
  static func decode(_ p: UnsafeRawBufferPointer, path: String) throws(LogError) -> FileHeader {
    do throws(Problem) {
      return try parse(p)
    } catch {
      let kind: LogError.Kind
      switch error.kind {
      case .notALog: kind = .notALog
      case .incompleteHeader: kind = .incompleteHeader
      case .unsupportedVersion: kind = .unsupportedVersion
      }
      throw LogError(kind, path: path, message: error.message, offset: error.offset)
    }
  }
}

/// zlib's CRC-32 of a raw buffer, continuing from `seed` (`ListTapeDeflate`'s, folded where
/// the processor can): the name `FrameFormat.swift` shares with the viewer's module.
func crc32Bytes(_ seed: UInt32, _ p: UnsafeRawBufferPointer) -> UInt32 {
  ListTapeDeflate.crc32Bytes(seed, p)
}

/// The CRC32 of bytes whose first part has CRC `first` and whose `secondLength` bytes after
/// it have CRC `second` (two threads' CRCs of one buffer, joined).
func crc32Combine(_ first: UInt32, _ second: UInt32, secondLength: Int) -> UInt32 {
  UInt32(truncatingIfNeeded: crc32_combine(uLong(first), uLong(second), .init(secondLength)))
}
