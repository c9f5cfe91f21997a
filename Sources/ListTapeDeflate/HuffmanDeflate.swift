import CListTapeZlib

/// Deflate blocks that code every byte as a literal with a Huffman code of the block's own
/// (RFC 1951 dynamic blocks, no matching), or store it where codes would not shrink it:
/// what zlib's `Z_HUFFMAN_ONLY` writes, in a fraction of its time (one pass counting a
/// block's bytes, one writing their codes, 64 bits of output at a time); as raw blocks or
/// a gzip member. Any inflater reads them; the Parquet pages of hex ids, bit-packed
/// indices and delta-coded numbers that matching cannot shrink, and a seek point's levels
/// and flags, are written this way. Also the code-length machinery `MatchDeflate` shares.
package enum HuffmanDeflate {
  /// Bytes per block: each has its own codes (a header of about 60-90 bytes), or is one
  /// stored block (which holds at most this many).
  package static let blockBytes = 65_535
  /// Room enough for `count` input bytes: the gzip header and trailer, and per block a
  /// header and at most 15 bits a byte (a block takes the smaller of that and its stored
  /// form, 5 bytes over its size).
  package static func bound(_ count: Int) -> Int {
    let blocks = count / blockBytes + 1
    return 18 + blocks * 320 + count * 2
  }

  /// Compresses `src` as one gzip member into `out` (at least `bound(src.count)` bytes),
  /// its blocks Huffman-coded, or with `matched` written by `MatchDeflate`; returns the
  /// bytes written.
  package static func gzip(
    _ src: UnsafeBufferPointer<UInt8>, matched: Bool = false,
    into out: UnsafeMutableRawBufferPointer
  ) -> Int {
    precondition(out.count >= bound(src.count), "output space under the bound")
    var w = BitWriter(out.baseAddress.unsafelyUnwrapped)
    // ID1 ID2, deflate, no flags, no time, no extra flags, OS unknown.
    for b: UInt8 in [0x1F, 0x8B, 8, 0, 0, 0, 0, 0, 0, 0xFF] { w.byte(b) }
    if matched {
      MatchDeflate.blocks(src, final: true, &w)
    } else {
      blocks(src, final: true, &w)
    }
    w.alignToByte()
    let crc = crc32Bytes(0, UnsafeRawBufferPointer(src))
    w.word32(crc)
    w.word32(UInt32(truncatingIfNeeded: src.count))
    return w.count
  }

  /// `src` as raw deflate blocks written by `w`, cut every `blockBytes`, the last one
  /// marked final when `final` (an empty `src` writes nothing unless `final`).
  package static func blocks(_ src: UnsafeBufferPointer<UInt8>, final: Bool, _ w: inout BitWriter) {
    guard !src.isEmpty else {
      if final { storedBlocks(src, last: true, &w) }
      return
    }
    var start = 0
    while start < src.count {
      let end = min(src.count, start + blockBytes)
      block(UnsafeBufferPointer(rebasing: src[start..<end]), last: final && end == src.count, &w)
      start = end
    }
  }

  /// One block of `bytes`: Huffman-coded, or stored when codes would take more.
  private static func block(_ bytes: UnsafeBufferPointer<UInt8>, last: Bool, _ w: inout BitWriter) {
    var freq = [Int](repeating: 0, count: 257)
    freq.withUnsafeMutableBufferPointer { f in
      for b in bytes { f[Int(b)] &+= 1 }
    }
    freq[256] = 1
    let lit = codeLengths(freq, limit: 15)
    // The 257 literal lengths (bytes and the end of the block; no length codes), then two
    // distance codes of one bit (none is used; zlib likewise sends two, which every
    // inflater accepts).
    let header = DynamicHeader(lit: lit, dist: [1, 1])
    var dataBits = 0
    for s in 0..<257 { dataBits += freq[s] * Int(lit[s]) }
    if header.bits + dataBits >= storedBits(bytes.count) {
      storedBlocks(bytes, last: last, &w)
      return
    }
    let litCodes = canonical(lit)
    header.write(last: last, &w)
    // Each byte's code in the low 16 bits, its length above.
    var table = [UInt32](repeating: 0, count: 256)
    for s in 0..<256 { table[s] = UInt32(litCodes[s]) | UInt32(lit[s]) << 16 }
    table.withUnsafeBufferPointer { t in w.codes(bytes, t) }
    w.bits(UInt64(litCodes[256]), Int(lit[256]))
  }

  /// A dynamic block's header (RFC 1951 3.2.7): its literal/length and distance code
  /// lengths, trailing unused ones cut, sent run-length coded with a code of their own.
  package struct DynamicHeader {
    let lit: [UInt8]
    let dist: [UInt8]
    let runs: [Run]
    let cl: [UInt8]
    let clCount: Int
    /// The header's size in bits, the block's own 3 included.
    let bits: Int

    package init(lit allLit: [UInt8], dist allDist: [UInt8]) {
      var hlit = allLit.count
      while hlit > 257 && allLit[hlit - 1] == 0 { hlit -= 1 }
      var hdist = allDist.count
      while hdist > 1 && allDist[hdist - 1] == 0 { hdist -= 1 }
      lit = Array(allLit[0..<hlit])
      dist = Array(allDist[0..<hdist])
      runs = HuffmanDeflate.runLengths(lit + dist)
      var clFreq = [Int](repeating: 0, count: 19)
      for r in runs { clFreq[Int(r.symbol)] += 1 }
      cl = HuffmanDeflate.codeLengths(clFreq, limit: 7)
      var n = 19
      while n > 4 && cl[Int(HuffmanDeflate.order[n - 1])] == 0 { n -= 1 }
      clCount = n
      var bits = 3 + 5 + 5 + 4 + 3 * n
      for r in runs { bits += Int(cl[Int(r.symbol)]) + Int(r.extraBits) }
      self.bits = bits
    }

    /// The block's first 3 bits (final when `last`), then the header.
    package func write(last: Bool, _ w: inout BitWriter) {
      let clCodes = HuffmanDeflate.canonical(cl)
      w.bits(last ? 1 : 0, 1)
      w.bits(2, 2)
      w.bits(UInt64(lit.count - 257), 5)
      w.bits(UInt64(dist.count - 1), 5)
      w.bits(UInt64(clCount - 4), 4)
      for i in 0..<clCount { w.bits(UInt64(cl[Int(HuffmanDeflate.order[i])]), 3) }
      for r in runs {
        w.bits(UInt64(clCodes[Int(r.symbol)]), Int(cl[Int(r.symbol)]))
        if r.extraBits > 0 { w.bits(UInt64(r.extra), Int(r.extraBits)) }
      }
    }
  }

  /// The bits `count` bytes take as stored blocks: per block of at most `blockBytes` its 3
  /// header bits, at most 7 to a byte boundary, LEN and NLEN; then the bytes.
  package static func storedBits(_ count: Int) -> Int {
    max(1, (count + blockBytes - 1) / blockBytes) * 42 + count * 8
  }

  /// `bytes` as stored blocks of at most `blockBytes` (one empty block for none), the last
  /// marked final when `last`.
  package static func storedBlocks(
    _ bytes: UnsafeBufferPointer<UInt8>, last: Bool, _ w: inout BitWriter
  ) {
    var start = 0
    repeat {
      let end = min(bytes.count, start + blockBytes)
      stored(
        UnsafeBufferPointer(rebasing: bytes[start..<end]), last: last && end == bytes.count, &w)
      start = end
    } while start < bytes.count
  }

  /// A stored block (at most 65,535 bytes: `blockBytes`).
  private static func stored(_ bytes: UnsafeBufferPointer<UInt8>, last: Bool, _ w: inout BitWriter)
  {
    w.bits(last ? 1 : 0, 1)
    w.bits(0, 2)
    w.alignToByte()
    let n = UInt16(bytes.count)
    w.byte(UInt8(truncatingIfNeeded: n))
    w.byte(UInt8(truncatingIfNeeded: n >> 8))
    w.byte(UInt8(truncatingIfNeeded: ~n))
    w.byte(UInt8(truncatingIfNeeded: ~n >> 8))
    w.raw(bytes)
  }

  /// The order the code length code's lengths are sent in (RFC 1951 3.2.7).
  package static let order: [UInt8] = [
    16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15,
  ]

  /// A symbol of the code length alphabet and its extra bits.
  package struct Run {
    var symbol: UInt8
    var extra: UInt8 = 0
    var extraBits: UInt8 = 0
  }

  /// `lengths` as the code length alphabet sends them: 16 repeats the previous length 3-6
  /// times, 17 and 18 send 3-10 and 11-138 zeros.
  package static func runLengths(_ lengths: [UInt8]) -> [Run] {
    var runs: [Run] = []
    var i = 0
    while i < lengths.count {
      let l = lengths[i]
      var n = 1
      while i + n < lengths.count && lengths[i + n] == l { n += 1 }
      i += n
      if l == 0 {
        while n >= 11 {
          let r = min(n, 138)
          runs.append(Run(symbol: 18, extra: UInt8(r - 11), extraBits: 7))
          n -= r
        }
        if n >= 3 {
          runs.append(Run(symbol: 17, extra: UInt8(n - 3), extraBits: 3))
          n = 0
        }
        for _ in 0..<n { runs.append(Run(symbol: 0)) }
      } else {
        runs.append(Run(symbol: l))
        n -= 1
        while n >= 3 {
          let r = min(n, 6)
          runs.append(Run(symbol: 16, extra: UInt8(r - 3), extraBits: 2))
          n -= r
        }
        for _ in 0..<n { runs.append(Run(symbol: l)) }
      }
    }
    return runs
  }

  /// Huffman code lengths for `freq` of at most `limit` bits; unused symbols get 0. At
  /// least two symbols get a code (a lone one is paired with another, as zlib does), so
  /// every code is complete.
  package static func codeLengths(_ freq: [Int], limit: Int) -> [UInt8] {
    var symbols = freq.indices.filter { freq[$0] > 0 }
    if symbols.count < 2 {
      let other = symbols.first == 0 ? 1 : 0
      symbols = (symbols + [other]).sorted()
    }
    let weight = { (s: Int) in max(freq[s], 1) }
    symbols.sort { (weight($0), $0) < (weight($1), $1) }
    // Huffman's merge over the sorted leaves and a queue of merged nodes (ascending), then
    // each leaf's depth through its parents.
    let n = symbols.count
    var parent = [Int](repeating: -1, count: 2 * n - 1)
    var nodeWeight = symbols.map(weight) + [Int](repeating: 0, count: n - 1)
    var leaf = 0
    var merged = n
    var next = n
    func take() -> Int {
      if leaf < n && (merged >= next || nodeWeight[leaf] <= nodeWeight[merged]) {
        leaf += 1
        return leaf - 1
      }
      merged += 1
      return merged - 1
    }
    while next < 2 * n - 1 {
      let a = take()
      let b = take()
      nodeWeight[next] = nodeWeight[a] + nodeWeight[b]
      parent[a] = next
      parent[b] = next
      next += 1
    }
    var depth = [Int](repeating: 0, count: 2 * n - 1)
    for x in stride(from: 2 * n - 3, through: 0, by: -1) { depth[x] = depth[parent[x]] + 1 }
    // Lengths over the limit: count codes per length, fold the long ones into the limit,
    // then lengthen the shortest-but-one codes until the code is complete again (Kraft sum
    // exactly 1), the rarest symbols taking the longest codes.
    var perLength = [Int](repeating: 0, count: limit + 1)
    for i in 0..<n { perLength[min(depth[i], limit)] += 1 }
    var total = 0
    for l in 1...limit { total += perLength[l] << (limit - l) }
    while total > 1 << limit {
      perLength[limit] -= 1
      for l in stride(from: limit - 1, through: 1, by: -1) where perLength[l] > 0 {
        perLength[l] -= 1
        perLength[l + 1] += 2
        break
      }
      total -= 1
    }
    var lengths = [UInt8](repeating: 0, count: freq.count)
    // symbols ascend by weight: the first ones take the longest codes.
    var i = 0
    for l in stride(from: limit, through: 1, by: -1) {
      for _ in 0..<perLength[l] {
        lengths[symbols[i]] = UInt8(l)
        i += 1
      }
    }
    return lengths
  }

  /// The canonical codes of `lengths` (RFC 1951 3.2.2), bit-reversed for writing from the
  /// low bit up.
  package static func canonical(_ lengths: [UInt8]) -> [UInt16] {
    var count = [Int](repeating: 0, count: 16)
    for l in lengths where l > 0 { count[Int(l)] += 1 }
    var next = [Int](repeating: 0, count: 16)
    var code = 0
    for l in 1..<16 {
      code = (code + count[l - 1]) << 1
      next[l] = code
    }
    return lengths.map { l in
      guard l > 0 else { return 0 }
      let c = next[Int(l)]
      next[Int(l)] += 1
      var r = 0
      for b in 0..<Int(l) where c >> b & 1 != 0 { r |= 1 << (Int(l) - 1 - b) }
      return UInt16(r)
    }
  }
}

/// Writes bits from the low end up into memory the caller sized.
package struct BitWriter {
  let base: UnsafeMutableRawPointer
  var at = 0
  var buffer: UInt64 = 0
  var filled = 0

  package init(_ base: UnsafeMutableRawPointer) { self.base = base }

  /// Bytes written (after `alignToByte`).
  package var count: Int { at }

  /// Whether the bits written so far end at a byte boundary.
  package var isAligned: Bool { filled == 0 }

  @inline(__always) package mutating func bits(_ value: UInt64, _ n: Int) {
    buffer |= value << UInt64(filled)
    filled &+= n
    if filled >= 32 { flush32() }
  }

  @inline(__always) private mutating func flush32() {
    base.storeBytes(
      of: UInt32(truncatingIfNeeded: buffer).littleEndian, toByteOffset: at, as: UInt32.self)
    at &+= 4
    buffer >>= 32
    filled &-= 32
  }

  /// Each byte of `bytes` as its entry of `table` (code in the low 16 bits, length above).
  package mutating func codes(
    _ bytes: UnsafeBufferPointer<UInt8>, _ table: UnsafeBufferPointer<UInt32>
  ) {
    var buffer = self.buffer
    var filled = UInt64(self.filled)
    var at = self.at
    let base = self.base
    var i = 0
    let n = bytes.count
    // Two codes (30 bits at most) join at most 31 pending bits: 61 fit in the buffer.
    while i &+ 1 < n {
      let a = table[Int(bytes[i])]
      let b = table[Int(bytes[i &+ 1])]
      buffer |= UInt64(a & 0xFFFF) << filled
      filled &+= UInt64(a >> 16)
      buffer |= UInt64(b & 0xFFFF) << filled
      filled &+= UInt64(b >> 16)
      if filled >= 32 {
        base.storeBytes(
          of: UInt32(truncatingIfNeeded: buffer).littleEndian, toByteOffset: at, as: UInt32.self)
        at &+= 4
        buffer >>= 32
        filled &-= 32
      }
      i &+= 2
    }
    self.buffer = buffer
    self.filled = Int(filled)
    self.at = at
    if i < n {
      let a = table[Int(bytes[i])]
      bits(UInt64(a & 0xFFFF), Int(a >> 16))
    }
  }

  /// Pads to a byte boundary and writes out what is pending.
  package mutating func alignToByte() {
    filled = (filled + 7) & ~7
    while filled > 0 {
      base.storeBytes(of: UInt8(truncatingIfNeeded: buffer), toByteOffset: at, as: UInt8.self)
      at &+= 1
      buffer >>= 8
      filled -= 8
    }
    buffer = 0
    filled = 0
  }

  /// A byte at a byte boundary.
  package mutating func byte(_ b: UInt8) {
    precondition(filled == 0, "not at a byte boundary")
    base.storeBytes(of: b, toByteOffset: at, as: UInt8.self)
    at &+= 1
  }

  package mutating func word32(_ v: UInt32) {
    for k in 0..<4 { byte(UInt8(truncatingIfNeeded: v >> (8 * k))) }
  }

  package mutating func raw(_ bytes: UnsafeBufferPointer<UInt8>) {
    precondition(filled == 0, "not at a byte boundary")
    if let s = bytes.baseAddress { (base + at).copyMemory(from: s, byteCount: bytes.count) }
    at &+= bytes.count
  }
}
