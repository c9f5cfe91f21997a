import Foundation
import ListTapeSamples
import Testing

@testable import ListTapeDeflate

/// The Huffman-only gzip writer: every member inflates (through zlib) to its input, codes
/// stay within deflate's limits, and pages that codes cannot shrink are stored.
@Suite struct HuffmanDeflateTests {
  /// `bytes` as a gzip member of `HuffmanDeflate`.
  static func gzip(_ bytes: [UInt8]) -> [UInt8] {
    var out = [UInt8](repeating: 0, count: HuffmanDeflate.bound(bytes.count))
    let n = bytes.withUnsafeBufferPointer { src in
      out.withUnsafeMutableBytes { HuffmanDeflate.gzip(src, into: $0) }
    }
    #expect(n <= out.count)
    return Array(out[0..<n])
  }

  /// zlib's reading of a gzip member (nil when zlib refuses it or it does not end there).
  static func gunzip(_ member: [UInt8], expecting count: Int) -> [UInt8]? {
    MatchDeflateTests.inflate(member, windowBits: 15 + 16, expecting: count)
  }

  static func roundTrips(_ bytes: [UInt8]) -> Bool {
    gunzip(gzip(bytes), expecting: bytes.count) == bytes
  }

  @Test func edgeInputsRoundTrip() {
    #expect(Self.roundTrips([]))
    #expect(Self.roundTrips([7]))
    #expect(Self.roundTrips([UInt8](repeating: 0, count: 100_000)))
    #expect(Self.roundTrips([UInt8](repeating: 255, count: HuffmanDeflate.blockBytes)))
    #expect(Self.roundTrips([UInt8](repeating: 1, count: HuffmanDeflate.blockBytes + 1)))
    #expect(Self.roundTrips(Array(0...255)))
    #expect(Self.roundTrips([0, 1] + [UInt8](repeating: 2, count: 70_000)))
  }

  @Test func randomInputsOfEveryShapeRoundTrip() {
    var rng = SplitMix64(seed: 0x0DEF_1A7E)
    for round in 0..<120 {
      let count = Int.random(in: 0...(round % 4 == 0 ? 300_000 : 5_000), using: &rng)
      // Uniform bytes, a few symbols, hex text, or a skewed draw (many rare symbols).
      let bytes: [UInt8] = (0..<count).map { _ in
        switch round % 4 {
        case 0: return UInt8.random(in: 0...255, using: &rng)
        case 1: return UInt8.random(in: 0...2, using: &rng)
        case 2: return Array("0123456789ABCDEF-".utf8).randomElement(using: &rng)!
        default:
          let r = Double.random(in: 0..<1, using: &rng)
          return UInt8(min(255, Int(-log2(max(r, 1e-300)) * 3)))
        }
      }
      guard Self.roundTrips(bytes) else {
        Issue.record("round \(round): \(count) bytes did not round-trip")
        return
      }
    }
  }

  /// Frequencies doubling from symbol to symbol would make a Huffman code 40 bits deep:
  /// the lengths are cut to 15 and the code stays complete (Kraft's sum exactly 1).
  @Test func codeLengthsStayWithinTheLimitAndComplete() {
    var freq = [Int](repeating: 0, count: 257)
    for s in 0..<40 { freq[s] = 1 << s }
    freq[256] = 1
    for limit in [7, 15] {
      let lengths = HuffmanDeflate.codeLengths(freq, limit: limit)
      #expect(lengths.allSatisfy { $0 <= limit })
      let kraft = lengths.reduce(0) { $1 == 0 ? $0 : $0 + 1 << (limit - Int($1)) }
      #expect(kraft == 1 << limit)
      #expect((0..<41).allSatisfy { lengths[$0] > 0 || freq[$0] == 0 })
    }
    var bytes: [UInt8] = []
    for s in 0..<20 { bytes += [UInt8](repeating: UInt8(s), count: 1 << s) }
    #expect(Self.roundTrips(bytes))
  }

  /// Hex text shrinks by its symbols' entropy, as zlib's Huffman-only stream does; bytes
  /// that codes cannot shrink are stored, a few bytes per block over their size.
  @Test func sizesAreThoseOfHuffmanCodes() {
    var rng = SplitMix64(seed: 0x0DEF_1A7E)
    let hex = Array("0123456789ABCDEF".utf8)
    let text = (0..<200_000).map { _ in hex.randomElement(using: &rng)! }
    let coded = Self.gzip(text)
    #expect(coded.count < text.count * 52 / 100)
    let noise = (0..<200_000).map { _ in UInt8.random(in: 0...255, using: &rng) }
    let stored = Self.gzip(noise)
    #expect(stored.count <= noise.count + 18 + 5 * 4)
  }
}
