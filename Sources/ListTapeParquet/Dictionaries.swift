#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The distinct byte strings of one column chunk, numbered in order of first appearance:
/// what dictionary encoding writes once per chunk, and what plain encoding rebuilds values
/// from. An open-addressing table (linear probing, at most half full) over one byte arena.
struct ByteDictionary {
  /// Every entry's bytes, one after another.
  private(set) var arena: [UInt8] = []
  /// Entry `i` is `arena[starts[i]..<starts[i + 1]]`.
  private(set) var starts: [Int] = [0]
  private var hashes: [UInt64] = []
  /// Slot → entry number, -1 for an empty slot.
  private var slots = [Int32](repeating: -1, count: 64)
  /// The last entry looked up, for runs of the same value (a log's path, a repeated op).
  private var last: Int32 = -1

  var count: Int { starts.count - 1 }

  /// What the entries take PLAIN-encoded: a 4-byte length and the bytes each.
  var plainBytes: Int { arena.count + 4 * count }

  /// The entry number of `bytes`, added when new.
  mutating func index(of bytes: UnsafeRawBufferPointer) -> UInt32 {
    if last >= 0 && equals(Int(last), bytes) { return UInt32(last) }
    let h = Self.hash(bytes)
    let mask = slots.count - 1
    var s = Int(truncatingIfNeeded: h) & mask
    while true {
      let e = slots[s]
      if e < 0 { break }
      if hashes[Int(e)] == h && equals(Int(e), bytes) {
        last = e
        return UInt32(e)
      }
      s = (s + 1) & mask
    }
    let e = Int32(count)
    slots[s] = e
    hashes.append(h)
    arena.append(contentsOf: bytes)
    starts.append(arena.count)
    last = e
    if count * 2 > slots.count { grow() }
    return UInt32(e)
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
    hashes.removeAll(keepingCapacity: true)
    if slots.count > 64 * 1024 {
      slots = [Int32](repeating: -1, count: 64)
    } else {
      for i in slots.indices { slots[i] = -1 }
    }
    last = -1
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
    var bigger = [Int32](repeating: -1, count: slots.count * 2)
    let mask = bigger.count - 1
    for (e, h) in hashes.enumerated() {
      var s = Int(truncatingIfNeeded: h) & mask
      while bigger[s] >= 0 { s = (s + 1) & mask }
      bigger[s] = Int32(e)
    }
    slots = bigger
  }

  /// 64-bit FNV-1a, 8 bytes at a time, then a finalizer so the low bits (the slot) mix.
  static func hash(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
    var h: UInt64 = 0xcbf2_9ce4_8422_2325
    var i = 0
    let n = bytes.count
    while i + 8 <= n {
      h = (h ^ bytes.loadUnaligned(fromByteOffset: i, as: UInt64.self)) &* 0x1000_0000_01b3
      h ^= h >> 29
      i += 8
    }
    while i < n {
      h = (h ^ UInt64(bytes[i])) &* 0x1000_0000_01b3
      i += 1
    }
    h ^= h >> 33
    h = h &* 0xff51_afd7_ed55_8ccd
    h ^= h >> 33
    return h
  }
}

/// The distinct integers of one column chunk, numbered in order of first appearance.
struct IntDictionary {
  private(set) var keys: [Int64] = []
  private var slots = [Int32](repeating: -1, count: 64)
  private var last: Int32 = -1

  var count: Int { keys.count }

  /// The entry number of `value`, added when new.
  mutating func index(of value: Int64) -> UInt32 {
    if last >= 0 && keys[Int(last)] == value { return UInt32(last) }
    let mask = slots.count - 1
    var s = Self.slot(value) & mask
    while true {
      let e = slots[s]
      if e < 0 { break }
      if keys[Int(e)] == value {
        last = e
        return UInt32(e)
      }
      s = (s + 1) & mask
    }
    let e = Int32(keys.count)
    slots[s] = e
    keys.append(value)
    last = e
    if keys.count * 2 > slots.count { grow() }
    return UInt32(e)
  }

  mutating func removeAll() {
    keys.removeAll(keepingCapacity: true)
    if slots.count > 64 * 1024 {
      slots = [Int32](repeating: -1, count: 64)
    } else {
      for i in slots.indices { slots[i] = -1 }
    }
    last = -1
  }

  private static func slot(_ value: Int64) -> Int {
    var h = UInt64(bitPattern: value) &* 0x9e37_79b9_7f4a_7c15
    h ^= h >> 32
    return Int(truncatingIfNeeded: h)
  }

  private mutating func grow() {
    var bigger = [Int32](repeating: -1, count: slots.count * 2)
    let mask = bigger.count - 1
    for (e, k) in keys.enumerated() {
      var s = Self.slot(k) & mask
      while bigger[s] >= 0 { s = (s + 1) & mask }
      bigger[s] = Int32(e)
    }
    slots = bigger
  }
}
