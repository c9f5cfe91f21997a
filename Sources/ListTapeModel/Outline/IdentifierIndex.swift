/// An identifier's bytes as the model keeps them: up to 15 UTF-8 bytes inline (the count in
/// the top byte), longer ones as an offset and a count into an `IdentifierIndex`'s arena.
/// A plain value: no reference count, no allocation per identifier.
struct StoredID: Equatable {
  var lo: UInt64
  var hi: UInt64

  static let maxInline = 15
  /// Set in `hi` when the bytes live in the arena (`lo` is then their offset).
  static let outOfLine: UInt64 = 1 << 63

  var isInline: Bool { hi & Self.outOfLine == 0 }

  /// Number of UTF-8 bytes.
  var count: Int { isInline ? Int(hi >> 56) : Int(truncatingIfNeeded: hi & ~Self.outOfLine) }

  /// Offset of the bytes in the arena (out-of-line ids only).
  var offset: Int { Int(truncatingIfNeeded: lo) }

  init(offset: Int, count: Int) {
    lo = UInt64(offset)
    hi = Self.outOfLine | UInt64(count)
  }

  /// The inline form of `bytes` (at most 15 of them): byte i of the id is byte i mod 8 of
  /// `lo` or `hi` in little-endian order, whatever the platform's byte order. Reads only the
  /// given bytes, in at most two overlapping loads of a word.
  @inline(__always) init(inline bytes: UnsafeBufferPointer<UInt8>) {
    let n = bytes.count
    var lo: UInt64 = 0
    var hi: UInt64 = 0
    if let p = bytes.baseAddress.map(UnsafeRawPointer.init) {
      if n >= 8 {
        lo = UInt64(littleEndian: p.loadUnaligned(as: UInt64.self))
        if n > 8 {
          // Bytes 8..<n are the top n - 8 bytes of the word that ends the id.
          let last = UInt64(littleEndian: p.loadUnaligned(fromByteOffset: n &- 8, as: UInt64.self))
          hi = last >> UInt64((16 &- n) &* 8)
        }
      } else if n >= 4 {
        let first = UInt64(UInt32(littleEndian: p.loadUnaligned(as: UInt32.self)))
        let last = UInt64(
          UInt32(littleEndian: p.loadUnaligned(fromByteOffset: n &- 4, as: UInt32.self)))
        lo = first | last << UInt64((n &- 4) &* 8)
      } else if n > 0 {
        // Bytes 0, n / 2 and n - 1 cover every byte of a one- to three-byte id.
        lo =
          UInt64(bytes[0]) | UInt64(bytes[n >> 1]) << UInt64((n >> 1) &* 8)
          | UInt64(bytes[n &- 1]) << UInt64((n &- 1) &* 8)
      }
    }
    self.lo = lo
    self.hi = hi | UInt64(n) << 56
  }

  /// Whether an inline id is ASCII (then it is also valid UTF-8).
  var isInlineASCII: Bool { (lo | hi & 0x00FF_FFFF_FFFF_FFFF) & 0x8080_8080_8080_8080 == 0 }

  /// Calls `body` with the bytes of an inline id.
  @inline(__always) func withInlineBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
    var words = (lo.littleEndian, hi.littleEndian)
    let n = count
    return withUnsafeBytes(of: &words) { raw in
      body(
        UnsafeBufferPointer(start: raw.baseAddress?.assumingMemoryBound(to: UInt8.self), count: n))
    }
  }
}

/// An identifier being looked up or inserted: its bytes, their hash, and the form a stored
/// copy would compare equal to when it is inline (else the count with `outOfLine`).
struct ProbeKey {
  let bytes: UnsafeBufferPointer<UInt8>
  let hash: UInt32
  let form: StoredID
  /// Whether the bytes are ASCII (and so valid UTF-8), found while hashing them.
  let isASCII: Bool

  /// Calls `body` with the key for `id`, hashed with `seed` (an index's).
  @inline(__always) static func with<R>(
    _ id: String, seed: UInt64, _ body: (ProbeKey) -> R
  ) -> R {
    var id = id
    return id.withUTF8 { body(ProbeKey($0, seed: seed)) }
  }

  /// The key for `bytes`, hashed with `seed` (an index's).
  @inline(__always) init(_ bytes: UnsafeBufferPointer<UInt8>, seed: UInt64) {
    self.bytes = bytes
    if bytes.count <= StoredID.maxInline {
      form = StoredID(inline: bytes)
      hash = IdentifierIndex.hash(inline: form, seed: seed)
      isASCII = form.isInlineASCII
    } else {
      form = StoredID(offset: 0, count: bytes.count)
      (hash, isASCII) = IdentifierIndex.hashAndASCII(long: bytes, seed: seed)
    }
  }
}

/// A map from identifiers to numbers that also stores the identifiers, built for a writer's
/// dictionary (`IdTable`), which looks up every id it writes: one probe usually touches one
/// slot holding the id inline (up to 15 bytes) or its place in the arena, a 32-bit hash tag
/// and the number. Ids longer than 15 bytes live back to back in one byte arena, so
/// inserting and looking up allocates nothing per id. Entries are removed only to undo the
/// inserts of an event the writer refused (`IdTable.rollBack`); a writer starts a new table
/// at a dictionary restart.
///
/// Keys compare by their UTF-8 bytes (Unicode scalars, as `IdentifierKey`). Open addressing
/// with linear probing, at most 3/4 full. The hash is keyed by a random per-process seed, so
/// a hostile log cannot choose ids that collide.
struct IdentifierIndex {
  private struct Slot {
    var id = StoredID(offset: 0, count: 0)
    var hash: UInt32 = 0
    /// -1 for an empty slot.
    var handle: Handle = -1
  }

  private var slots: [Slot] = []
  private(set) var count = 0
  /// The per-process hash seed, copied here so that hashing does not check a global's
  /// initialisation every time.
  let seed = IdentifierIndex.processSeed
  /// Bytes of the ids longer than 15 bytes.
  private(set) var arena: [UInt8] = []

  /// Slots in the table (a power of two, or 0).
  var slotCount: Int { slots.count }

  /// Entries the table holds before it must grow.
  var capacity: Int { slots.count / 4 * 3 }

  mutating func reserveCapacity(_ n: Int, arenaBytes: Int = 0) {
    if n > capacity { rehash(minimumCapacity: n) }
    if arenaBytes > arena.capacity - arena.count { arena.reserveCapacity(arena.count + arenaBytes) }
  }

  // MARK: Lookups

  /// The probe key for `bytes`.
  @inline(__always) func key(_ bytes: UnsafeBufferPointer<UInt8>) -> ProbeKey {
    ProbeKey(bytes, seed: seed)
  }

  /// Calls `body` with the probe key for `id` (a body that changes the index must use
  /// `ProbeKey.with(_:seed:_:)` instead).
  @inline(__always) func withKey<R>(_ id: String, _ body: (ProbeKey) -> R) -> R {
    ProbeKey.with(id, seed: seed, body)
  }

  /// The handle of `id`, or nil. Setting a handle inserts or updates `id`.
  subscript(id: String) -> Handle? {
    get {
      guard count > 0 else { return nil }
      return withKey(id) { k in find(k).map { slots[$0].handle } }
    }
    set {
      guard let h = newValue else { return }
      ProbeKey.with(id, seed: seed) { k in
        if case .present(let slot, _, _) = insert(k, h) { slots[slot].handle = h }
      }
    }
  }

  /// The handle of the id whose bytes `k` holds, or nil.
  @inline(__always) func handle(_ k: ProbeKey) -> Handle? {
    guard count > 0, let i = find(k) else { return nil }
    return slots[i].handle
  }

  /// The slot holding `k`, or nil.
  @inline(__always) private func find(_ k: ProbeKey) -> Int? {
    guard !slots.isEmpty else { return nil }
    return slots.withUnsafeBufferPointer { table in
      let mask = table.count &- 1
      var i = Int(truncatingIfNeeded: k.hash) & mask
      while table[i].handle >= 0 {
        if table[i].hash == k.hash && matches(table[i].id, k) { return i }
        i = (i &+ 1) & mask
      }
      return nil
    }
  }

  /// Whether a stored id holds exactly the probe's bytes.
  @inline(__always) private func matches(_ id: StoredID, _ k: ProbeKey) -> Bool {
    guard id.hi == k.form.hi else { return false }
    if id.isInline { return id.lo == k.form.lo }
    return arena.withUnsafeBufferPointer { a in
      Self.equal(UnsafeBufferPointer(rebasing: a[id.offset..<id.offset &+ id.count]), k.bytes)
    }
  }

  // MARK: Inserts

  /// What `insert` did: stored the id (and how), or found it already there.
  enum Insertion {
    case inserted(StoredID)
    case present(slot: Int, id: StoredID, handle: Handle)
  }

  /// Adds `k` with handle `h` unless it is already there (then nothing changes): one hash,
  /// one probe.
  @inline(__always) mutating func insert(_ k: ProbeKey, _ h: Handle) -> Insertion {
    if count &+ 1 > capacity { rehash(minimumCapacity: count &+ 1) }
    let found: Int = slots.withUnsafeBufferPointer { table in
      let mask = table.count &- 1
      var i = Int(truncatingIfNeeded: k.hash) & mask
      while table[i].handle >= 0 {
        if table[i].hash == k.hash && matches(table[i].id, k) { return ~i }
        i = (i &+ 1) & mask
      }
      return i
    }
    if found < 0 {
      let slot = slots[~found]
      return .present(slot: ~found, id: slot.id, handle: slot.handle)
    }
    let id: StoredID
    if k.bytes.count <= StoredID.maxInline {
      id = k.form
    } else {
      id = StoredID(offset: arena.count, count: k.bytes.count)
      arena.append(contentsOf: k.bytes)
    }
    slots.withUnsafeMutableBufferPointer { $0[found] = Slot(id: id, hash: k.hash, handle: h) }
    count &+= 1
    return .inserted(id)
  }

  /// Points the entry in `slot` (as `insert` reported it) at another handle.
  mutating func setHandle(inSlot slot: Int, _ h: Handle) {
    slots[slot].handle = h
  }

  /// Puts a new entry in the first empty slot of its probe run.
  private mutating func place(_ slot: Slot) {
    let mask = slots.count &- 1
    var i = Int(truncatingIfNeeded: slot.hash) & mask
    while slots[i].handle >= 0 { i = (i &+ 1) & mask }
    slots[i] = slot
  }

  private mutating func rehash(minimumCapacity n: Int) {
    var size = 8
    while size / 4 * 3 < n { size &*= 2 }
    let old = slots
    // All bits set is an empty slot (handle -1): one memset instead of a loop of stores.
    slots = Array(unsafeUninitializedCapacity: size) { buffer, initialized in
      UnsafeMutableRawBufferPointer(buffer).initializeMemory(as: UInt8.self, repeating: 0xFF)
      initialized = size
    }
    for slot in old where slot.handle >= 0 { place(slot) }
  }

  // MARK: Removal

  /// Removes `id`'s entry, if there: the entries after it in its probe run move back
  /// (backward-shift deletion), so every other lookup still finds its entry with no marker
  /// left behind. The arena keeps its bytes (`truncateArena` drops a tail nothing uses).
  mutating func remove(_ id: String) {
    guard count > 0, let found = withKey(id, { find($0) }) else { return }
    slots.withUnsafeMutableBufferPointer { table in
      let mask = table.count &- 1
      var hole = found
      var j = found
      while true {
        j = (j &+ 1) & mask
        guard table[j].handle >= 0 else { break }
        // The entry at j may fill the hole when its home slot is not in (hole, j].
        let home = Int(truncatingIfNeeded: table[j].hash) & mask
        if (j &- home) & mask >= (j &- hole) & mask {
          table[hole] = table[j]
          hole = j
        }
      }
      table[hole].handle = -1
    }
    count &-= 1
  }

  /// Drops the arena's bytes from `n` on (only those of removed entries).
  mutating func truncateArena(to n: Int) {
    if n < arena.count { arena.removeSubrange(n...) }
  }

  // MARK: Stored bytes

  /// Calls `body` with a stored id's bytes.
  @inline(__always) func withBytes<R>(
    of id: StoredID, _ body: (UnsafeBufferPointer<UInt8>) -> R
  ) -> R {
    if id.isInline { return id.withInlineBytes(body) }
    return arena.withUnsafeBufferPointer { a in
      body(UnsafeBufferPointer(rebasing: a[id.offset..<id.offset &+ id.count]))
    }
  }

  // MARK: Hashing

  /// Keys every table's hash, so a hostile log cannot choose colliding ids.
  static let processSeed = UInt64.random(in: 0...UInt64.max)

  /// The hash of a short id, mixing its two inline words (the count included) in the manner
  /// of wyhash, keyed by `seed`.
  @inline(__always) static func hash(inline form: StoredID, seed: UInt64) -> UInt32 {
    var h = mix(seed ^ form.lo, 0xA076_1D64_78BD_642F, seed)
    h = mix(h ^ form.hi, 0xE703_7ED1_A0B4_28DB, seed)
    return UInt32(truncatingIfNeeded: h ^ (h >> 32))
  }

  /// The hash of an id over 15 bytes: the same mixing over its bytes, eight at a time.
  @inline(__always) static func hash(long bytes: UnsafeBufferPointer<UInt8>, seed: UInt64)
    -> UInt32
  {
    hashAndASCII(long: bytes, seed: seed).hash
  }

  /// `hash(long:seed:)`, and whether the bytes are ASCII, in one pass over them.
  @inline(__always) static func hashAndASCII(
    long bytes: UnsafeBufferPointer<UInt8>, seed: UInt64
  ) -> (hash: UInt32, ascii: Bool) {
    let raw = UnsafeRawBufferPointer(bytes)
    let n = raw.count
    var h = seed ^ (UInt64(n) &* 0x9E37_79B9_7F4A_7C15)
    var high: UInt64 = 0
    var i = 0
    while i &+ 8 <= n {
      let word = raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)
      high |= word
      h = mix(h ^ word, 0xA076_1D64_78BD_642F, seed)
      i &+= 8
    }
    // The last partial word: the end of the id's last eight bytes (an id here has more).
    var tail: UInt64 = 0
    if i < n {
      let last = raw.loadUnaligned(fromByteOffset: n &- 8, as: UInt64.self)
      high |= last
      let drop = UInt64((8 &- (n &- i)) &* 8)
      tail = UInt64(littleEndian: last) >> drop
    }
    h = mix(h ^ tail, 0xE703_7ED1_A0B4_28DB, seed)
    h = mix(h, 0x8EBC_6AF0_9C88_C6E3, seed)
    return (UInt32(truncatingIfNeeded: h ^ (h >> 32)), high & 0x8080_8080_8080_8080 == 0)
  }

  @inline(__always) private static func mix(_ a: UInt64, _ b: UInt64, _ seed: UInt64) -> UInt64 {
    let m = a.multipliedFullWidth(by: b ^ seed)
    return m.high ^ m.low
  }

  /// Whether two byte runs are equal, eight bytes at a time.
  @inline(__always) static func equal(
    _ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>
  ) -> Bool {
    guard a.count == b.count else { return false }
    let x = UnsafeRawBufferPointer(a)
    let y = UnsafeRawBufferPointer(b)
    var i = 0
    while i &+ 8 <= x.count {
      if x.loadUnaligned(fromByteOffset: i, as: UInt64.self)
        != y.loadUnaligned(fromByteOffset: i, as: UInt64.self)
      {
        return false
      }
      i &+= 8
    }
    while i < x.count {
      if x[i] != y[i] { return false }
      i &+= 1
    }
    return true
  }
}
