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
    // Each entry: its rest, and two lengths below 2^32 (five bytes each at most).
    let room = stored.count &+ ends.count &* 10
    // No room: the initializer below would write the count of the shared empty array (a
    // data race between threads).
    guard room > 0 else { return [] }
    return [UInt8](unsafeUninitializedCapacity: room) { out, done in
      var at = 0
      defer { done = at }
      guard let o = out.baseAddress else { return }
      stored.withUnsafeBufferPointer { s in
        guard let base = s.baseAddress else {
          for _ in ends {
            at &+= RecordFraming.putLength(0, o + at)
            at &+= RecordFraming.putLength(0, o + at)
          }
          return
        }
        var previous = 0..<0
        for end in ends {
          let start = previous.upperBound
          let entry = start..<Int(end)
          var common = 0
          if sharing {
            let limit = min(previous.count, entry.count)
            while common < limit && s[previous.lowerBound &+ common] == s[start &+ common] {
              common &+= 1
            }
          }
          let rest = entry.count &- common
          at &+= RecordFraming.putLength(common, o + at)
          at &+= RecordFraming.putLength(rest, o + at)
          (o + at).initialize(from: base + (start &+ common), count: rest)
          at &+= rest
          previous = entry
        }
      }
    }
  }

  /// The first `count` of `entries` entries coded in `coded`, decoded into arrays with
  /// room beyond them for what a fold defines next: the stored bytes and their ends, or nil
  /// when the coding is not that of `entries` non-empty entries holding `storedLength`
  /// bytes (an entry sharing more than the one before holds, a length past the end, bytes
  /// left over). `piece` cuts the input as a file read would (for tests of the seams).
  static func decode(
    _ coded: UnsafeRawBufferPointer, entries: Int, count: Int, storedLength: Int,
    piece: Int = 1 << 16
  ) -> (stored: [UInt8], ends: [UInt32])? {
    var at = 0
    return decode(
      entries: entries, count: count, storedLength: storedLength, codedLength: coded.count,
      piece: piece
    ) { dst, n in
      guard let base = coded.baseAddress else { return n == 0 }
      dst.copyMemory(from: base + at, byteCount: n)
      at += n
      return true
    }
  }

  /// As `decode(_:entries:count:storedLength:piece:)`, the `codedLength` coded bytes read
  /// in pieces of about `piece` bytes by `read(dst, n)` (the next `n` bytes into `dst`;
  /// false when they cannot be read), so that no copy of the whole coding is made. Every
  /// coded byte is read exactly once and in order, even when the coding is refused (a
  /// reader checksums what it reads).
  static func decode(
    entries: Int, count: Int, storedLength: Int, codedLength: Int, piece: Int = 1 << 16,
    read: (UnsafeMutableRawPointer, Int) -> Bool
  ) -> (stored: [UInt8], ends: [UInt32])? {
    guard count >= 0, count <= entries, storedLength >= 0, storedLength <= UInt32.max,
      codedLength >= 0, withinCap(stored: storedLength, coded: codedLength)
    else { return nil }
    var stored: [UInt8] = []
    var ok = false
    let ends = [UInt32](unsafeUninitializedCapacity: count + count / 8 + 1024) {
      endBuffer, endsWritten in
      stored = [UInt8](unsafeUninitializedCapacity: storedLength + storedLength / 8 + 4096) {
        buffer, written in
        guard let out = buffer.baseAddress, let endBase = endBuffer.baseAddress else { return }
        var run = Run(entries: entries, count: count, total: storedLength, endBase, out)
        ok = run.feed(codedLength: codedLength, piece: max(piece, 1), read: read)
        written = run.outAt
        endsWritten = run.e
      }
    }
    return ok ? (stored, ends) : nil
  }

  /// What one piece of input did to a run.
  private enum Step { case done, more, bad }

  /// A decoding in progress: the entries written so far into `out` (room for `total` bytes
  /// and 32 more) and `ends` (room for `count` entries), and the entry before.
  private struct Run {
    let entries: Int
    let count: Int
    let total: Int
    let ends: UnsafeMutablePointer<UInt32>
    let out: UnsafeMutablePointer<UInt8>
    /// Entries decoded, bytes written.
    var e = 0
    var outAt = 0
    var previousStart = 0
    var previousLength = 0
    /// The entry before's first 32 bytes (those past its length are not read).
    var last = SIMD4<UInt64>()

    init(
      entries: Int, count: Int, total: Int, _ ends: UnsafeMutablePointer<UInt32>,
      _ out: UnsafeMutablePointer<UInt8>
    ) {
      self.entries = entries
      self.count = count
      self.total = total
      self.ends = ends
      self.out = out
    }

    /// Reads the coding piece by piece, each after what the last one left undecoded (an
    /// entry cut by the piece's end), until the run ends; then reads what is left unread.
    mutating func feed(
      codedLength: Int, piece: Int, read: (UnsafeMutableRawPointer, Int) -> Bool
    ) -> Bool {
      // 32 bytes of 0xFF then 32 of 0: the 32 bytes from `32 - n` keep an entry's first n.
      let masks = UnsafeMutablePointer<UInt8>.allocate(capacity: 64)
      defer { masks.deallocate() }
      masks.initialize(repeating: 0xFF, count: 32)
      (masks + 32).initialize(repeating: 0, count: 32)
      var capacity = min(piece, max(codedLength, 1))
      var buffer = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16)
      defer { buffer.deallocate() }
      var held = 0
      var readSoFar = 0
      var step = Step.more
      while step == .more {
        let want = min(capacity &- held, codedLength &- readSoFar)
        guard read(buffer + held, want) else { return false }
        held &+= want
        readSoFar &+= want
        let input = UnsafeRawBufferPointer(start: buffer, count: held)
        let used: Int
        (used, step) = run(input, final: readSoFar == codedLength, masks)
        if step == .more {
          // Keep what was not used; a piece too small for one entry grows.
          if used == 0 && held == capacity {
            capacity &*= 2
            let bigger = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16)
            bigger.copyMemory(from: buffer, byteCount: held)
            buffer.deallocate()
            buffer = bigger
          } else {
            buffer.copyMemory(from: buffer + used, byteCount: held &- used)
          }
          held &-= used
        }
      }
      // The rest is read all the same, in pieces, for the reader's checksum.
      while readSoFar < codedLength {
        let n = min(capacity, codedLength &- readSoFar)
        guard read(buffer, n) else { return false }
        readSoFar &+= n
      }
      return step == .done
    }

    /// Decodes the entries `input` holds whole; returns the bytes used and whether the run
    /// is done, needs the bytes after `input` (never when `final`), or is refused.
    private mutating func run(
      _ coded: UnsafeRawBufferPointer, final: Bool, _ masks: UnsafeMutablePointer<UInt8>
    ) -> (used: Int, step: Step) {
      guard entries > 0 else { return (0, coded.isEmpty && total == 0 && final ? .done : .bad) }
      guard let input = coded.baseAddress?.assumingMemoryBound(to: UInt8.self) else {
        return (0, final ? .bad : .more)
      }
      let inEnd = coded.count
      var at = 0
      // Whether a length read ran out of input (rather than running on too long).
      var short = false
      @inline(__always) func next() -> Int? {
        var v = 0
        var shift = 0
        while shift < 35 {
          guard at < inEnd else {
            short = true
            return nil
          }
          let b = input[at]
          at &+= 1
          v |= Int(b & 0x7F) << shift
          if b < 0x80 { return v }
          shift &+= 7
        }
        return nil
      }
      while e < entries {
        let entryStart = at
        guard let common = next(), let rest = next() else {
          return (entryStart, short && !final ? .more : .bad)
        }
        guard common <= previousLength, common + rest > 0, rest <= total - outAt - common
        else { return (entryStart, .bad) }
        guard rest <= inEnd - at else { return (entryStart, final ? .bad : .more) }
        if e == count { return (at, .done) }
        let length = common &+ rest
        if length <= 32 && at >= common && inEnd &- (at &- common) >= 32 {
          // The entry in four words: its shared bytes from the one before (kept in
          // registers: reading them back from `out` would wait on the stores just made), the
          // rest from the input. Bytes past its length are overwritten by the next entry.
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
        e &+= 1
      }
      return (at, at == inEnd && final && outAt == total ? .done : .bad)
    }
  }
}
