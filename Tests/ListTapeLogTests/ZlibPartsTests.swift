import ListTapeDeflate
import ListTapeSamples
import Testing

@testable import ListTapeLog

/// A stream compressed with an independent last part is still one zlib stream (older
/// readers inflate it whole), and its two parts inflate on their own to the same bytes;
/// a part cut short or inflated by the wrong kind of inflater is refused.
@Suite struct ZlibPartsTests {
  /// Bytes in three columns of different kinds, the last one text.
  static let columns: [[UInt8]] = {
    var rng = SplitMix64(seed: 7)
    let levels = (0..<40_000).map { _ in UInt8(rng.next() % 4) }
    let refs = (0..<60_000).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
    let text = (0..<30_000).flatMap { i in Array("Item \(i) title".utf8) }
    return [levels, refs, text]
  }()

  /// `out` (a stream of `count` bytes whose second part starts at `split`) inflated whole, as
  /// a reader that knows nothing of parts, and in parts: the head with the zlib inflater,
  /// the tail with a raw one (each part with what its inflater reported).
  func inflate(_ out: [UInt8], split: Int, count: Int) throws -> (
    whole: [UInt8], head: ArraySlice<UInt8>, tail: ArraySlice<UInt8>, headEnded: Bool,
    tailEnded: Bool
  ) {
    var whole = [UInt8](repeating: 0, count: count)
    let inflater = try #require(Inflater())
    let problem = out.withUnsafeBytes { src in
      whole.withUnsafeMutableBytes { inflater.inflateExact(src, into: $0) }
    }
    #expect(problem == nil)
    var head = [UInt8](repeating: 0, count: count)
    var tail = [UInt8](repeating: 0, count: count)
    let h = try #require(
      out.withUnsafeBytes { src in
        head.withUnsafeMutableBytes {
          inflater.inflatePart(UnsafeRawBufferPointer(rebasing: src[..<split]), into: $0)
        }
      })
    let rawInflater = try #require(Inflater(raw: true))
    let t = try #require(
      out.withUnsafeBytes { src in
        tail.withUnsafeMutableBytes {
          rawInflater.inflatePart(UnsafeRawBufferPointer(rebasing: src[split...]), into: $0)
        }
      })
    return (whole, head[..<h.written], tail[..<t.written], h.ended, t.ended)
  }

  @Test func thePartsInflateToTheWholeAndTheWholeStillInflates() throws {
    let raw = Self.columns.flatMap { $0 }
    let points = [0, Self.columns[0].count, Self.columns[0].count + Self.columns[1].count]
    let deflater = try #require(Deflater(level: 1))
    var out = [UInt8](repeating: 0, count: deflater.bound(raw.count, blocks: 4))
    let (n, split) = try #require(
      raw.withUnsafeBytes { src in
        out.withUnsafeMutableBytes {
          deflater.compress(src, into: $0, flushPoints: points, independentFrom: points[2])
        }
      })
    out.removeSubrange(n...)
    #expect(split > 0 && split < n)

    let parts = try inflate(out, split: split, count: raw.count)
    #expect(parts.whole == raw)
    #expect(!parts.headEnded && parts.tailEnded)
    #expect(parts.head.count == points[2] && parts.tail.count == raw.count - points[2])
    #expect(Array(parts.head) + Array(parts.tail) == raw)

    // The tail cut short does not end; the tail read as a zlib stream is refused.
    var tail = [UInt8](repeating: 0, count: raw.count)
    let rawInflater = try #require(Inflater(raw: true))
    let inflater = try #require(Inflater())
    let short = out.withUnsafeBytes { src in
      tail.withUnsafeMutableBytes {
        rawInflater.inflatePart(UnsafeRawBufferPointer(rebasing: src[split..<(n - 40)]), into: $0)
      }
    }
    #expect(short.map { !$0.ended } ?? true)
    let wrongKind = out.withUnsafeBytes { src in
      tail.withUnsafeMutableBytes {
        inflater.inflatePart(UnsafeRawBufferPointer(rebasing: src[split...]), into: $0)
      }
    }
    #expect(wrongKind == nil)
  }

  /// Columns coded each its own way by our writers (Huffman codes alone, stored, matched:
  /// a compact seek point's layout) in one stream with an independent last part: the stored
  /// column is in the output byte for byte, and the whole and its parts inflate to the
  /// input through the readers' inflaters.
  @Test func aStoredColumnIsCopiedAndStillInflates() throws {
    // Six bits in each byte: Huffman codes would shrink it by a quarter, were it not stored.
    var rng = SplitMix64(seed: 11)
    let refs = (0..<60_000).map { _ in UInt8(rng.next() % 64) }
    let raw = Self.columns[0] + refs + Self.columns[2]
    let cuts = [Self.columns[0].count, Self.columns[0].count + refs.count]
    var out = [UInt8](repeating: 0, count: ZlibParts.bound(raw.count, parts: 3))
    let (n, split) = raw.withUnsafeBufferPointer { src in
      out.withUnsafeMutableBytes {
        ZlibParts.write(
          src, cuts: cuts, ways: [.huffman, .stored, .matched], independentFrom: cuts[1], into: $0)
      }
    }
    out.removeSubrange(n...)
    let verbatim = (0...max(0, split - refs.count)).contains { at in
      out[at] == refs[0] && out[at..<(at + refs.count)].elementsEqual(refs)
    }
    #expect(verbatim)
    let parts = try inflate(out, split: split, count: raw.count)
    #expect(parts.whole == raw)
    #expect(Array(parts.head) + Array(parts.tail) == raw)
  }
}
