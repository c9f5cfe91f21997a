import Testing

@testable import ListTapeModel

/// How an id is stored: a canonical UUID (one case) as 16 bytes, anything else as text.
@Suite struct IdTextTests {
  /// The per-character reading `classify` replaced, kept as the reference.
  static func reference(_ utf8: [UInt8]) -> (UInt8, UInt64, UInt64) {
    guard utf8.count == 36 else { return (IdText.text, 0, 0) }
    var hi: UInt64 = 0
    var lo: UInt64 = 0
    var upper = false
    var lower = false
    var digits = 0
    for i in 0..<36 {
      let c = utf8[i]
      if i == 8 || i == 13 || i == 18 || i == 23 {
        guard c == 0x2D else { return (IdText.text, 0, 0) }
        continue
      }
      let v: UInt8
      switch c {
      case 0x30...0x39: v = c - 0x30
      case 0x41...0x46:
        v = c - 0x41 + 10
        upper = true
      case 0x61...0x66:
        v = c - 0x61 + 10
        lower = true
      default: return (IdText.text, 0, 0)
      }
      if digits < 16 { hi = hi << 4 | UInt64(v) } else { lo = lo << 4 | UInt64(v) }
      digits += 1
    }
    if upper && lower { return (IdText.text, 0, 0) }
    return (lower ? IdText.uuidLower : IdText.uuidUpper, hi, lo)
  }

  static func classify(_ bytes: [UInt8]) -> (UInt8, UInt64, UInt64) {
    bytes.withUnsafeBufferPointer { IdText.classify($0) }
  }

  @Test func everyCharacterAtEveryPositionReadsAsTheReferenceDoes() {
    let samples = [
      "0f8fad5b-d9cb-469f-a165-70867728950e", "0F8FAD5B-D9CB-469F-A165-70867728950E",
      "01234567-8901-2345-6789-012345678901", "0F8FAD5B-d9cb-469f-a165-70867728950e",
    ]
    var checked = 0
    for sample in samples {
      let base = Array(sample.utf8)
      #expect(Self.classify(base) == Self.reference(base), "\(sample)")
      for i in 0..<36 {
        for c in 0...255 {
          var bytes = base
          bytes[i] = UInt8(c)
          let got = Self.classify(bytes)
          let want = Self.reference(bytes)
          if got != want {
            Issue.record("\(sample) with \(c) at \(i): \(got) against \(want)")
            return
          }
          checked += 1
        }
      }
    }
    #expect(checked == 4 * 36 * 256)
    for n in [0, 35, 37] {
      let bytes = [UInt8](repeating: 0x61, count: n)
      #expect(Self.classify(bytes) == Self.reference(bytes))
    }
    #expect(Self.classify(Array(samples[0].utf8)).0 == IdText.uuidLower)
    #expect(Self.classify(Array(samples[1].utf8)).0 == IdText.uuidUpper)
    #expect(Self.classify(Array(samples[2].utf8)).0 == IdText.uuidUpper)
    #expect(Self.classify(Array(samples[3].utf8)).0 == IdText.text)
  }

  /// Many characters changed at once (the digits are read eight at a time): random texts
  /// of UUID shape, from hex digits of either case, some with a byte of any value or a dash
  /// moved, read as the reference reads them.
  @Test func randomTextsOfUUIDShapeReadAsTheReferenceDoes() {
    var rng = SystemRandomNumberGenerator()
    let digits = Array("0123456789abcdefABCDEF".utf8)
    for round in 0..<20_000 {
      var bytes = [UInt8](repeating: 0x2D, count: 36)
      let pool =
        round % 3 == 0
        ? digits[0..<16] : round % 3 == 1 ? digits[0..<10] + digits[16...] : digits[...]
      for i in 0..<36 where ![8, 13, 18, 23].contains(i) {
        bytes[i] = pool.randomElement(using: &rng)!
      }
      if round % 4 == 0 {
        bytes[Int.random(in: 0..<36, using: &rng)] = UInt8.random(in: 0...255, using: &rng)
      }
      if round % 7 == 0 { bytes[Int.random(in: 0..<36, using: &rng)] = 0x2D }
      let got = Self.classify(bytes)
      let want = Self.reference(bytes)
      if got != want {
        Issue.record("\(bytes): \(got) against \(want)")
        return
      }
    }
  }

  /// A digit at a time from a table: the spelling `spellUUID` replaced, kept as the reference.
  static func referenceSpelling(_ hi: UInt64, _ lo: UInt64, lower: Bool) -> String {
    let digits = Array((lower ? "0123456789abcdef" : "0123456789ABCDEF").utf8)
    var out: [UInt8] = []
    for i in 0..<32 {
      if i == 8 || i == 12 || i == 16 || i == 20 { out.append(0x2D) }
      let word = i < 16 ? hi : lo
      out.append(digits[Int(word >> UInt64(60 - 4 * (i % 16)) & 0xF)])
    }
    return String(decoding: out, as: UTF8.self)
  }

  @Test func uuidsAreSpeltAsTheReferenceSpellsThem() {
    var rng = SystemRandomNumberGenerator()
    let edges: [UInt64] = [
      0, .max, 0x0123_4567_89AB_CDEF, 0xFEDC_BA98_7654_3210, 0x9A9A_9A9A_0909_0909,
    ]
    var pairs = edges.flatMap { a in edges.map { (a, $0) } }
    for _ in 0..<20_000 { pairs.append((rng.next(), rng.next())) }
    for (hi, lo) in pairs {
      for lower in [false, true] {
        let got = IdText.uuidString(hi, lo, lower: lower)
        let want = Self.referenceSpelling(hi, lo, lower: lower)
        guard got == want else {
          Issue.record("\(hi), \(lo), lower \(lower): \(got) against \(want)")
          return
        }
        // And back: the text classifies as the UUID it spells.
        var text = got
        let back = text.withUTF8 { IdText.classify($0) }
        #expect(back.1 == hi && back.2 == lo)
      }
    }
  }
}
