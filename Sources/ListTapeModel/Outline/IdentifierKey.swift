import CListTapeHints

/// An identifier as a hash key that compares by its exact Unicode scalars (its UTF-8 bytes).
///
/// Swift's `String` equality is canonical equivalence, so `"\u{E9}"` and `"e\u{301}"` would
/// be one id; the protocol's identifiers are JSON strings, distinct whenever their code
/// points differ, so the model never keys anything by a plain `String`.
package struct IdentifierKey: Hashable, Sendable {
  package let id: String

  package init(_ id: String) { self.id = id }

  package static func == (lhs: IdentifierKey, rhs: IdentifierKey) -> Bool {
    lhs.id.utf8.elementsEqual(rhs.id.utf8)
  }

  package func hash(into hasher: inout Hasher) {
    var id = id
    id.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
  }
}

/// Whether two identifiers are the same id (same Unicode scalars, not merely canonically
/// equivalent).
@inline(__always) func sameIdentifier(_ a: String, _ b: String) -> Bool {
  a.utf8.elementsEqual(b.utf8)
}

/// A map from identifiers to handles, keyed by exact scalars (UTF-8 bytes, as
/// `IdentifierKey`), built for the fold's hot path: one probe usually touches one slot
/// holding the key inline (short ids are small strings, no heap access), a 32-bit hash tag
/// and the handle; Swift's `Dictionary` spreads these over three arrays and hashes with
/// SipHash, several cache misses per lookup on a list of a million items.
///
/// Open addressing with linear probing, at most 3/4 full, backward-shift deletion (no
/// tombstones, so probe runs stay short under churn). The hash is keyed by a random
/// per-process seed, so a hostile log cannot choose ids that collide.
struct IdentifierIndex {
  private struct Slot {
    var key = ""
    var hash: UInt32 = 0
    /// -1 for an empty slot.
    var handle: Handle = -1
  }

  private var slots: [Slot] = []
  private(set) var count = 0

  /// Slots in the table (a power of two, or 0).
  var slotCount: Int { slots.count }

  /// Entries the table holds before it must grow.
  var capacity: Int { slots.count / 4 * 3 }

  mutating func reserveCapacity(_ n: Int) {
    if n > capacity { rehash(minimumCapacity: n) }
  }

  subscript(id: String) -> Handle? {
    get {
      guard count > 0 else { return nil }
      return find(id).1.map { slots[$0].handle }
    }
    set {
      if let h = newValue {
        insert(id, h)
      } else {
        remove(id)
      }
    }
  }

  // MARK: Probing

  /// The key's hash and, when present, its slot.
  private func find(_ id: String) -> (UInt32, Int?) {
    var key = id
    return key.withUTF8 { bytes in
      let hash = Self.hash(bytes)
      guard !slots.isEmpty else { return (hash, nil) }
      return slots.withUnsafeBufferPointer { table in
        let mask = table.count - 1
        var i = Int(truncatingIfNeeded: hash) & mask
        while table[i].handle >= 0 {
          if table[i].hash == hash && Self.equal(table[i].key, bytes) { return (hash, i) }
          i = (i + 1) & mask
        }
        return (hash, nil)
      }
    }
  }

  /// The hash `find` computes for `id`: fold hints carry it from the decoding thread.
  static func hash(of id: String) -> UInt32 {
    var key = id
    return key.withUTF8 { hash($0) }
  }

  /// Starts loading the slot where a probe for `hash` begins.
  @inline(__always) func prefetch(hash: UInt32) {
    slots.withUnsafeBufferPointer { table in
      guard let base = table.baseAddress else { return }
      listtape_prefetch(base + (Int(truncatingIfNeeded: hash) & (table.count &- 1)))
    }
  }

  /// The handle of the first entry in `hash`'s probe run (within 4 slots) whose tag is
  /// `hash`: usually its key's, but another key may share the tag, so this is only good
  /// for a prefetch. -1 if none.
  @inline(__always) func handle(taggedWith hash: UInt32) -> Handle {
    slots.withUnsafeBufferPointer { table in
      guard !table.isEmpty else { return -1 }
      let mask = table.count &- 1
      var i = Int(truncatingIfNeeded: hash) & mask
      for _ in 0..<4 {
        if table[i].handle < 0 { return -1 }
        if table[i].hash == hash { return table[i].handle }
        i = (i &+ 1) & mask
      }
      return -1
    }
  }

  /// Adds `id` unless it is already there (then the table is unchanged): one hash and one
  /// probe, for bulk loads that must also reject duplicates.
  mutating func insertNew(_ id: String, _ handle: Handle) -> Bool {
    if count + 1 > capacity { rehash(minimumCapacity: count + 1) }
    var key = id
    return key.withUTF8 { bytes in
      let hash = Self.hash(bytes)
      let mask = slots.count - 1
      var i = Int(truncatingIfNeeded: hash) & mask
      while slots[i].handle >= 0 {
        if slots[i].hash == hash && Self.equal(slots[i].key, bytes) { return false }
        i = (i + 1) & mask
      }
      slots[i] = Slot(key: Self.storedKey(id, bytes), hash: hash, handle: handle)
      count += 1
      return true
    }
  }

  private mutating func insert(_ id: String, _ handle: Handle) {
    let (hash, found) = find(id)
    if let i = found {
      slots[i].handle = handle
      return
    }
    if count + 1 > capacity { rehash(minimumCapacity: count + 1) }
    var key = id
    let stored = key.withUTF8 { Self.storedKey(id, $0) }
    place(Slot(key: stored, hash: hash, handle: handle))
    count += 1
  }

  /// The key a slot keeps for `id` (whose UTF-8 is `bytes`): a fresh copy from the bytes is
  /// a small string (inline, no heap) whenever it fits, where interpolated or sliced ids
  /// often are not and comparing would follow a pointer. Longer ids live on the heap either
  /// way, so they are kept as they are.
  @inline(__always) private static func storedKey(
    _ id: String, _ bytes: UnsafeBufferPointer<UInt8>
  ) -> String {
    bytes.count <= 15 ? String(decoding: bytes, as: UTF8.self) : id
  }

  /// Puts a new entry in the first empty slot of its probe run.
  private mutating func place(_ slot: Slot) {
    let mask = slots.count - 1
    var i = Int(truncatingIfNeeded: slot.hash) & mask
    while slots[i].handle >= 0 { i = (i + 1) & mask }
    slots[i] = slot
  }

  private mutating func remove(_ id: String) {
    guard count > 0, case (_, let found?) = find(id) else { return }
    let mask = slots.count - 1
    var hole = found
    var j = found
    // Shift later members of the run back into the hole when their home allows it.
    while true {
      j = (j + 1) & mask
      guard slots[j].handle >= 0 else { break }
      let home = Int(truncatingIfNeeded: slots[j].hash) & mask
      let movable = hole <= j ? (home <= hole || home > j) : (home <= hole && home > j)
      if movable {
        slots[hole] = slots[j]
        hole = j
      }
    }
    slots[hole] = Slot()
    count -= 1
  }

  private mutating func rehash(minimumCapacity n: Int) {
    var size = 8
    while size / 4 * 3 < n { size *= 2 }
    let old = slots
    slots = Array(repeating: Slot(), count: size)
    for slot in old where slot.handle >= 0 { place(slot) }
  }

  // MARK: Hashing

  private static let seed = UInt64.random(in: 0...UInt64.max)

  /// Multiply-fold mixing of 8-byte words (in the manner of wyhash), keyed by `seed`.
  @inline(__always) static func hash(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt32 {
    let raw = UnsafeRawBufferPointer(bytes)
    var h = seed ^ (UInt64(raw.count) &* 0x9E37_79B9_7F4A_7C15)
    var i = 0
    while i + 8 <= raw.count {
      h = mix(h ^ raw.loadUnaligned(fromByteOffset: i, as: UInt64.self), 0xA076_1D64_78BD_642F)
      i += 8
    }
    var tail: UInt64 = 0
    var shift: UInt64 = 0
    while i < raw.count {
      tail |= UInt64(raw[i]) << shift
      shift += 8
      i += 1
    }
    h = mix(h ^ tail, 0xE703_7ED1_A0B4_28DB)
    h = mix(h, 0x8EBC_6AF0_9C88_C6E3)
    return UInt32(truncatingIfNeeded: h ^ (h >> 32))
  }

  @inline(__always) private static func mix(_ a: UInt64, _ b: UInt64) -> UInt64 {
    let m = a.multipliedFullWidth(by: b ^ seed)
    return m.high ^ m.low
  }

  @inline(__always) private static func equal(
    _ key: String, _ bytes: UnsafeBufferPointer<UInt8>
  ) -> Bool {
    var key = key
    return key.withUTF8 { k in
      guard k.count == bytes.count else { return false }
      let a = UnsafeRawBufferPointer(k)
      let b = UnsafeRawBufferPointer(bytes)
      var i = 0
      while i + 8 <= a.count {
        if a.loadUnaligned(fromByteOffset: i, as: UInt64.self)
          != b.loadUnaligned(fromByteOffset: i, as: UInt64.self)
        {
          return false
        }
        i += 8
      }
      while i < a.count {
        if a[i] != b[i] { return false }
        i += 1
      }
      return true
    }
  }
}
