import ListTapeJSON

/// Why stored bytes could not be decoded: a damaged, foreign or hostile record.
public struct CodecError: Error, Equatable, Sendable, CustomStringConvertible {
  /// What was wrong.
  public var message: String
  /// Byte offset inside the record or blob where decoding failed.
  public var offset: Int
  /// The event being decoded, when a frame of many events failed (format 2.0).
  package var event: Int?

  /// An error at `offset`.
  public init(_ message: String, offset: Int) {
    self.message = message
    self.offset = offset
  }

  /// The message and the offset, for people.
  public var description: String { "\(message) (at byte \(offset) of the record)" }
}

/// Appends compact binary values: LEB128 varints, zigzag integers, length-prefixed strings.
struct ByteSink {
  var bytes: [UInt8] = []

  @inline(__always) mutating func byte(_ b: UInt8) { bytes.append(b) }

  @inline(__always) mutating func varint(_ value: UInt64) {
    var v = value
    while v >= 0x80 {
      bytes.append(UInt8(truncatingIfNeeded: v) | 0x80)
      v >>= 7
    }
    bytes.append(UInt8(v))
  }

  @inline(__always) mutating func count(_ n: Int) { varint(UInt64(n)) }

  @inline(__always) mutating func zigzag(_ value: Int64) {
    varint(UInt64(bitPattern: (value << 1) ^ (value >> 63)))
  }

  @inline(__always) mutating func string(_ s: String) {
    var s = s
    s.withUTF8 { utf8 in
      count(utf8.count)
      bytes.append(contentsOf: utf8)
    }
  }

  /// Fields as a count, then each key and value, keys in byte order (canonical).
  mutating func fields(_ f: [String: String]) {
    count(f.count)
    for k in f.keys.sorted() {
      string(k)
      string(f[k] ?? "")
    }
  }

  @inline(__always) static func zigzagged(_ value: Int64) -> UInt64 {
    UInt64(bitPattern: (value << 1) ^ (value >> 63))
  }

  @inline(__always) static func appendVarint(_ value: UInt64, to bytes: inout [UInt8]) {
    var v = value
    while v >= 0x80 {
      bytes.append(UInt8(truncatingIfNeeded: v) | 0x80)
      v >>= 7
    }
    bytes.append(UInt8(v))
  }
}

/// Reads what `ByteSink` wrote, checking every length against the bytes that remain so a
/// hostile record can neither over-read nor make it allocate without bound.
struct ByteSource {
  let base: UnsafeRawBufferPointer
  var offset = 0
  /// Where `base` starts in the record or payload it was cut from (for error offsets).
  let origin: Int

  init(_ base: UnsafeRawBufferPointer, origin: Int = 0) {
    self.base = base
    self.origin = origin
  }

  var isAtEnd: Bool { offset == base.count }
  var remaining: Int { base.count - offset }

  func fail(_ message: String) -> CodecError { CodecError(message, offset: origin + offset) }

  @inline(__always) mutating func byte() throws(CodecError) -> UInt8 {
    guard offset < base.count else { throw fail("unexpected end of data") }
    let b = base[offset]
    offset += 1
    return b
  }

  @inline(__always) mutating func varint() throws(CodecError) -> UInt64 {
    var result: UInt64 = 0
    var shift: UInt64 = 0
    while true {
      let b = try byte()
      if shift == 63 && b > 1 { throw fail("varint overflows 64 bits") }
      result |= UInt64(b & 0x7F) << shift
      if b & 0x80 == 0 { return result }
      shift += 7
      if shift > 63 { throw fail("varint longer than 10 bytes") }
    }
  }

  @inline(__always) mutating func zigzag() throws(CodecError) -> Int64 {
    let v = try varint()
    return Int64(bitPattern: (v >> 1) ^ (0 &- (v & 1)))
  }

  /// A count of elements, each taking at least `minBytes` bytes, so it cannot exceed what
  /// remains in the record.
  @inline(__always) mutating func count(minBytes: Int = 1) throws(CodecError) -> Int {
    let v = try varint()
    guard v <= UInt64(remaining / max(minBytes, 1)) else {
      throw fail("count \(v) exceeds the \(remaining) bytes left")
    }
    return Int(v)
  }

  @inline(__always) mutating func string() throws(CodecError) -> String {
    try text(try count())
  }

  /// Calls `body` with the next `n` bytes (already checked to remain), checked to be UTF-8
  /// text.
  @inline(__always) mutating func withText<R>(
    _ n: Int, _ body: (UnsafeBufferPointer<UInt8>) -> R
  ) throws(CodecError) -> R {
    let slice = UnsafeRawBufferPointer(rebasing: base[offset..<offset + n])
    offset += n
    let units = UnsafeBufferPointer(
      start: slice.baseAddress?.assumingMemoryBound(to: UInt8.self), count: n)
    guard UTF8Validation.isValid(units) else {
      throw CodecError("invalid UTF-8 in string", offset: offset - n)
    }
    return body(units)
  }

  /// The next `n` bytes as a `String`, checked to be UTF-8 text.
  @inline(__always) mutating func text(_ n: Int) throws(CodecError) -> String {
    try withText(n) { String(decoding: $0, as: UTF8.self) }
  }

  /// Skips the next `n` bytes (already counted by `count()`), checking they are UTF-8.
  @inline(__always) mutating func skipText(_ n: Int) throws(CodecError) {
    guard n <= remaining else { throw fail("string of \(n) bytes exceeds the \(remaining) left") }
    let units = UnsafeBufferPointer(
      start: base.baseAddress.map { ($0 + offset).assumingMemoryBound(to: UInt8.self) }, count: n)
    guard UTF8Validation.isValid(units) else { throw fail("invalid UTF-8 in string") }
    offset += n
  }

  /// Fields written by `ByteSink.fields` (a later duplicate key wins).
  mutating func fields() throws(CodecError) -> [String: String] {
    let n = try count(minBytes: 2)
    var out: [String: String] = [:]
    out.reserveCapacity(n)
    for _ in 0..<n {
      let k = try string()
      out[k] = try string()
    }
    return out
  }

  @inline(__always) mutating func identifier() throws(CodecError) -> String {
    let s = try string()
    guard !s.isEmpty else { throw fail("empty identifier") }
    return s
  }
}
