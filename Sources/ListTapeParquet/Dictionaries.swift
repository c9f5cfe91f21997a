#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The byte strings of one column chunk, numbered in order of first appearance: what
/// dictionary encoding writes once per chunk, and what plain encoding rebuilds values from.
/// An open-addressing table (linear probing, at most half full) over one byte arena finds
/// the strings given by their bytes; strings a caller numbers itself are added unhashed.
struct ByteDictionary {
  /// Every entry's bytes, one after another.
  private(set) var arena: [UInt8] = []
  /// Entry `i` is `arena[starts[i]..<starts[i + 1]]`.
  private(set) var starts: [Int] = [0]
  /// Each slot holds the upper 32 bits of an entry's hash and its number plus one (0: an
  /// empty slot), so a probe reads one word and compares bytes only when the tags agree.
  private var slots = [UInt64](repeating: 0, count: 64)
  /// The last entry looked up, for runs of the same value (a log's path, a repeated op).
  private var last = -1
  /// Entries in `slots` (those `index(of:)` added).
  private var hashed = 0

  var count: Int { starts.count - 1 }

  /// What the entries take PLAIN-encoded: a 4-byte length and the bytes each.
  var plainBytes: Int { arena.count + 4 * count }

  /// The entry number of `bytes`, added when new.
  mutating func index(of bytes: UnsafeRawBufferPointer) -> UInt32 {
    if last >= 0 && equals(last, bytes) { return UInt32(last) }
    let h = Self.hash(bytes)
    let tag = h >> 32
    let mask = slots.count - 1
    var s = Int(truncatingIfNeeded: h) & mask
    while true {
      let slot = slots[s]
      if slot == 0 { break }
      if slot >> 32 == tag {
        let e = Int(slot & 0xFFFF_FFFF) - 1
        if equals(e, bytes) {
          last = e
          return UInt32(e)
        }
      }
      s = (s + 1) & mask
    }
    let e = count
    slots[s] = tag << 32 | UInt64(e + 1)
    arena.append(contentsOf: bytes)
    starts.append(arena.count)
    last = e
    hashed += 1
    if hashed * 2 > slots.count { grow() }
    return UInt32(e)
  }

  /// Adds the bytes `write` appends as a new entry, without looking them up or entering
  /// them in the table: for strings the caller numbers (`ParquetRows.resolveKeys(_:)`),
  /// given once per chunk and key. A string also given another way takes a second entry,
  /// which readers decode as any other (a dictionary page need not hold distinct values).
  mutating func appendUnhashed(_ write: (inout [UInt8]) -> Void) -> UInt32 {
    write(&arena)
    starts.append(arena.count)
    return UInt32(count - 1)
  }

  /// Appends every entry PLAIN-encoded (a 4-byte little-endian length, then the bytes), in
  /// order: a dictionary page, written in one pass over the arena.
  func appendPlain(to page: inout [UInt8]) {
    let n = count
    guard n > 0 else { return }
    let old = page.count
    page.append(contentsOf: repeatElement(0, count: plainBytes))
    page.withUnsafeMutableBufferPointer { out in
      arena.withUnsafeBufferPointer { a in
        starts.withUnsafeBufferPointer { s in
          var at = old
          for i in 0..<n {
            let lo = s[i]
            let length = s[i &+ 1] &- lo
            let l = UInt32(truncatingIfNeeded: length)
            out[at] = UInt8(truncatingIfNeeded: l)
            out[at &+ 1] = UInt8(truncatingIfNeeded: l >> 8)
            out[at &+ 2] = UInt8(truncatingIfNeeded: l >> 16)
            out[at &+ 3] = UInt8(truncatingIfNeeded: l >> 24)
            at &+= 4
            if length > 0, let src = a.baseAddress, let dst = out.baseAddress {
              (dst + at).update(from: src + lo, count: length)
            }
            at &+= length
          }
        }
      }
    }
  }

  /// Calls `body` with entry `i`'s bytes.
  func withEntry<R>(_ i: Int, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
    arena.withUnsafeBufferPointer { a in
      body(UnsafeBufferPointer(rebasing: a[starts[i]..<starts[i + 1]]))
    }
  }

  func length(_ i: Int) -> Int { starts[i + 1] - starts[i] }

  /// Empties the dictionary for the next column chunk, keeping its storage.
  mutating func removeAll() {
    arena.removeAll(keepingCapacity: true)
    starts.removeAll(keepingCapacity: true)
    starts.append(0)
    if slots.count > 64 * 1024 {
      slots = [UInt64](repeating: 0, count: 64)
    } else if hashed > 0 {
      for i in slots.indices { slots[i] = 0 }
    }
    last = -1
    hashed = 0
  }

  private func equals(_ e: Int, _ bytes: UnsafeRawBufferPointer) -> Bool {
    let start = starts[e]
    let n = starts[e + 1] - start
    guard n == bytes.count else { return false }
    if n == 0 { return true }
    return arena.withUnsafeBytes { a in
      guard let p = a.baseAddress, let q = bytes.baseAddress else { return false }
      return memcmp(p + start, q, n) == 0
    }
  }

  private mutating func grow() {
    var bigger = [UInt64](repeating: 0, count: slots.count * 2)
    let mask = bigger.count - 1
    for slot in slots where slot != 0 {
      let e = Int(slot & 0xFFFF_FFFF) - 1
      let h = withEntry(e) { Self.hash(UnsafeRawBufferPointer($0)) }
      var s = Int(truncatingIfNeeded: h) & mask
      while bigger[s] != 0 { s = (s + 1) & mask }
      bigger[s] = (h >> 32) << 32 | UInt64(e + 1)
    }
    slots = bigger
  }

  /// A multiply-xorshift hash, 8 bytes at a time (the tail read as one word), so an id
  /// of up to 8 bytes costs one multiply; the finalizer mixes the low bits (the slot).
  static func hash(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
    let n = bytes.count
    var h: UInt64 = 0x9e37_79b9_7f4a_7c15 ^ UInt64(n)
    var i = 0
    while i + 8 <= n {
      h = (h ^ bytes.loadUnaligned(fromByteOffset: i, as: UInt64.self)) &* 0xff51_afd7_ed55_8ccd
      h ^= h >> 32
      i += 8
    }
    if i < n, let base = bytes.baseAddress {
      var tail: UInt64 = 0
      withUnsafeMutableBytes(of: &tail) {
        $0.baseAddress?.copyMemory(from: base + i, byteCount: n - i)
      }
      h = (h ^ tail) &* 0xff51_afd7_ed55_8ccd
    }
    h ^= h >> 33
    h = h &* 0xc4ce_b9fe_1a85_ec53
    h ^= h >> 33
    return h
  }
}
