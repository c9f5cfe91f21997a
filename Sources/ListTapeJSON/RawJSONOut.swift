/// A cursor over a caller's buffer for writing the repeated parts of a large JSON document
/// fast (a state's items): no capacity check per byte, the caller makes room first (`room`,
/// with `quotedBound` for strings).
package struct RawJSONOut {
  private let base: UnsafeMutablePointer<UInt8>
  private let capacity: Int
  /// Bytes written so far.
  package private(set) var count = 0

  /// A cursor at the start of `buffer` (which must not be empty).
  package init(_ buffer: UnsafeMutableBufferPointer<UInt8>) {
    guard let start = buffer.baseAddress else { preconditionFailure("an empty buffer") }
    base = start
    capacity = buffer.count
  }

  /// Bytes still free.
  @inline(__always) package var room: Int { capacity &- count }

  /// The bytes written so far.
  package var written: UnsafeRawBufferPointer {
    UnsafeRawBufferPointer(start: base, count: count)
  }

  /// Writes `bytes` as they are (JSON the caller made, such as a string it quoted before).
  @inline(__always) package mutating func raw(_ bytes: UnsafeRawBufferPointer) {
    if let start = bytes.baseAddress {
      UnsafeMutableRawPointer(base + count).copyMemory(from: start, byteCount: bytes.count)
    }
    count &+= bytes.count
  }

  /// Forgets what was written (after the caller took it).
  package mutating func reset() { count = 0 }

  /// The most bytes `quoted` writes for a string of `n` bytes.
  @inline(__always) package static func quotedBound(_ n: Int) -> Int { 6 &* n &+ 2 }

  @inline(__always) package mutating func byte(_ b: UInt8) {
    base[count] = b
    count &+= 1
  }

  @inline(__always) package mutating func ascii(_ text: StaticString) {
    let n = text.utf8CodeUnitCount
    (base + count).update(from: text.utf8Start, count: n)
    count &+= n
  }

  /// Writes `utf8` (valid UTF-8) as a JSON string: quoted, with `"`, `\` and control
  /// characters escaped.
  package mutating func quoted(_ utf8: UnsafeBufferPointer<UInt8>) {
    byte(ASCII.quote)
    if JSONEscape.isPlain(utf8) {
      if let start = utf8.baseAddress { (base + count).update(from: start, count: utf8.count) }
      count &+= utf8.count
    } else {
      for b in utf8 {
        guard b < 0x20 || b == ASCII.quote || b == ASCII.backslash else {
          byte(b)
          continue
        }
        byte(ASCII.backslash)
        switch b {
        case ASCII.quote, ASCII.backslash: byte(b)
        case ASCII.newline: byte(ASCII.lowerN)
        case ASCII.carriageReturn: byte(ASCII.lowerR)
        case ASCII.tab: byte(ASCII.lowerT)
        case 0x08: byte(ASCII.lowerB)
        case 0x0C: byte(ASCII.lowerF)
        default:
          ascii("u00")
          byte(Self.hex(b >> 4))
          byte(Self.hex(b & 0x0F))
        }
      }
    }
    byte(ASCII.quote)
  }

  /// Makes room for `n` bytes, moving what was written into `w` first when there is too
  /// little (`n` must not exceed the buffer).
  @inline(__always) package mutating func ensure(_ n: Int, spillingInto w: inout JSONWriter) {
    if room < n { spill(into: &w) }
  }

  /// Moves what was written into `w` and empties the buffer.
  package mutating func spill(into w: inout JSONWriter) {
    w.appendFragment(written)
    reset()
  }

  /// `quoted(_:)`, moving what was written into `w` first when the string needs more room;
  /// a string larger than the whole buffer is written straight into `w`.
  @inline(__always) package mutating func quoted(
    _ utf8: UnsafeBufferPointer<UInt8>, spillingInto w: inout JSONWriter
  ) {
    guard makeRoom(quoting: utf8.count, spillingInto: &w) else {
      w.appendQuotedFragment(utf8)
      return
    }
    quoted(utf8)
  }

  /// Makes room for a quoted string of `n` bytes, moving what was written into `w` when
  /// there is too little; false when the string is larger than the whole buffer.
  @inline(__always) private mutating func makeRoom(
    quoting n: Int, spillingInto w: inout JSONWriter
  ) -> Bool {
    let need = Self.quotedBound(n)
    if room < need {
      spill(into: &w)
      return capacity >= need
    }
    return true
  }

  /// `quoted(_:spillingInto:)`, and the same quoted string as the next value of `copy`
  /// (copied, not escaped again).
  @inline(__always) package mutating func quoted(
    _ utf8: UnsafeBufferPointer<UInt8>, spillingInto w: inout JSONWriter,
    alsoInto copy: inout JSONWriter
  ) {
    if let quoted = quotedHere(utf8, spillingInto: &w) {
      copy.value(json: quoted)
    } else {
      copy.string(utf8: utf8)
    }
  }

  /// `quoted(_:spillingInto:alsoInto:)` with a second copy.
  @inline(__always) package mutating func quoted(
    _ utf8: UnsafeBufferPointer<UInt8>, spillingInto w: inout JSONWriter,
    alsoInto copy: inout JSONWriter, and second: inout JSONWriter
  ) {
    if let quoted = quotedHere(utf8, spillingInto: &w) {
      copy.value(json: quoted)
      second.value(json: quoted)
    } else {
      copy.string(utf8: utf8)
      second.string(utf8: utf8)
    }
  }

  /// `quoted(_:spillingInto:)`, returning the quoted bytes when they were written here (nil:
  /// the string was larger than the buffer and went straight into `w`).
  @inline(__always) private mutating func quotedHere(
    _ utf8: UnsafeBufferPointer<UInt8>, spillingInto w: inout JSONWriter
  ) -> UnsafeRawBufferPointer? {
    guard makeRoom(quoting: utf8.count, spillingInto: &w) else {
      w.appendQuotedFragment(utf8)
      return nil
    }
    let start = count
    quoted(utf8)
    return UnsafeRawBufferPointer(start: base + start, count: count &- start)
  }

  @inline(__always) private static func hex(_ v: UInt8) -> UInt8 {
    v < 10 ? ASCII.zero &+ v : ASCII.lowerA &+ (v &- 10)
  }

  /// Writes a non-negative integer (at most 20 bytes).
  package mutating func int(_ value: Int) {
    var v = UInt(bitPattern: value)
    var digits = 0
    var probe = v
    repeat {
      digits &+= 1
      probe /= 10
    } while probe > 0
    var at = count &+ digits
    repeat {
      at &-= 1
      base[at] = ASCII.zero &+ UInt8(truncatingIfNeeded: v % 10)
      v /= 10
    } while v > 0
    count &+= digits
  }
}

/// Whether a string needs escaping in JSON, eight bytes at a time.
package enum JSONEscape {
  /// Whether `utf8` has no byte that JSON escapes (`"`, `\`, control characters).
  @inline(__always) package static func isPlain(_ utf8: UnsafeBufferPointer<UInt8>) -> Bool {
    guard let p = utf8.baseAddress else { return true }
    let n = utf8.count
    let ones: UInt64 = 0x0101_0101_0101_0101
    let highs: UInt64 = 0x8080_8080_8080_8080
    var i = 0
    while i &+ 8 <= n {
      let w = UnsafeRawPointer(p + i).loadUnaligned(as: UInt64.self)
      // A byte below 0x20, or one equal to `"` or `\` (a zero byte after the xor): each
      // test sets a byte's high bit only where such a byte is (exact, for bytes < 0x80;
      // bytes ≥ 0x80 never match).
      let control = (w &- ones &* 0x20) & ~w & highs
      let q = w ^ (ones &* 0x22)
      let b = w ^ (ones &* 0x5C)
      let quote = (q &- ones) & ~q & highs
      let slash = (b &- ones) & ~b & highs
      if control | quote | slash != 0 { return false }
      i &+= 8
    }
    while i < n {
      let b = p[i]
      if b < 0x20 || b == ASCII.quote || b == ASCII.backslash { return false }
      i &+= 1
    }
    return true
  }
}
