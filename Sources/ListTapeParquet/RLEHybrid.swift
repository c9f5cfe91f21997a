/// Parquet's RLE / bit-packed hybrid encoding, for definition and repetition levels and for
/// dictionary indices: a run of 8 or more equal values becomes one run header and the value;
/// everything else is bit-packed in groups of 8, least significant bit first.
enum RLEHybrid {
  /// Bits needed for values up to `maxValue` (at least 1, which every reader accepts).
  static func bitWidth(_ maxValue: Int) -> Int {
    maxValue <= 1 ? 1 : Int.bitWidth - (maxValue).leadingZeroBitCount
  }

  /// Appends the encoding of `values` with `width` (1...32) bits each to `out` (no length
  /// prefix).
  /// Only the last bit-packed group may be padded, so a page always ends the sequence.
  static func encode<T: FixedWidthInteger & UnsignedInteger>(
    _ values: UnsafeBufferPointer<T>, width: Int, into out: inout [UInt8]
  ) {
    let n = values.count
    var literalStart = 0
    var i = 0
    while i < n {
      let v = values[i]
      var j = i + 1
      while j < n && values[j] == v { j += 1 }
      let literal = i - literalStart
      let pad = (8 - literal % 8) % 8
      if j - i - pad >= 8 {
        // The literal values before the run, topped up to whole groups from the run.
        if literal + pad > 0 {
          packed(values, literalStart..<(i + pad), width: width, into: &out)
        }
        run(UInt64(v), count: j - i - pad, width: width, into: &out)
        literalStart = j
      }
      i = j
    }
    if literalStart < n { packed(values, literalStart..<n, width: width, into: &out) }
  }

  /// One RLE run: header `count << 1`, then the value in whole bytes.
  private static func run(_ value: UInt64, count: Int, width: Int, into out: inout [UInt8]) {
    varint(UInt64(count) << 1, into: &out)
    var v = value
    for _ in 0..<((width + 7) / 8) {
      out.append(UInt8(truncatingIfNeeded: v))
      v >>= 8
    }
  }

  /// Bit-packed groups of 8 values (the last one padded with zeros), at most 63 groups per
  /// header as other writers do.
  private static func packed<T: FixedWidthInteger & UnsignedInteger>(
    _ values: UnsafeBufferPointer<T>, _ range: Range<Int>, width: Int, into out: inout [UInt8]
  ) {
    var start = range.lowerBound
    while start < range.upperBound {
      let end = min(range.upperBound, start + 63 * 8)
      let groups = (end - start + 7) / 8
      varint(UInt64(groups) << 1 | 1, into: &out)
      // 8 values of `width` bits fill `width` whole bytes; widths stay at most 32, so the
      // accumulator (under 8 bits carried over plus one value) never overflows.
      var acc: UInt64 = 0
      var bits = 0
      let mask: UInt64 = (1 << UInt64(width)) - 1
      for k in start..<(start + groups * 8) {
        let v: UInt64 = k < end ? UInt64(values[k]) & mask : 0
        acc |= v << UInt64(bits)
        bits += width
        while bits >= 8 {
          out.append(UInt8(truncatingIfNeeded: acc))
          acc >>= 8
          bits -= 8
        }
      }
      start = end
    }
  }

  static func varint(_ value: UInt64, into out: inout [UInt8]) {
    var v = value
    while v >= 0x80 {
      out.append(UInt8(truncatingIfNeeded: v) | 0x80)
      v >>= 7
    }
    out.append(UInt8(v))
  }
}
