/// A segment dictionary as an index file stores it (format 2): each entry's stored form as
/// the length it shares with the entry before, the length of the rest, and the rest
/// (LEB128 lengths). Path-like ids share most of their bytes with the id defined before
/// them; a UUID entry costs two bytes more than its 17.
enum FrontCoding {
  /// The most a segment's entries may hold per coded byte: a reader refuses more, so a
  /// small hostile index cannot make it write a huge dictionary. The builder codes a
  /// segment that would exceed it without sharing.
  static let maxExpansion = 64

  /// Whether `stored` bytes coded in `coded` bytes are within the expansion cap.
  static func withinCap(stored: Int, coded: Int) -> Bool {
    stored <= coded.multipliedReportingOverflow(by: maxExpansion).partialValue
      || stored <= 4096
  }

  /// The coding of the entries `stored` cut at `ends` (non-empty, back to back).
  static func encode(stored: [UInt8], ends: [UInt32]) -> [UInt8] {
    let shared = encode(stored: stored, ends: ends, sharing: true)
    if withinCap(stored: stored.count, coded: shared.count) { return shared }
    return encode(stored: stored, ends: ends, sharing: false)
  }

  private static func encode(stored: [UInt8], ends: [UInt32], sharing: Bool) -> [UInt8] {
    var out: [UInt8] = []
    out.reserveCapacity(stored.count / 2 + ends.count * 2)
    var scratch: UInt64 = 0
    func put(_ v: Int) {
      withUnsafeMutableBytes(of: &scratch) { p in
        guard let base = p.baseAddress else { return }
        out.append(contentsOf: p.prefix(RecordFraming.putLength(v, base)))
      }
    }
    stored.withUnsafeBufferPointer { s in
      var previous = 0..<0
      for end in ends {
        let start = previous.upperBound
        let entry = start..<Int(end)
        var common = 0
        if sharing {
          let limit = min(previous.count, entry.count)
          while common < limit && s[previous.lowerBound + common] == s[start + common] {
            common += 1
          }
        }
        put(common)
        put(entry.count - common)
        out.append(contentsOf: s[(start + common)..<entry.upperBound])
        previous = entry
      }
    }
    return out
  }

  /// The first `count` of `entries` entries coded in `coded`, decoded into arrays with
  /// room beyond them for what a fold defines next: the stored bytes and their ends, or nil
  /// when the coding is not that of `entries` non-empty entries holding `storedLength`
  /// bytes (an entry sharing more than the one before holds, a length past the end, bytes
  /// left over).
  static func decode(
    _ coded: UnsafeRawBufferPointer, entries: Int, count: Int, storedLength: Int
  ) -> (stored: [UInt8], ends: [UInt32])? {
    guard count >= 0, count <= entries, storedLength >= 0, storedLength <= UInt32.max,
      withinCap(stored: storedLength, coded: coded.count)
    else { return nil }
    var stored: [UInt8] = []
    var ok = false
    let ends = [UInt32](unsafeUninitializedCapacity: count + count / 8 + 1024) {
      endBuffer, endsWritten in
      stored = [UInt8](unsafeUninitializedCapacity: storedLength + storedLength / 8 + 4096) {
        buffer, written in
        guard let out = buffer.baseAddress, let endBase = endBuffer.baseAddress else { return }
        let done = run(coded, entries: entries, count: count, total: storedLength, endBase, out)
        written = done.bytes
        endsWritten = done.entries
        ok = done.ok
      }
    }
    return ok ? (stored, ends) : nil
  }

  /// Decodes into `out` (room for `total` bytes and 32 more) and `ends` (room for `count`
  /// entries); `ok` only when every one of the `entries` entries read well.
  private static func run(
    _ coded: UnsafeRawBufferPointer, entries: Int, count: Int, total: Int,
    _ ends: UnsafeMutablePointer<UInt32>, _ out: UnsafeMutablePointer<UInt8>
  ) -> (bytes: Int, entries: Int, ok: Bool) {
    guard entries > 0 else { return (0, 0, coded.isEmpty && total == 0) }
    guard let input = coded.baseAddress?.assumingMemoryBound(to: UInt8.self) else {
      return (0, 0, false)
    }
    let inEnd = coded.count
    var at = 0
    var outAt = 0
    var previousStart = 0
    var previousLength = 0
    // The entry before's first 32 bytes (those past its length are not read).
    var last = SIMD4<UInt64>()
    // 32 bytes of 0xFF then 32 of 0: the 32 bytes from `32 - n` keep an entry's first n.
    let masks = UnsafeMutablePointer<UInt8>.allocate(capacity: 64)
    defer { masks.deallocate() }
    masks.initialize(repeating: 0xFF, count: 32)
    (masks + 32).initialize(repeating: 0, count: 32)
    @inline(__always) func next() -> Int? {
      var v = 0
      var shift = 0
      while at < inEnd && shift < 35 {
        let b = input[at]
        at &+= 1
        v |= Int(b & 0x7F) << shift
        if b < 0x80 { return v }
        shift &+= 7
      }
      return nil
    }
    for e in 0..<entries {
      guard let common = next(), let rest = next(), common <= previousLength,
        common + rest > 0, rest <= inEnd - at, rest <= total - outAt - common
      else { return (outAt, e, false) }
      if e == count { return (outAt, e, true) }
      let length = common &+ rest
      if length <= 32 && at >= common && inEnd &- (at &- common) >= 32 {
        // The entry in four words: its shared bytes from the one before (kept in registers:
        // reading them back from `out` would wait on the stores just made), the rest from
        // the input. Bytes past its length are overwritten by the next entry.
        let tail = UnsafeRawPointer(input + (at &- common))
        let mask = UnsafeRawPointer(masks) + (32 &- common)
        for w in 0..<4 {
          let m = mask.loadUnaligned(fromByteOffset: w &* 8, as: UInt64.self)
          let word =
            (last[w] & m) | (tail.loadUnaligned(fromByteOffset: w &* 8, as: UInt64.self) & ~m)
          UnsafeMutableRawPointer(out + outAt).storeBytes(
            of: word, toByteOffset: w &* 8, as: UInt64.self)
          last[w] = word
        }
      } else {
        (out + outAt).update(from: out + previousStart, count: common)
        (out + outAt + common).update(from: input + at, count: rest)
        let p = UnsafeRawPointer(out + outAt)
        for w in 0..<4 { last[w] = p.loadUnaligned(fromByteOffset: w &* 8, as: UInt64.self) }
      }
      previousStart = outAt
      previousLength = length
      at &+= rest
      outAt &+= previousLength
      ends[e] = UInt32(truncatingIfNeeded: outAt)
    }
    return (outAt, entries, at == inEnd && outAt == total)
  }
}
