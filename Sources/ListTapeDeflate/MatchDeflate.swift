import CListTapeZlib

/// Raw deflate blocks (RFC 1951) that match repeats with one hash probe a position and code
/// each block with Huffman codes of its own: what zlib's level 1 does for text of short
/// repeated words (item titles, field names), in about half its time. A block is stored
/// instead where codes would not shrink it. Any inflater reads the output.
package enum MatchDeflate {
  /// Input bytes a block covers at most (a match may run a little past it).
  static let blockInput = 65_535
  /// The hash table's slots (each the position of the last 4-byte sequence with that
  /// hash), as a power of two: 32 KiB of them stay near the core.
  static let hashBits = 13
  static let window = 32_768
  static let shortest = 4
  static let longest = 258

  /// `src` as raw deflate blocks written by `w`, matches referring only to `src` itself
  /// (so the blocks may start a stream of their own); the last block is marked final when
  /// `final` (an empty `src` writes nothing unless `final`).
  package static func blocks(_ src: UnsafeBufferPointer<UInt8>, final: Bool, _ w: inout BitWriter) {
    guard let base = src.baseAddress, src.count > 0 else {
      if final { HuffmanDeflate.storedBlocks(src, last: true, &w) }
      return
    }
    let n = src.count
    var table = [Int32](repeating: -1, count: 1 << hashBits)
    var tokens = [UInt32](repeating: 0, count: min(n, blockInput) + 1)
    var litFreq = [Int](repeating: 0, count: 286)
    var distFreq = [Int](repeating: 0, count: 30)
    var i = 0
    table.withUnsafeMutableBufferPointer { table in
      while i < n {
        let start = i
        let end = min(n, start &+ blockInput)
        var count = 0
        for k in 0..<286 { litFreq[k] = 0 }
        for k in 0..<30 { distFreq[k] = 0 }
        tokens.withUnsafeMutableBufferPointer { tokens in
          litFreq.withUnsafeMutableBufferPointer { litFreq in
            distFreq.withUnsafeMutableBufferPointer { distFreq in
              Codes.lengthSymbol.withUnsafeBufferPointer { lengthSymbol in
                Codes.distanceTable.withUnsafeBufferPointer { distanceTable in
                  i = parse(
                    base, n, from: start, to: end, table, tokens, &count, litFreq, distFreq,
                    lengthSymbol, distanceTable)
                }
              }
            }
          }
        }
        litFreq[256] = 1
        write(
          UnsafeBufferPointer(rebasing: src[start..<i]), tokens: tokens, count: count,
          litFreq: litFreq, distFreq: distFreq, last: final && i == n, &w)
      }
    }
  }

  /// Tokens for the input from `start` on, until `end` is passed: a literal byte, or a
  /// match (the top bit set, its length above bit 16, its distance below); counts each
  /// symbol. Returns where the input the tokens cover ends.
  @inline(__always)
  private static func parse(
    _ base: UnsafePointer<UInt8>, _ n: Int, from start: Int, to end: Int,
    _ table: UnsafeMutableBufferPointer<Int32>, _ tokens: UnsafeMutableBufferPointer<UInt32>,
    _ count: inout Int, _ litFreq: UnsafeMutableBufferPointer<Int>,
    _ distFreq: UnsafeMutableBufferPointer<Int>, _ lengthSymbol: UnsafeBufferPointer<UInt16>,
    _ distanceTable: UnsafeBufferPointer<UInt8>
  ) -> Int {
    let raw = UnsafeRawPointer(base)
    var i = start
    var c = 0
    // The last position a 4-byte load may start at.
    let lastLoad = n &- 4
    while i < end {
      if i <= lastLoad {
        let v = raw.loadUnaligned(fromByteOffset: i, as: UInt32.self)
        let h = Int((v &* 2_654_435_761) >> UInt32(32 &- hashBits))
        let candidate = Int(table[h])
        table[h] = Int32(truncatingIfNeeded: i)
        if candidate >= 0, i &- candidate <= window,
          raw.loadUnaligned(fromByteOffset: candidate, as: UInt32.self) == v
        {
          let most = min(longest, n &- i)
          var length = shortest
          while length &+ 8 <= most {
            let a = raw.loadUnaligned(fromByteOffset: candidate &+ length, as: UInt64.self)
            let b = raw.loadUnaligned(fromByteOffset: i &+ length, as: UInt64.self)
            if a != b {
              length &+= (a ^ b).trailingZeroBitCount >> 3
              break
            }
            length &+= 8
          }
          if length &+ 8 > most {
            while length < most && base[candidate &+ length] == base[i &+ length] { length &+= 1 }
          }
          let distance = i &- candidate
          tokens[c] =
            0x8000_0000 | UInt32(truncatingIfNeeded: length) << 16
            | UInt32(truncatingIfNeeded: distance)
          c &+= 1
          litFreq[Int(lengthSymbol[length])] &+= 1
          let d = distance &- 1
          distFreq[Int(d < 256 ? distanceTable[d] : distanceTable[256 &+ (d >> 7)])] &+= 1
          // The position after a short match is hashed too: titles repeat word by word.
          let next = i &+ 1
          if length <= 8 && next <= lastLoad {
            let u = raw.loadUnaligned(fromByteOffset: next, as: UInt32.self)
            table[Int((u &* 2_654_435_761) >> UInt32(32 &- hashBits))] = Int32(
              truncatingIfNeeded: next)
          }
          i &+= length
          continue
        }
      }
      let b = base[i]
      tokens[c] = UInt32(b)
      c &+= 1
      litFreq[Int(b)] &+= 1
      i &+= 1
    }
    count = c
    return i
  }

  /// One block of `tokens` (covering `bytes`): coded, or stored when codes would take more.
  private static func write(
    _ bytes: UnsafeBufferPointer<UInt8>, tokens: [UInt32], count: Int, litFreq: [Int],
    distFreq: [Int], last: Bool, _ w: inout BitWriter
  ) {
    let lit = HuffmanDeflate.codeLengths(litFreq, limit: 15)
    let dist = HuffmanDeflate.codeLengths(distFreq, limit: 15)
    let header = HuffmanDeflate.DynamicHeader(lit: lit, dist: dist)
    var bits = header.bits
    for s in 0..<286 where litFreq[s] > 0 {
      bits += litFreq[s] * (Int(lit[s]) + (s > 256 ? Int(Codes.lengthExtra[s - 257]) : 0))
    }
    for s in 0..<30 where distFreq[s] > 0 {
      bits += distFreq[s] * (Int(dist[s]) + Int(Codes.distanceExtra[s]))
    }
    if bits >= HuffmanDeflate.storedBits(bytes.count) {
      HuffmanDeflate.storedBlocks(bytes, last: last, &w)
      return
    }
    let litCodes = HuffmanDeflate.canonical(lit)
    let distCodes = HuffmanDeflate.canonical(dist)
    header.write(last: last, &w)
    // Each literal's code in the low 16 bits, its length above; each match length's code
    // and extra bits together likewise (their length at most 20), and each distance code's.
    var literal = [UInt32](repeating: 0, count: 256)
    for s in 0..<256 { literal[s] = UInt32(litCodes[s]) | UInt32(lit[s]) << 16 }
    var lengthCode = [UInt64](repeating: 0, count: longest + 1)
    for length in shortest...longest {
      let s = Int(Codes.lengthSymbol[length])
      let extraBits = Int(Codes.lengthExtra[s - 257])
      let extra = UInt64(length - Int(Codes.lengthBase[s - 257]))
      lengthCode[length] =
        (UInt64(litCodes[s]) | extra << UInt64(lit[s])) | UInt64(Int(lit[s]) + extraBits) << 32
    }
    // Each distance's code and extra bits together (their length at most 28), by the
    // distance table's index.
    var distanceCode = [UInt64](repeating: 0, count: 512)
    for k in 0..<512 {
      let first = k < 256 ? k + 1 : ((k - 256) << 7) + 1
      let s = Int(Codes.distanceTable[k])
      distanceCode[k] =
        UInt64(distCodes[s]) | UInt64(dist[s]) << 32
        | UInt64(Codes.distanceExtra[s]) << 40 | UInt64(first - Int(Codes.distanceBase[s])) << 48
    }
    literal.withUnsafeBufferPointer { literal in
      lengthCode.withUnsafeBufferPointer { lengthCode in
        distanceCode.withUnsafeBufferPointer { distanceCode in
          tokens.withUnsafeBufferPointer { tokens in
            for k in 0..<count {
              let t = tokens[k]
              if t & 0x8000_0000 == 0 {
                let a = literal[Int(t)]
                w.bits(UInt64(a & 0xFFFF), Int(a >> 16))
                continue
              }
              let l = lengthCode[Int((t >> 16) & 0x1FF)]
              w.bits(l & 0xFFFF_FFFF, Int(l >> 32))
              // The distance's code, then how far it is past the first distance of its
              // table slot plus that slot's offset from its symbol's base (slots past 256
              // cover 128 distances of one symbol).
              let d = Int(t & 0xFFFF) &- 1
              let slot = d < 256 ? d : 256 &+ (d >> 7)
              let c = distanceCode[slot]
              let codeLength = Int((c >> 32) & 0xFF)
              let extraBits = Int((c >> 40) & 0xFF)
              let extra = UInt64(c >> 48) &+ UInt64(d < 256 ? 0 : d & 0x7F)
              w.bits((c & 0xFFFF) | extra << UInt64(codeLength), codeLength &+ extraBits)
            }
          }
        }
      }
    }
    w.bits(UInt64(litCodes[256]), Int(lit[256]))
  }

  /// RFC 1951's length and distance codes (3.2.5).
  enum Codes {
    static let lengthBase: [UInt16] = [
      3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115,
      131, 163, 195, 227, 258,
    ]
    static let lengthExtra: [UInt8] = [
      0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0,
    ]
    static let distanceBase: [UInt16] = [
      1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537,
      2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577,
    ]
    static let distanceExtra: [UInt8] = [
      0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12,
      13, 13,
    ]
    /// The literal/length symbol of each match length (3...258; 258 has a code of its own).
    static let lengthSymbol: [UInt16] = (0...258).map { length in
      guard length >= 3 else { return 0 }
      if length == 258 { return 285 }
      var k = 27
      while Int(lengthBase[k]) > length { k -= 1 }
      return UInt16(257 + k)
    }
    /// Distance symbols: of distances 1...256 by `distance - 1`, of longer ones by
    /// `256 + (distance - 1) >> 7` (zlib's table).
    static let distanceTable: [UInt8] = (0..<512).map { k in
      let d = k < 256 ? k + 1 : ((k - 256) << 7) + 1
      var s = 29
      while Int(distanceBase[s]) > d { s -= 1 }
      return UInt8(s)
    }
  }
}

/// Zlib streams (RFC 1950) written part by part with `HuffmanDeflate` and `MatchDeflate`
/// blocks and stored ones.
package struct ZlibParts {
  /// How a part's bytes are coded.
  package enum Way: Sendable {
    case stored
    case huffman
    case matched
  }

  /// Room enough for a stream of `count` bytes in `parts` parts.
  package static func bound(_ count: Int, parts: Int) -> Int {
    2 + 4 + HuffmanDeflate.bound(count) + parts * 330
  }

  /// Writes `src` as one zlib stream into `out` (at least `bound(src.count, parts:)` bytes),
  /// part `k` (from `cuts[k]` to the next cut, the first from 0) coded as `ways[k]` says; at
  /// `independentFrom` (one of `cuts`) the stream is byte-aligned and nothing after refers
  /// to what came before, so a raw inflater can start there. Returns the bytes written and
  /// that offset in them (0 without).
  package static func write(
    _ src: UnsafeBufferPointer<UInt8>, cuts: [Int], ways: [Way], independentFrom: Int?,
    into out: UnsafeMutableRawBufferPointer
  ) -> (length: Int, split: Int) {
    precondition(ways.count == cuts.count + 1, "a way for each part")
    precondition(out.count >= bound(src.count, parts: ways.count), "output space under the bound")
    var w = BitWriter(out.baseAddress.unsafelyUnwrapped)
    // CMF: deflate, a 32 KiB window; FLG: the fastest level, its check bits.
    w.byte(0x78)
    w.byte(0x01)
    var split = 0
    let bounds = [0] + cuts.map { min(max($0, 0), src.count) } + [src.count]
    for k in ways.indices {
      let lo = max(bounds[k], k > 0 ? bounds[k - 1] : 0)
      let hi = max(bounds[k + 1], lo)
      if lo == independentFrom, k > 0 {
        // An empty stored block brings the stream to a byte boundary (zlib's full flush).
        if !w.isAligned {
          HuffmanDeflate.storedBlocks(UnsafeBufferPointer(rebasing: src[lo..<lo]), last: false, &w)
        }
        split = w.count
      }
      let part = UnsafeBufferPointer(rebasing: src[lo..<hi])
      let last = k == ways.count - 1
      switch ways[k] {
      case .stored:
        if part.isEmpty && !last { continue }
        HuffmanDeflate.storedBlocks(part, last: last, &w)
      case .huffman: HuffmanDeflate.blocks(part, final: last, &w)
      case .matched: MatchDeflate.blocks(part, final: last, &w)
      }
    }
    w.alignToByte()
    let adler = UInt32(truncatingIfNeeded: adler32(1, src.baseAddress, uInt(src.count)))
    for shift in [24, 16, 8, 0] as [UInt32] { w.byte(UInt8(truncatingIfNeeded: adler >> shift)) }
    return (w.count, split)
  }
}
