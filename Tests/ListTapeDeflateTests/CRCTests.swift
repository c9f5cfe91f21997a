import CListTapeCRC
import CListTapeZlib
import ListTapeSamples
import Testing

@testable import ListTapeDeflate

@Suite("CRC-32 folded by carry-less multiplication")
struct CRCTests {
  /// zlib's table-driven CRC, the reference.
  static func zlibCRC(_ seed: UInt32, _ p: UnsafeRawBufferPointer) -> UInt32 {
    UInt32(
      truncatingIfNeeded: crc32(
        uLong(seed), p.baseAddress?.assumingMemoryBound(to: Bytef.self), uInt(p.count)))
  }

  static func randomBytes(_ n: Int, seed: UInt64) -> [UInt8] {
    var rng = SplitMix64(seed: seed)
    return (0..<n).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
  }

  @Test("folds on this processor (x86-64 has had PCLMULQDQ since 2010)")
  func foldsHere() {
    #if arch(x86_64)
    #expect(CRCFolding.available)
    #endif
  }

  @Test("every length to 300 and longer ones, at every alignment, from any seed, match zlib's")
  func matchesZlib() {
    let bytes = Self.randomBytes((1 << 20) + 64, seed: 41)
    var rng = SplitMix64(seed: 7)
    bytes.withUnsafeBytes { all in
      let lengths = Array(0...300) + [1_023, 4_096, 4_111, 65_536 + 7, 1 << 20]
      for length in lengths {
        for offset in [0, 1, 3, 8, 15, 16, 33, 63] {
          let p = UnsafeRawBufferPointer(rebasing: all[offset..<(offset + length)])
          let seed = length % 3 == 0 ? 0 : UInt32(truncatingIfNeeded: rng.next())
          let want = Self.zlibCRC(seed, p)
          #expect(crc32Bytes(seed, p) == want, "length \(length) at offset \(offset)")
          if CRCFolding.available && length >= 64 && length % 16 == 0 {
            #expect(listtape_crc32_fold(seed, p.baseAddress!, length) == want)
          }
        }
      }
    }
  }

  @Test("a CRC continued across cuts is the CRC of the whole")
  func continues() {
    let bytes = Self.randomBytes(200_000, seed: 9)
    let whole = bytes.withUnsafeBytes { crc32Bytes(0, $0) }
    #expect(whole == bytes.withUnsafeBytes { Self.zlibCRC(0, $0) })
    var rng = SplitMix64(seed: 3)
    for _ in 0..<50 {
      let cut = Int(rng.next() % 200_001)
      let crc = bytes.withUnsafeBytes { all in
        crc32Bytes(
          crc32Bytes(0, UnsafeRawBufferPointer(rebasing: all[..<cut])),
          UnsafeRawBufferPointer(rebasing: all[cut...]))
      }
      #expect(crc == whole, "cut at \(cut)")
    }
    // The check value of the CRC-32 zlib and the log use.
    #expect(Array("123456789".utf8).withUnsafeBytes { crc32Bytes(0, $0) } == 0xCBF4_3926)
  }
}
