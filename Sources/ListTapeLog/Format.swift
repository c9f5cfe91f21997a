import CListTapeCRC
import CListTapeZlib

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

/// zlib's CRC32 over a raw buffer, continuing from `seed`: folded by carry-less
/// multiplication where the processor can (`CListTapeCRC`), zlib's tables for the rest.
func crc32Bytes(_ seed: UInt32, _ p: UnsafeRawBufferPointer) -> UInt32 {
  guard let base = p.baseAddress, !p.isEmpty else { return seed }
  var crc = UInt(seed)
  var ptr = base.assumingMemoryBound(to: Bytef.self)
  var left = p.count
  if left >= 64 && CRCFolding.available {
    let folded = left & ~15
    crc = UInt(listtape_crc32_fold(seed, ptr, folded))
    ptr += folded
    left -= folded
  }
  while left > 0 {
    let n = min(left, 1 << 30)
    crc = UInt(crc32(uLong(crc), ptr, uInt(n)))
    ptr += n
    left -= n
  }
  return UInt32(truncatingIfNeeded: crc)
}

/// Whether `crc32Bytes` folds (asked of the processor once).
enum CRCFolding {
  static let available = listtape_crc32_folds() != 0
}

/// The CRC32 of bytes whose first part has CRC `first` and whose `secondLength` bytes after
/// it have CRC `second` (two threads' CRCs of one buffer, joined).
func crc32Combine(_ first: UInt32, _ second: UInt32, secondLength: Int) -> UInt32 {
  UInt32(truncatingIfNeeded: crc32_combine(uLong(first), uLong(second), .init(secondLength)))
}
