import ListTapeJSON

/// How an identifier's text is stored: UUID strings in canonical form as 16 bytes and their
/// case, anything else as its UTF-8 bytes.
enum IdText {
  static let text: UInt8 = 0
  static let uuidUpper: UInt8 = 1
  static let uuidLower: UInt8 = 2

  /// The kind of `utf8` and, for a canonical UUID (8-4-4-4-12 hex digits, one case), its
  /// 16 bytes.
  static func classify(_ utf8: UnsafeBufferPointer<UInt8>) -> (UInt8, UInt64, UInt64) {
    guard utf8.count == 36, let p = utf8.baseAddress,
      p[8] == 0x2D, p[13] == 0x2D, p[18] == 0x2D, p[23] == 0x2D
    else { return (text, 0, 0) }
    let raw = UnsafeRawPointer(p)
    // The 32 digits as four words of eight characters, the first character in the low byte.
    func word(_ at: Int) -> UInt64 {
      UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: at, as: UInt64.self))
    }
    func half(_ at: Int) -> UInt64 {
      UInt64(UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: at, as: UInt32.self)))
    }
    var kinds: UInt64 = 0
    let a = hexWord(word(0), &kinds)
    let b = hexWord(half(9) | half(14) << 32, &kinds)
    let c = hexWord(half(19) | half(24) << 32, &kinds)
    let d = hexWord(word(28), &kinds)
    // `kinds`: bit 0 a character that is no hex digit, bit 1 a lower-case letter, bit 2 an
    // upper-case one. Mixed case is text; all digits read back the same either way: upper.
    guard kinds & 1 == 0, kinds & 6 != 6 else { return (text, 0, 0) }
    return (kinds & 2 != 0 ? uuidLower : uuidUpper, a << 32 | b, c << 32 | d)
  }

  /// The value of eight hex digits (the first in `x`'s low byte) and what kinds of
  /// character they are, in `kinds` (see `classify`), a byte lane each, with no branch.
  @inline(__always) private static func hexWord(_ x: UInt64, _ kinds: inout UInt64) -> UInt64 {
    let ones: UInt64 = 0x0101_0101_0101_0101
    let high = ones &* 0x80
    let low7 = x & (ones &* 0x7F)
    // Lanes whose byte lies strictly between m and n (m, n ≤ 128), read on the low 7 bits;
    // a byte of 0x80 or more is refused on its own below.
    func between(_ y: UInt64, _ m: UInt64, _ n: UInt64) -> UInt64 {
      ((ones &* (127 &+ n) &- y) & ~y & (y &+ ones &* (127 &- m))) & high
    }
    let lowered = low7 | (ones &* 0x20)
    let digit = between(low7, 0x2F, 0x3A)
    let letter = between(lowered, 0x60, 0x67)
    let hex = (digit | letter) & ~(x & high)
    if hex != high { kinds |= 1 }
    if letter & (x << 2) & high != 0 { kinds |= 2 }
    if letter & (~x << 2) & high != 0 { kinds |= 4 }
    // Digits keep their low nibble; a letter's (1...6) gains 9.
    var v = (x & (ones &* 0x0F)) &+ (letter >> 7) &* 9
    // Eight nibbles into 32 bits, the first character's the highest.
    v = v.byteSwapped
    v = (v | v >> 4) & 0x00FF_00FF_00FF_00FF
    v = (v | v >> 8) & 0x0000_FFFF_0000_FFFF
    return (v | v >> 16) & 0xFFFF_FFFF
  }

  /// A UUID's 36 characters in a fixed buffer (no allocation).
  struct UUIDText {
    var bytes: (UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0)

    mutating func spell(_ hi: UInt64, _ lo: UInt64, lower: Bool) {
      withUnsafeMutableBytes(of: &bytes) { raw in
        let out = raw.bindMemory(to: UInt8.self)
        IdText.spellUUID(hi, lo, lower: lower, into: out)
      }
    }

    func withBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) throws(CodecError) -> R)
      throws(CodecError) -> R
    {
      var copy = bytes
      return try withUnsafeBytes(of: &copy) { (raw) throws(CodecError) -> R in
        try body(UnsafeBufferPointer(rebasing: raw.bindMemory(to: UInt8.self)[0..<36]))
      }
    }
  }

  /// Writes the canonical text of a UUID (36 bytes) into `out`: eight digits at a time,
  /// with no table and no branch per digit.
  static func spellUUID(
    _ hi: UInt64, _ lo: UInt64, lower: Bool, into out: UnsafeMutableBufferPointer<UInt8>
  ) {
    precondition(out.count >= 36, "a UUID takes 36 bytes")
    let letters: UInt64 = lower ? 0x27 : 0x07
    let a = hexDigits(hi >> 32, letters)
    let b = hexDigits(hi & 0xFFFF_FFFF, letters)
    let c = hexDigits(lo >> 32, letters)
    let d = hexDigits(lo & 0xFFFF_FFFF, letters)
    let p = UnsafeMutableRawPointer(out.baseAddress.unsafelyUnwrapped)
    func half(_ v: UInt64, _ at: Int) {
      p.storeBytes(
        of: UInt32(truncatingIfNeeded: v).littleEndian, toByteOffset: at, as: UInt32.self)
    }
    p.storeBytes(of: a.littleEndian, toByteOffset: 0, as: UInt64.self)
    half(b, 9)
    half(b >> 32, 14)
    half(c, 19)
    half(c >> 32, 24)
    p.storeBytes(of: d.littleEndian, toByteOffset: 28, as: UInt64.self)
    p.storeBytes(of: 0x2D, toByteOffset: 8, as: UInt8.self)
    p.storeBytes(of: 0x2D, toByteOffset: 13, as: UInt8.self)
    p.storeBytes(of: 0x2D, toByteOffset: 18, as: UInt8.self)
    p.storeBytes(of: 0x2D, toByteOffset: 23, as: UInt8.self)
  }

  /// The eight hex digits of the 32-bit `v` as ASCII, the first in the low byte; `letters`
  /// is what a digit over 9 adds past '9' + 1 (7 for upper case, 0x27 for lower).
  @inline(__always) private static func hexDigits(_ v: UInt64, _ letters: UInt64) -> UInt64 {
    // Spread the nibbles, the first one into the highest byte.
    var n = (v | v << 16) & 0x0000_FFFF_0000_FFFF
    n = (n | n << 8) & 0x00FF_00FF_00FF_00FF
    n = (n | n << 4) & 0x0F0F_0F0F_0F0F_0F0F
    let ones: UInt64 = 0x0101_0101_0101_0101
    // 1 in each byte whose nibble is 10 or more.
    let over9 = ((n &+ ones &* 6) >> 4) & ones
    return (n &+ ones &* 0x30 &+ over9 &* letters).byteSwapped
  }

  /// The canonical text of a UUID held as two 64-bit halves (a byte's two digits at a time).
  static func uuidString(_ hi: UInt64, _ lo: UInt64, lower: Bool) -> String {
    String(unsafeUninitializedCapacity: 36) { out in
      spellUUID(hi, lo, lower: lower, into: out)
      return 36
    }
  }

  /// Appends the stored form of `id`: a kind byte, then 16 bytes (UUID) or the UTF-8 bytes.
  static func store(_ id: String, into bytes: inout [UInt8]) {
    var id = id
    id.withUTF8 { utf8 in
      let (kind, hi, lo) = classify(utf8)
      bytes.append(kind)
      if kind == text {
        bytes.append(contentsOf: utf8)
      } else {
        withUnsafeBytes(of: hi.bigEndian) { bytes.append(contentsOf: $0) }
        withUnsafeBytes(of: lo.bigEndian) { bytes.append(contentsOf: $0) }
      }
    }
  }

  /// Reads a stored form back, validating it.
  static func load(_ p: UnsafeRawBufferPointer) throws(CodecError) -> String {
    guard let kind = p.first else { throw CodecError("empty dictionary entry", offset: 0) }
    let body = UnsafeRawBufferPointer(rebasing: p[1...])
    switch kind {
    case text:
      guard !body.isEmpty else { throw CodecError("empty identifier", offset: 1) }
      let units = body.assumingMemoryBound(to: UInt8.self)
      guard UTF8Validation.isValid(units) else {
        throw CodecError("invalid UTF-8 in identifier", offset: 1)
      }
      return String(decoding: units, as: UTF8.self)
    case uuidUpper, uuidLower:
      guard body.count == 16 else {
        throw CodecError("UUID entry of \(body.count) bytes", offset: 1)
      }
      let hi = UInt64(bigEndian: body.loadUnaligned(fromByteOffset: 0, as: UInt64.self))
      let lo = UInt64(bigEndian: body.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
      return uuidString(hi, lo, lower: kind == uuidLower)
    default:
      throw CodecError("unknown identifier kind \(kind)", offset: 0)
    }
  }

  /// Calls `body` with the UTF-8 text of a stored form (a UUID spelt into a buffer on the
  /// stack). The form is trusted (checked when it was stored).
  @inline(__always) static func withText<R>(
    _ form: UnsafeRawBufferPointer, _ body: (UnsafeBufferPointer<UInt8>) -> R
  ) -> R {
    let bytes = form.assumingMemoryBound(to: UInt8.self)
    guard let kind = bytes.first, kind != text, bytes.count == 17 else {
      return body(UnsafeBufferPointer(rebasing: bytes.dropFirst()))
    }
    let hi = UInt64(bigEndian: form.loadUnaligned(fromByteOffset: 1, as: UInt64.self))
    let lo = UInt64(bigEndian: form.loadUnaligned(fromByteOffset: 9, as: UInt64.self))
    var spelt = UUIDText()
    spelt.spell(hi, lo, lower: kind == uuidLower)
    var copy = spelt.bytes
    return withUnsafeBytes(of: &copy) { raw in
      body(UnsafeBufferPointer(rebasing: raw.bindMemory(to: UInt8.self)[0..<36]))
    }
  }

  /// Calls `body` with the stored form of the id whose UTF-8 bytes are `utf8`.
  @inline(__always) static func withStored<R>(
    _ utf8: UnsafeBufferPointer<UInt8>, _ body: (UnsafeRawBufferPointer) -> R
  ) -> R {
    let (kind, hi, lo) = classify(utf8)
    if kind != text {
      return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 17) { buf in
        buf[0] = kind
        for i in 0..<8 {
          let shift = UInt64(56 &- 8 &* i)
          buf[1 &+ i] = UInt8(truncatingIfNeeded: hi >> shift)
          buf[9 &+ i] = UInt8(truncatingIfNeeded: lo >> shift)
        }
        return body(UnsafeRawBufferPointer(buf))
      }
    }
    return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: utf8.count &+ 1) { buf in
      buf[0] = text
      if let src = utf8.baseAddress, let dst = buf.baseAddress {
        (dst + 1).update(from: src, count: utf8.count)
      }
      return body(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: buf[0..<(utf8.count &+ 1)])))
    }
  }

  /// Checks a stored form as `load` would (kind, size, UTF-8), without making a `String`.
  static func check(_ form: UnsafeRawBufferPointer) throws(CodecError) {
    guard let kind = form.first else { throw CodecError("empty dictionary entry", offset: 0) }
    switch kind {
    case text:
      guard form.count > 1 else { throw CodecError("empty identifier", offset: 1) }
      let units = UnsafeRawBufferPointer(rebasing: form[1...]).assumingMemoryBound(to: UInt8.self)
      guard UTF8Validation.isValid(units) else {
        throw CodecError("invalid UTF-8 in identifier", offset: 1)
      }
    case uuidUpper, uuidLower:
      guard form.count == 17 else {
        throw CodecError("UUID entry of \(form.count - 1) bytes", offset: 1)
      }
    default:
      throw CodecError("unknown identifier kind \(kind)", offset: 0)
    }
  }
}
