import ListTapeSamples
import Testing

@testable import ListTapeParquet

/// Decodes the RLE / bit-packed hybrid (Parquet's spec, read side), to check the encoder.
func decodeHybrid(_ bytes: [UInt8], width: Int, count: Int) throws -> [UInt32] {
  var out: [UInt32] = []
  var i = 0
  func varint() throws -> UInt64 {
    var v: UInt64 = 0
    var shift: UInt64 = 0
    while true {
      let b = try #require(i < bytes.count ? bytes[i] : nil)
      i += 1
      v |= UInt64(b & 0x7F) << shift
      if b < 0x80 { return v }
      shift += 7
    }
  }
  while out.count < count {
    let header = try varint()
    if header & 1 == 0 {
      var value: UInt64 = 0
      for k in 0..<((width + 7) / 8) {
        value |= UInt64(bytes[i]) << (8 * UInt64(k))
        i += 1
      }
      out += [UInt32](repeating: UInt32(value), count: Int(header >> 1))
    } else {
      let values = Int(header >> 1) * 8
      var bit = 0
      for _ in 0..<values {
        var v: UInt64 = 0
        for b in 0..<width {
          let at = bit + b
          v |= UInt64((bytes[i + at / 8] >> UInt8(at % 8)) & 1) << UInt64(b)
        }
        bit += width
        out.append(UInt32(v))
      }
      i += values * width / 8
    }
  }
  #expect(i == bytes.count, "trailing bytes")
  return Array(out.prefix(count))
}

@Suite struct RLEHybridTests {
  /// Random sequences mixing runs and noise, every width: decoding gives them back, and a
  /// run of 8 or more equal values never costs more than a run header and its value.
  @Test(arguments: [1, 2, 3, 7, 8, 9, 13, 16, 20, 32])
  func roundTrips(width: Int) throws {
    var rng = SplitMix64(seed: UInt64(width))
    let limit = width == 32 ? UInt64(UInt32.max) : (1 << UInt64(width)) - 1
    for _ in 0..<200 {
      var values: [UInt32] = []
      let n = Int.random(in: 0...300, using: &rng)
      while values.count < n {
        let v = UInt32(UInt64.random(in: 0...limit, using: &rng))
        let run = Bool.random(using: &rng) ? Int.random(in: 1...40, using: &rng) : 1
        values += [UInt32](repeating: v, count: min(run, n - values.count))
      }
      var out: [UInt8] = []
      values.withUnsafeBufferPointer { RLEHybrid.encode($0, width: width, into: &out) }
      #expect(try decodeHybrid(out, width: width, count: values.count) == values)
    }
  }

  @Test func aLongRunIsOneRunHeader() {
    let values = [UInt8](repeating: 1, count: 100_000)
    var out: [UInt8] = []
    values.withUnsafeBufferPointer { RLEHybrid.encode($0, width: 1, into: &out) }
    #expect(out == [0xC0, 0x9A, 0x0C, 0x01])  // varint(100000 << 1), then the value
  }

  @Test func bitWidths() {
    #expect(RLEHybrid.bitWidth(0) == 1)
    #expect(RLEHybrid.bitWidth(1) == 1)
    #expect(RLEHybrid.bitWidth(2) == 2)
    #expect(RLEHybrid.bitWidth(255) == 8)
    #expect(RLEHybrid.bitWidth(256) == 9)
  }
}

@Suite struct ThriftCompactTests {
  /// Field headers carry the id's delta in the high nibble while it is 1...15, else the id
  /// follows as a zigzag varint; integers are zigzag varints.
  @Test func fieldsAndStructs() {
    var w = ThriftCompactWriter()
    w.field(1, i32: -1)
    w.field(3, i64: 300)
    w.field(20, string: "ab")
    w.beginStruct(21)
    w.field(1, bool: true)
    w.field(2, bool: false)
    w.endStruct()
    #expect(
      w.finish() == [
        0x15, 0x01,  // field 1 (delta 1), i32, zigzag(-1) = 1
        0x26, 0xD8, 0x04,  // field 3 (delta 2), i64, zigzag(300) = 600
        0x08, 0x28, 0x02, 0x61, 0x62,  // field 20 (delta 17): type, zigzag id, "ab"
        0x1C,  // field 21 (delta 1), struct
        0x11, 0x12, 0x00,  // true, false (delta 1 each), stop
        0x00,  // stop
      ])
  }

  @Test func listHeaders() {
    var w = ThriftCompactWriter()
    w.beginList(1, of: .i32, count: 3)
    for v: Int32 in [0, 1, -2] { w.element(i32: v) }
    w.beginList(2, of: .binary, count: 20)
    for _ in 0..<20 { w.element(binary: [0x41]) }
    let bytes = w.finish()
    #expect(Array(bytes.prefix(6)) == [0x19, 0x35, 0x00, 0x02, 0x03, 0x19])
    #expect(Array(bytes[6...7]) == [0xF8, 0x14])  // 15+ elements: 0xF0 | type, varint(20)
  }
}

@Suite struct DictionaryTests {
  @Test func bytesGetTheirFirstNumber() {
    var d = ByteDictionary()
    var rng = SplitMix64(seed: 9)
    var expected: [String: UInt32] = [:]
    for _ in 0..<20_000 {
      let s = "id-\(Int.random(in: 0..<5_000, using: &rng))"
      var copy = s
      let i = copy.withUTF8 { d.index(of: UnsafeRawBufferPointer($0)) }
      if let known = expected[s] { #expect(i == known) } else { expected[s] = i }
    }
    #expect(d.count == expected.count)
    for (s, i) in expected {
      #expect(d.withEntry(Int(i)) { String(decoding: $0, as: UTF8.self) } == s)
    }
    d.removeAll()
    #expect(d.count == 0)
  }
}

/// Decodes DELTA_BINARY_PACKED (Parquet's spec, read side), to check the encoder.
func decodeDelta(_ bytes: [UInt8]) throws -> [Int64] {
  var i = 0
  func varint() throws -> UInt64 {
    var v: UInt64 = 0
    var shift: UInt64 = 0
    while true {
      let b = try #require(i < bytes.count ? bytes[i] : nil)
      i += 1
      v |= UInt64(b & 0x7F) << shift
      if b < 0x80 { return v }
      shift += 7
    }
  }
  func zigzag() throws -> Int64 {
    let u = try varint()
    return Int64(bitPattern: (u >> 1) ^ (0 &- (u & 1)))
  }
  let block = Int(try varint())
  let miniblocks = Int(try varint())
  let count = Int(try varint())
  let first = try zigzag()
  guard count > 0 else { return [] }
  var out = [first]
  let per = block / miniblocks
  while out.count < count {
    let least = try zigzag()
    let widths = bytes[i..<(i + miniblocks)].map(Int.init)
    i += miniblocks
    for w in widths where out.count < count {
      var bit = 0
      for _ in 0..<per {
        var v: UInt64 = 0
        for b in 0..<w {
          let at = bit + b
          v |= UInt64((bytes[i + at / 8] >> UInt8(at % 8)) & 1) << UInt64(b)
        }
        bit += w
        if out.count < count { out.append(out[out.count - 1] &+ least &+ Int64(bitPattern: v)) }
      }
      i += per * w / 8
    }
  }
  #expect(i == bytes.count, "trailing bytes")
  return out
}

@Suite struct DeltaBinaryPackedTests {
  @Test func roundTrips() throws {
    var rng = SplitMix64(seed: 24)
    let shapes: [(inout SplitMix64) -> Int64] = [
      { _ in 1 },  // event numbers
      { Int64.random(in: 16...1_400, using: &$0) },  // times of a person's pace
      { Int64.random(in: -5...5, using: &$0) },
      { Int64.random(in: .min ... .max, using: &$0) },  // every width up to 64 bits
    ]
    for shape in shapes {
      for n in [0, 1, 2, 31, 32, 33, 127, 128, 129, 300, 1_000] {
        var values: [Int64] = []
        var v = Int64.random(in: -1_000...1_700_000_000_000, using: &rng)
        for _ in 0..<n {
          values.append(v)
          v = v &+ shape(&rng)
        }
        var out: [UInt8] = []
        DeltaBinaryPacked.encode(values[...], into: &out)
        #expect(try decodeDelta(out) == values, "n \(n)")
      }
    }
  }

  @Test func consecutiveNumbersCostAFewBytesPerBlock() {
    var out: [UInt8] = []
    DeltaBinaryPacked.encode(Array(Int64(1)...12_801)[...], into: &out)
    // Header, then per block of 128: the least delta (1) and four zero widths.
    #expect(out.count < 10 + 100 * 5 + 5)
  }
}
