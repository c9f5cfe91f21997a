/// Strict UTF-8 (RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF), shared
/// by the JSON parser and the binary codecs, which cannot use `String(validating:as:)`
/// (iOS 18 / macOS 15 only). On bytes that pass, `String(decoding:as:)` keeps every byte.
package enum UTF8Validation {
  /// The length of the multi-byte sequence whose lead byte (≥ 0x80) is `base[i]`, or nil
  /// when it is not valid UTF-8 or runs past `count`.
  @inline(__always)
  package static func sequenceLength(_ base: UnsafePointer<UInt8>, _ i: Int, _ count: Int)
    -> Int?
  {
    let length: Int
    var low: UInt8 = 0x80
    var high: UInt8 = 0xBF
    switch base[i] {
    case 0xC2...0xDF: length = 2
    case 0xE0:
      length = 3
      low = 0xA0
    case 0xE1...0xEC, 0xEE...0xEF: length = 3
    case 0xED:
      length = 3
      high = 0x9F
    case 0xF0:
      length = 4
      low = 0x90
    case 0xF1...0xF3: length = 4
    case 0xF4:
      length = 4
      high = 0x8F
    default: return nil
    }
    guard count &- i >= length, low...high ~= base[i &+ 1] else { return nil }
    var k = 2
    while k < length {
      guard base[i &+ k] & 0xC0 == 0x80 else { return nil }
      k &+= 1
    }
    return length
  }

  /// Whether all of `bytes` is valid UTF-8 (ASCII runs checked eight bytes at a time).
  package static func isValid(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
    guard let base = bytes.baseAddress else { return true }
    let n = bytes.count
    var i = 0
    while i < n {
      while i &+ 8 <= n {
        let word = UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self)
        if word & 0x8080_8080_8080_8080 != 0 { break }
        i &+= 8
      }
      guard i < n else { return true }
      if base[i] < 0x80 {
        i &+= 1
        continue
      }
      guard let length = sequenceLength(base, i, n) else { return false }
      i &+= length
    }
    return true
  }
}
