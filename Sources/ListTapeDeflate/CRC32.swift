import CListTapeCRC
import CListTapeZlib

/// zlib's CRC32 over a raw buffer, continuing from `seed`: folded by carry-less
/// multiplication where the processor can (`CListTapeCRC`), zlib's tables for the rest.
package func crc32Bytes(_ seed: UInt32, _ p: UnsafeRawBufferPointer) -> UInt32 {
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
package enum CRCFolding {
  package static let available = listtape_crc32_folds() != 0
}
