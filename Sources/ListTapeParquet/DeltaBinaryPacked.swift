/// Parquet's DELTA_BINARY_PACKED encoding of 64-bit integers, for event numbers and times:
/// a header with the first value, then blocks of 128 deltas, each as its least delta and 4
/// miniblocks of 32 deltas bit-packed at the miniblock's own width. A run of consecutive
/// event numbers costs a few bytes per block; times cost the bits of their gaps.
enum DeltaBinaryPacked {
  static let blockSize = 128
  static let miniblocks = 4
  static let miniblockSize = 32

  /// Appends the encoding of `values` to `out`.
  static func encode<C: RandomAccessCollection<Int64>>(_ values: C, into out: inout [UInt8])
  where C.Index == Int {
    RLEHybrid.varint(UInt64(blockSize), into: &out)
    RLEHybrid.varint(UInt64(miniblocks), into: &out)
    RLEHybrid.varint(UInt64(values.count), into: &out)
    guard let first = values.first else {
      RLEHybrid.varint(0, into: &out)
      return
    }
    zigzag(first, into: &out)
    var deltas = [Int64](repeating: 0, count: blockSize)
    var widths = [Int](repeating: 0, count: miniblocks)
    var previous = first
    var i = values.startIndex + 1
    while i < values.endIndex {
      let n = min(blockSize, values.endIndex - i)
      var least = Int64.max
      for k in 0..<n {
        let v = values[i + k]
        deltas[k] = v &- previous
        previous = v
        least = min(least, deltas[k])
      }
      zigzag(least, into: &out)
      let used = (n + miniblockSize - 1) / miniblockSize
      for m in 0..<miniblocks { widths[m] = 0 }
      for m in 0..<used {
        var bits: UInt64 = 0
        for k in (m * miniblockSize)..<min(n, (m + 1) * miniblockSize) {
          bits |= UInt64(bitPattern: deltas[k] &- least)
        }
        widths[m] = UInt64.bitWidth - bits.leadingZeroBitCount
      }
      for w in widths { out.append(UInt8(w)) }
      for m in 0..<used {
        pack(deltas, m * miniblockSize, n, least: least, width: widths[m], into: &out)
      }
      i += n
    }
  }

  /// One miniblock of 32 deltas (less `least`), `width` bits each, least significant bit
  /// first; past the last delta, zeros pad it to full length.
  private static func pack(
    _ deltas: [Int64], _ start: Int, _ count: Int, least: Int64, width: Int,
    into out: inout [UInt8]
  ) {
    guard width > 0 else { return }
    var acc: UInt64 = 0
    var bits = 0
    for k in start..<(start + miniblockSize) {
      let v = k < count ? UInt64(bitPattern: deltas[k] &- least) : 0
      acc |= v << UInt64(bits)
      let total = bits + width
      if total >= 64 {
        withUnsafeBytes(of: acc.littleEndian) { out.append(contentsOf: $0) }
        acc = bits == 0 ? 0 : v >> UInt64(64 - bits)
        bits = total - 64
      } else {
        bits = total
      }
    }
    var rest = acc
    for _ in 0..<((bits + 7) / 8) {
      out.append(UInt8(truncatingIfNeeded: rest))
      rest >>= 8
    }
  }

  private static func zigzag(_ v: Int64, into out: inout [UInt8]) {
    RLEHybrid.varint(UInt64(bitPattern: (v << 1) ^ (v >> 63)), into: &out)
  }
}
