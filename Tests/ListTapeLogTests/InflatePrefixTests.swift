import ListTapeSamples
import Testing

@testable import ListTapeLog

/// `Inflater.inflatePrefix` reads a zlib stream's header itself and its deflate data with a
/// raw stream (no Adler-32 for a prefix that never reaches it): the bytes it gives are the
/// whole stream's first ones, the header is checked as zlib checks it, and distances
/// reach as far back as zlib lets them in a stream it reads whole.
@Suite struct InflatePrefixTests {
  /// `raw` as one zlib stream (window 32 KiB, zlib's level 4).
  static func compressed(_ raw: [UInt8]) throws -> [UInt8] {
    let deflater = try #require(Deflater(level: 4))
    var out = [UInt8](repeating: 0, count: deflater.bound(raw.count))
    let n = try #require(
      raw.withUnsafeBytes { src in out.withUnsafeMutableBytes { deflater.compress(src, into: $0) } }
    )
    return Array(out[..<n])
  }

  /// `stream` with the header `cmf` (method and window), its dictionary flag `fdict`, and
  /// check bits that make the pair a multiple of 31.
  static func withHeader(_ stream: [UInt8], cmf: UInt8, fdict: Bool = false) -> [UInt8] {
    var s = stream
    s[0] = cmf
    s[1] = fdict ? 0x20 : 0
    s[1] |= UInt8((31 - (UInt16(cmf) << 8 | UInt16(s[1])) % 31) % 31)
    return s
  }

  /// `stream` with its header saying a window of 2^(8 + `cinfo`) bytes.
  static func withWindow(_ stream: [UInt8], cinfo: UInt8) -> [UInt8] {
    withHeader(stream, cmf: cinfo << 4 | 8)
  }

  /// The prefix `inflatePrefix` gives of `stream` (whose whole output is `count` bytes),
  /// asking for `want` bytes after the first `head`.
  static func prefix(
    _ inflater: Inflater, _ stream: [UInt8], count: Int, head: Int, want: Int
  ) -> Result<[UInt8], InflateFailure> {
    var out = [UInt8](repeating: 0, count: count)
    let r = stream.withUnsafeBytes { src in
      out.withUnsafeMutableBytes { inflater.inflatePrefix(src, into: $0, head: head) { _ in want } }
    }
    return r.map { Array(out[..<$0]) }
  }

  static let text: [UInt8] = {
    var rng = SplitMix64(seed: 3)
    return (0..<20_000).flatMap { i in Array("lib/g\(rng.next() % 900)/i-\(i) ".utf8) }
  }()

  @Test func aPrefixIsTheWholeStreamsFirstBytesStreamAfterStream() throws {
    let inflater = try #require(Inflater())
    let stream = try Self.compressed(Self.text)
    for want in [64, 5_000, 100_000, 64] {
      let got = try Self.prefix(
        inflater, stream, count: Self.text.count, head: 16, want: want
      ).get()
      #expect(got == Array(Self.text[..<want]))
    }
    // The exact inflate of the same inflater still checks the whole stream.
    var whole = [UInt8](repeating: 0, count: Self.text.count)
    let problem = stream.withUnsafeBytes { src in
      whole.withUnsafeMutableBytes { inflater.inflateExact(src, into: $0) }
    }
    #expect(problem == nil)
    #expect(whole == Self.text)
  }

  @Test func aSmallerWindowInTheHeaderReadsAsZlibReadsIt() throws {
    let inflater = try #require(Inflater())
    // 300 bytes: no distance reaches past a 512-byte window.
    let short = Array(Self.text[..<300])
    let small = Self.withWindow(try Self.compressed(short), cinfo: 1)
    #expect(
      try Self.prefix(inflater, small, count: 300, head: 8, want: 200).get() == Array(short[..<200])
    )
    // A repeat 1,000 bytes back, past that window: zlib reads the stream whole with its own
    // 32 KiB window (it bounds distances by the header's only when built strict), and so
    // does the prefix, across the call that stops at `head`.
    var rng = SplitMix64(seed: 9)
    let noise = (0..<1_000).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
    let far = Self.withWindow(try Self.compressed(noise + noise), cinfo: 1)
    var whole = [UInt8](repeating: 0, count: 2_000)
    let exact = far.withUnsafeBytes { src in
      whole.withUnsafeMutableBytes { inflater.inflateExact(src, into: $0) }
    }
    #expect(exact == nil)
    #expect(whole == noise + noise)
    let cut = try Self.prefix(inflater, far, count: 2_000, head: 8, want: 1_900).get()
    #expect(cut == Array((noise + noise)[..<1_900]))
    // And the next stream reads.
    let stream = try Self.compressed(Self.text)
    let got = Self.prefix(inflater, stream, count: Self.text.count, head: 8, want: 70_000)
    #expect(try got.get() == Array(Self.text[..<70_000]))
  }

  @Test func aBadHeaderIsRefused() throws {
    let inflater = try #require(Inflater())
    let stream = try Self.compressed(Self.text)
    var badCheck = stream
    badCheck[1] ^= 0x01
    let presetDictionary = Self.withHeader(stream, cmf: 0x78, fdict: true)
    let notDeflate = Self.withHeader(stream, cmf: 0x77)
    let tooWide = Self.withWindow(stream, cinfo: 8)
    #expect((UInt16(notDeflate[0]) << 8 | UInt16(notDeflate[1])) % 31 == 0)
    // The same header rebuilt as it was reads: only what each case changes is refused.
    #expect(
      try Self.prefix(
        inflater, Self.withWindow(stream, cinfo: 7), count: Self.text.count, head: 8, want: 100
      ).get() == Array(Self.text[..<100]))
    for bad in [badCheck, presetDictionary, notDeflate, tooWide, [0x78]] {
      guard
        case .failure(let f) = Self.prefix(
          inflater, bad, count: Self.text.count, head: 8, want: 100)
      else {
        Issue.record("header \(bad.prefix(2)) read")
        continue
      }
      #expect(f.why.contains("first 8 bytes"))
    }
    // The inflater reads good streams after refusing those.
    let got = Self.prefix(inflater, stream, count: Self.text.count, head: 8, want: 100)
    #expect(try got.get() == Array(Self.text[..<100]))
  }
}
