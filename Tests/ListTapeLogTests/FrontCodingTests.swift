import ListTapeSamples
import Testing

@testable import ListTapeLog

/// An index file's segment dictionaries are front-coded: they decode to the very entries
/// coded, for every id shape and length (the 32-byte fast path and the long-entry path
/// both), in part as well as whole; a coding that lies is refused, never trusted.
@Suite struct FrontCodingTests {
  /// Stored forms back to back, and their ends.
  static func entries(_ texts: [[UInt8]]) -> (stored: [UInt8], ends: [UInt32]) {
    var stored: [UInt8] = []
    var ends: [UInt32] = []
    for t in texts {
      stored += t
      ends.append(UInt32(stored.count))
    }
    return (stored, ends)
  }

  /// Path-like, UUID-like (a kind byte and 16 random bytes), short, long (past 32 bytes,
  /// sharing past 32), one-byte and repeated entries, in an order that shares prefixes.
  static let mixed: [[UInt8]] = {
    var rng = SplitMix64(seed: 11)
    var texts: [[UInt8]] = []
    for i in 0..<3_000 {
      switch i % 7 {
      case 0: texts.append(Array("\u{1}lib/g\(i % 40)/sub\(i % 9)/i-\(i)".utf8))
      case 1: texts.append([2] + (0..<16).map { _ in UInt8(truncatingIfNeeded: rng.next()) })
      case 2: texts.append(Array("\u{1}i\(i)".utf8))
      case 3:
        texts.append(Array("\u{1}com.example.app/features/outline/sections/\(i / 5)/row-\(i)".utf8))
      case 4: texts.append([UInt8(truncatingIfNeeded: rng.next())])
      case 5: texts.append(texts[texts.count - 1])
      default:
        texts.append(
          Array(("\u{1}" + String(repeating: "é", count: Int(rng.next() % 90)) + "\(i)").utf8))
      }
    }
    return texts
  }()

  func decode(_ coded: [UInt8], entries: Int, count: Int, storedLength: Int) -> (
    stored: [UInt8], ends: [UInt32]
  )? {
    coded.withUnsafeBytes {
      FrontCoding.decode($0, entries: entries, count: count, storedLength: storedLength)
    }
  }

  @Test func entriesDecodeToWhatWasCodedWholeAndInPart() throws {
    let (stored, ends) = Self.entries(Self.mixed)
    let coded = FrontCoding.encode(stored: stored, ends: ends)
    let whole = try #require(
      decode(coded, entries: ends.count, count: ends.count, storedLength: stored.count))
    #expect(whole.stored == stored)
    #expect(whole.ends == ends)
    for count in [0, 1, 2, 31, 1_500, ends.count - 1] {
      let part = try #require(
        decode(coded, entries: ends.count, count: count, storedLength: stored.count))
      #expect(part.ends == Array(ends.prefix(count)), "first \(count)")
      #expect(part.stored == Array(stored.prefix(count == 0 ? 0 : Int(ends[count - 1]))))
    }
    // No entries: no bytes.
    #expect(decode([], entries: 0, count: 0, storedLength: 0).map { $0.ends.isEmpty } == true)
  }

  /// Read in pieces as a file is (each piece decoded as it comes, an entry cut by a piece's
  /// end finished by the next, a piece smaller than one entry grown), the coding decodes to
  /// the same entries and is refused in the same cases; every coded byte is read once, in
  /// order, refused or not (the index checksums what it reads).
  @Test(arguments: [1, 2, 7, 33, 100, 4_096])
  func piecesDecodeAsTheWhole(piece: Int) throws {
    let (stored, ends) = Self.entries(Self.mixed)
    let coded = FrontCoding.encode(stored: stored, ends: ends)
    let n = ends.count
    func pieces(_ c: [UInt8], entries: Int, count: Int, storedLength: Int) -> (
      decoded: (stored: [UInt8], ends: [UInt32])?, read: [UInt8]
    ) {
      var read: [UInt8] = []
      let decoded = FrontCoding.decode(
        entries: entries, count: count, storedLength: storedLength, codedLength: c.count,
        piece: piece
      ) { dst, k in
        let bytes = c[read.count..<read.count + k]
        bytes.withUnsafeBytes { dst.copyMemory(from: $0.baseAddress!, byteCount: k) }
        read += bytes
        return true
      }
      return (decoded, read)
    }
    let whole = pieces(coded, entries: n, count: n, storedLength: stored.count)
    #expect(whole.read == coded)
    #expect(whole.decoded?.stored == stored)
    #expect(whole.decoded?.ends == ends)
    let part = pieces(coded, entries: n, count: 1_500, storedLength: stored.count)
    #expect(part.read == coded)
    #expect(part.decoded?.ends == Array(ends.prefix(1_500)))
    for (c, entries, length) in [
      (coded, n, stored.count - 1), (coded, n, stored.count + 1), (coded + [0], n, stored.count),
      (Array(coded.dropLast()), n, stored.count), (coded, n + 1, stored.count),
      (coded, n - 1, stored.count),
    ] {
      let refused = pieces(c, entries: entries, count: entries, storedLength: length)
      #expect(refused.decoded == nil)
      #expect(refused.read == c)
    }
    // A read that fails ends the decoding.
    var calls = 0
    let failed = FrontCoding.decode(
      entries: n, count: n, storedLength: stored.count, codedLength: coded.count, piece: piece
    ) { _, _ in
      calls += 1
      return false
    }
    #expect(failed == nil && calls == 1)
  }

  /// Path-like ids cost well under their stored bytes; UUIDs about two bytes more each.
  @Test func pathIdsShrinkAndUUIDsCostTwoBytesMore() {
    let paths = (0..<10_000).map { Array("\u{1}lib/g\($0 / 1000)/sub\($0 / 100)/i-\($0)".utf8) }
    let (ps, pe) = Self.entries(paths)
    #expect(FrontCoding.encode(stored: ps, ends: pe).count * 2 < ps.count)
    var rng = SplitMix64(seed: 3)
    let uuids = (0..<10_000).map { _ in
      [2] + (0..<16).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
    }
    let (us, ue) = Self.entries(uuids)
    #expect(FrontCoding.encode(stored: us, ends: ue).count <= us.count + 2 * ue.count)
  }

  /// A coding that lies about its entries is refused: shared bytes the entry before does
  /// not hold, an empty entry, a length past the end, bytes left over or missing, a total
  /// other than declared, and a declared total past the expansion cap.
  @Test func aCodingThatLiesIsRefused() {
    let (stored, ends) = Self.entries(Self.mixed)
    let coded = FrontCoding.encode(stored: stored, ends: ends)
    let n = ends.count
    #expect(decode(coded, entries: n, count: n, storedLength: stored.count - 1) == nil)
    #expect(decode(coded, entries: n, count: n, storedLength: stored.count + 1) == nil)
    #expect(decode(coded + [0], entries: n, count: n, storedLength: stored.count) == nil)
    #expect(
      decode(Array(coded.dropLast()), entries: n, count: n, storedLength: stored.count) == nil)
    #expect(decode(coded, entries: n + 1, count: n, storedLength: stored.count) == nil)
    #expect(decode(coded, entries: n - 1, count: n - 1, storedLength: stored.count) == nil)
    // The first entry shares a byte with nothing; an entry of no bytes.
    #expect(decode([1, 1, 65], entries: 1, count: 1, storedLength: 2) == nil)
    #expect(decode([0, 0, 0, 1, 65], entries: 2, count: 2, storedLength: 1) == nil)
    // Sharing more than the entry before holds (it has one byte).
    #expect(decode([0, 1, 65, 2, 1, 66], entries: 2, count: 2, storedLength: 4) == nil)
    #expect(
      decode([0, 1, 65, 1, 1, 66], entries: 2, count: 2, storedLength: 3)?.stored == [65, 65, 66])
    // A length that never ends, and one past the input.
    #expect(
      decode([0, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01], entries: 1, count: 1, storedLength: 1) == nil)
    #expect(decode([0, 9, 65], entries: 1, count: 1, storedLength: 9) == nil)
    // 10 coded bytes may not claim a megabyte (each entry sharing all of the one before).
    #expect(decode(coded, entries: n, count: 0, storedLength: coded.count * 65 + 4_097) == nil)
  }

  /// A segment whose sharing would pass the expansion cap is coded without sharing, and
  /// still reads back.
  @Test func sharingPastTheCapIsCodedWithout() throws {
    let long = [UInt8](repeating: 0x41, count: 400)
    let texts = (0..<2_000).map { i in long + [UInt8(truncatingIfNeeded: i), UInt8(i >> 8)] }
    let (stored, ends) = Self.entries(texts)
    let coded = FrontCoding.encode(stored: stored, ends: ends)
    #expect(FrontCoding.withinCap(stored: stored.count, coded: coded.count))
    #expect(coded.count > stored.count)
    let back = try #require(
      decode(coded, entries: ends.count, count: ends.count, storedLength: stored.count))
    #expect(back.stored == stored && back.ends == ends)
  }
}
