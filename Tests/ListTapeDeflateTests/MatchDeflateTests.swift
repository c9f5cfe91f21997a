import CListTapeZlib
import Foundation
import ListTapeSamples
import Testing

@testable import ListTapeDeflate

/// The matching writer and zlib streams of parts: every stream inflates (through zlib) to
/// its input, whole and from its independent part on, whatever the bytes.
@Suite struct MatchDeflateTests {
  /// zlib's inflating of `stream` (zlib's wrapper; raw with `windowBits` -15, gzip with
  /// 31), nil when zlib refuses it or (but for a raw stream) it does not end exactly there.
  static func inflate(_ stream: [UInt8], windowBits: Int32 = 15, expecting count: Int) -> [UInt8]? {
    var z = z_stream()
    guard listtape_inflateInit2(&z, windowBits) == Z_OK else { return nil }
    defer { inflateEnd(&z) }
    var out = [UInt8](repeating: 0, count: count + 1)
    var input = stream
    let status = input.withUnsafeMutableBufferPointer { src in
      out.withUnsafeMutableBufferPointer { dst in
        z.next_in = src.baseAddress
        z.avail_in = uInt(src.count)
        z.next_out = dst.baseAddress
        z.avail_out = uInt(dst.count)
        return CListTapeZlib.inflate(&z, Z_FINISH)
      }
    }
    guard status == Z_STREAM_END, windowBits < 0 || z.avail_in == 0 else { return nil }
    return Array(out[0..<Int(z.total_out)])
  }

  /// `bytes` as one zlib stream of parts cut at `cuts`, coded `ways`.
  static func parts(
    _ bytes: [UInt8], cuts: [Int], ways: [ZlibParts.Way], independentFrom: Int? = nil
  ) -> (stream: [UInt8], split: Int) {
    var out = [UInt8](repeating: 0, count: ZlibParts.bound(bytes.count, parts: ways.count))
    let (n, split) = bytes.withUnsafeBufferPointer { src in
      out.withUnsafeMutableBytes {
        ZlibParts.write(src, cuts: cuts, ways: ways, independentFrom: independentFrom, into: $0)
      }
    }
    #expect(n <= out.count)
    return (Array(out[0..<n]), split)
  }

  static func matchedRoundTrips(_ bytes: [UInt8]) -> Bool {
    inflate(parts(bytes, cuts: [], ways: [.matched]).stream, expecting: bytes.count) == bytes
  }

  /// Text like a state's strings column: short titles and field names, repeated.
  static func titles(_ count: Int, _ rng: inout some RandomNumberGenerator) -> [UInt8] {
    var out: [UInt8] = []
    while out.count < count {
      let words = ["Title \(Int.random(in: 0..<1000, using: &rng))", "New item", "badge"]
      let w = Array(words[Int.random(in: 0..<words.count, using: &rng)].utf8)
      out.append(UInt8(w.count))
      out.append(contentsOf: w)
    }
    return Array(out.prefix(count))
  }

  @Test func edgeInputsRoundTrip() {
    #expect(Self.matchedRoundTrips([]))
    #expect(Self.matchedRoundTrips([7]))
    #expect(Self.matchedRoundTrips([1, 2, 3, 4]))
    #expect(Self.matchedRoundTrips([UInt8](repeating: 0, count: 100_000)))
    #expect(Self.matchedRoundTrips([UInt8](repeating: 9, count: 258 + 4)))
    #expect(Self.matchedRoundTrips(Array(0...255) + Array(0...255)))
    #expect(Self.matchedRoundTrips([0, 1] + [UInt8](repeating: 2, count: 70_000)))
    // A match running past a block's input: the block is longer than its input limit.
    let period = (0..<300).map { UInt8($0 % 251) }
    #expect(Self.matchedRoundTrips(Array([[UInt8]](repeating: period, count: 700).joined())))
  }

  @Test func randomInputsOfEveryShapeRoundTrip() {
    var rng = SplitMix64(seed: 0x0DEF_1A7E)
    for round in 0..<80 {
      let count = Int.random(in: 0...(round % 4 == 0 ? 300_000 : 5_000), using: &rng)
      let bytes: [UInt8]
      switch round % 4 {
      case 0: bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &rng) }
      case 1: bytes = (0..<count).map { _ in UInt8.random(in: 0...2, using: &rng) }
      case 2: bytes = Self.titles(count, &rng)
      default:
        // Runs of copies from far back (distances up to the window and past it).
        var b = (0..<min(count, 40_000)).map { _ in UInt8.random(in: 0...255, using: &rng) }
        while b.count < count {
          let from = Int.random(in: 0..<b.count, using: &rng)
          let n = Int.random(in: 1...300, using: &rng)
          b.append(contentsOf: b[from..<min(b.count, from + n)])
        }
        bytes = Array(b.prefix(count))
      }
      guard Self.matchedRoundTrips(bytes) else {
        Issue.record("round \(round): \(count) bytes did not round-trip")
        return
      }
    }
  }

  @Test func repeatsShrinkAndNoiseIsStored() {
    var rng = SplitMix64(seed: 0x0DEF_1A7E)
    let text = Self.titles(200_000, &rng)
    let coded = Self.parts(text, cuts: [], ways: [.matched]).stream
    #expect(coded.count < text.count / 3)
    let noise = (0..<100_000).map { _ in UInt8.random(in: 0...255, using: &rng) }
    // Stored blocks: 5 bytes each of at most 65,535, the header and the Adler-32.
    #expect(Self.parts(noise, cuts: [], ways: [.matched]).stream.count <= noise.count + 2 * 5 + 6)
  }

  /// A compact state's layout: parts coded each their way, the last one a raw stream of
  /// its own from `split` on.
  @Test func partsInflateWholeAndFromTheirSplit() {
    var rng = SplitMix64(seed: 0x0DEF_1A7E)
    for round in 0..<40 {
      let sizes = (0..<6).map { _ in
        Int.random(in: 0...(round % 2 == 0 ? 3_000 : 90_000), using: &rng)
      }
      var bytes: [UInt8] = []
      var cuts: [Int] = []
      for (k, n) in sizes.enumerated() {
        if k > 0 { cuts.append(bytes.count) }
        bytes +=
          k == 5 ? Self.titles(n, &rng) : (0..<n).map { _ in UInt8.random(in: 0...3, using: &rng) }
      }
      let ways: [ZlibParts.Way] = [.stored, .stored, .huffman, .huffman, .stored, .matched]
      let independent = round % 3 == 0 ? nil : cuts[4]
      let (stream, split) = Self.parts(bytes, cuts: cuts, ways: ways, independentFrom: independent)
      #expect(Self.inflate(stream, expecting: bytes.count) == bytes, "round \(round)")
      if let independent {
        #expect(split > 0)
        let tail = Self.inflate(
          Array(stream[split...]), windowBits: -15, expecting: bytes.count - independent)
        #expect(tail.map { Array($0) } == Array(bytes[independent...]), "round \(round)")
      } else {
        #expect(split == 0)
      }
    }
  }
}
