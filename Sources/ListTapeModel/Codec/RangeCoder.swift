/// A binary range coder with adaptive probabilities (the carry-less scheme LZMA uses): each
/// bit costs about −log2 of its probability, so a choice a model predicts well costs a
/// fraction of a bit, which byte-aligned columns and deflate cannot reach.
///
/// The encoder writes exactly as many bytes as the decoder reads, so a reader can check that
/// a column was consumed to its end.
struct RangeEncoder {
  /// The coded bytes so far (complete after `finish()`).
  var bytes: [UInt8] = []
  private var low: UInt64 = 0
  private var range: UInt32 = 0xFFFF_FFFF
  private var cache: UInt8 = 0
  private var pending = 1

  /// Codes `bit` with probability `p` (of a 0, out of `RangeProbability.one`), then
  /// adapts `p` toward what was coded.
  @inline(__always)
  mutating func encode(_ bit: Bool, _ p: inout UInt16) {
    let bound = (range >> RangeProbability.bits) &* UInt32(p)
    if bit {
      low &+= UInt64(bound)
      range &-= bound
      p &-= p >> RangeProbability.shift
    } else {
      range = bound
      p &+= (RangeProbability.one &- p) >> RangeProbability.shift
    }
    while range < 1 << 24 {
      range <<= 8
      shiftLow()
    }
  }

  /// Codes the low `width` bits of `value`, most significant first, each at one half.
  mutating func encodeDirect(_ value: UInt64, width: Int) {
    var k = width
    while k > 0 {
      k &-= 1
      range >>= 1
      if (value >> UInt64(k)) & 1 == 1 { low &+= UInt64(range) }
      while range < 1 << 24 {
        range <<= 8
        shiftLow()
      }
    }
  }

  /// Writes the bytes still held in `low`; nothing may be coded after.
  mutating func finish() {
    for _ in 0..<5 { shiftLow() }
  }

  private mutating func shiftLow() {
    if low < 0xFF00_0000 || low > 0xFFFF_FFFF {
      let carry = UInt8(truncatingIfNeeded: low >> 32)
      var b = cache
      repeat {
        bytes.append(b &+ carry)
        b = 0xFF
        pending &-= 1
      } while pending != 0
      cache = UInt8(truncatingIfNeeded: low >> 24)
    }
    pending &+= 1
    low = (low & 0x00FF_FFFF) << 8
  }
}

/// Reads what `RangeEncoder` wrote; reading past the column's end is damage.
struct RangeDecoder {
  private var source: ByteSource
  private var range: UInt32 = 0xFFFF_FFFF
  private var code: UInt32 = 0

  /// A decoder of the coded bytes `source` (at least the encoder's five final bytes).
  init(_ source: ByteSource) throws(CodecError) {
    self.source = source
    guard source.remaining >= 5 else {
      throw source.fail("range-coded column of \(source.remaining) bytes (at least 5)")
    }
    guard try self.source.byte() == 0 else { throw source.fail("range-coded column starts badly") }
    for _ in 0..<4 { code = code << 8 | UInt32(try self.source.byte()) }
  }

  /// Whether every byte was read (true of an encoder's whole output once all is decoded).
  var isAtEnd: Bool { source.isAtEnd }

  /// Bytes not yet read.
  var remaining: Int { source.remaining }

  func fail(_ message: String) -> CodecError { source.fail(message) }

  /// The next bit, coded with probability `p`, which adapts as the encoder's did.
  @inline(__always)
  mutating func decode(_ p: inout UInt16) throws(CodecError) -> Bool {
    let bound = (range >> RangeProbability.bits) &* UInt32(p)
    let bit: Bool
    if code < bound {
      range = bound
      p &+= (RangeProbability.one &- p) >> RangeProbability.shift
      bit = false
    } else {
      code &-= bound
      range &-= bound
      p &-= p >> RangeProbability.shift
      bit = true
    }
    while range < 1 << 24 {
      range <<= 8
      code = code << 8 | UInt32(try source.byte())
    }
    return bit
  }

  /// `width` bits coded by `encodeDirect`.
  mutating func decodeDirect(width: Int) throws(CodecError) -> UInt64 {
    var v: UInt64 = 0
    for _ in 0..<width {
      range >>= 1
      var bit: UInt64 = 0
      if code >= range {
        code &-= range
        bit = 1
      }
      v = v << 1 | bit
      while range < 1 << 24 {
        range <<= 8
        code = code << 8 | UInt32(try source.byte())
      }
    }
    return v
  }
}

/// The fixed point of the coder's probabilities and how fast they adapt.
enum RangeProbability {
  static let bits: UInt32 = 11
  static let one: UInt16 = 1 << 11
  /// A probability that starts at one half.
  static let half: UInt16 = 1 << 10
  static let shift: UInt16 = 5
}
