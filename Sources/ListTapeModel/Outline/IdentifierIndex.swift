import CListTapeHints

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

/// A map from identifiers to handles that also stores the identifiers, built for the fold's
/// hot path and for bulk loads: one probe usually touches one slot holding the id inline
/// (up to 15 bytes) or its place in the arena, a 32-bit hash tag and the handle. Ids longer
/// than 15 bytes live back to back in one byte arena, so inserting, looking up and dropping
/// them allocates nothing per id; removed ids leave garbage that `compact` reclaims.
///
/// Keys compare by their UTF-8 bytes (Unicode scalars, as `IdentifierKey`). Open addressing
/// with linear probing, at most 3/4 full, backward-shift deletion (no tombstones). The hash
/// is keyed by a random per-process seed, so a hostile log cannot choose ids that collide.
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
  /// Arena bytes of removed ids.
  private(set) var garbage = 0
  /// Long ids looked up lately, by the identity of their strings (`handle(remembering:)`).
  private var recent = RecentIDs()
  /// Counts changes of what an id maps to, so that a remembered answer from before one is
  /// never used.
  private(set) var generation: UInt64 = 0
  /// Lookups that `handle(remembering:)` answered without hashing (for tests).
  private(set) var rememberedAnswers = 0

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

  /// The handle of `id`, or nil. Setting a handle inserts or updates `id`; nil removes it.
  subscript(id: String) -> Handle? {
    get {
      guard count > 0 else { return nil }
      return withKey(id) { k in find(k).map { slots[$0].handle } }
    }
    set {
      ProbeKey.with(id, seed: seed) { k in
        if let h = newValue {
          switch insert(k, h) {
          case .inserted: break
          case .present(let slot, _, _):
            slots[slot].handle = h
            generation &+= 1
          }
        } else if let slot = find(k) {
          removeSlot(slot)
        }
      }
    }
  }

  /// The handle of `id`, or nil, like the subscript; long ids (`rememberedLength` bytes or
  /// more) are remembered by the identity of their `String`, so that the fold's repeated
  /// references to one string (the event decoder hands out the same instance for every
  /// back-reference) cost O(1) instead of a hash and a comparison of all their bytes.
  ///
  /// Exact: the entry keeps its string alive, so no other storage can sit at the same
  /// address and the kept one cannot change (a string's storage is only written in place
  /// while uniquely referenced); equal address and length therefore mean equal bytes. The
  /// answer is used only while `generation` is unchanged. Strings without contiguous UTF-8
  /// storage take the hashed path. Allocates nothing. (Dropping repeats within one event
  /// leaves a hash per event; hashing a bounded part of the id lets a log choose ids that
  /// collide: docs/performance.md, "Hostile logs".)
  @inline(__always) mutating func handle(remembering id: String) -> Handle? {
    let n = id.utf8.count
    guard n >= Self.rememberedLength,
      let address = id.utf8.withContiguousStorageIfAvailable({ UInt(bitPattern: $0.baseAddress) })
    else { return self[id] }
    if let h = recent.handle(address: address, count: n, generation: generation) {
      rememberedAnswers &+= 1
      return h < 0 ? nil : h
    }
    let h = self[id]
    recent.remember(id, address: address, count: n, handle: h ?? -1, generation: generation)
    return h
  }

  /// Ids at least this long are remembered by identity: below it, hashing and comparing the
  /// bytes (a few words) costs about what keeping the string costs (a retain and release).
  static let rememberedLength = 256

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

  // MARK: Inserts and removals

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
    generation &+= 1
    return .inserted(id)
  }

  /// Points the entry in `slot` (as `insert` reported it) at another handle.
  mutating func setHandle(inSlot slot: Int, _ h: Handle) {
    slots[slot].handle = h
    generation &+= 1
  }

  /// Removes `id` if it maps to `h` (an id re-registered by another item stays); returns
  /// whether it did.
  @discardableResult
  mutating func remove(_ id: StoredID, ifMapsTo h: Handle) -> Bool {
    // Probe first (reading only), then change the table.
    let found = withBytes(of: id) { find(key($0)) }
    guard let i = found, slots[i].handle == h else { return false }
    removeSlot(i)
    return true
  }

  /// Puts an entry back as it was (`h`, or absent when nil) using bytes already in the
  /// arena: how a rolled-back batch undoes its inserts and removals.
  mutating func restore(_ id: StoredID, to h: Handle?) {
    let (hash, found) = withBytes(of: id) { bytes in
      let k = key(bytes)
      return (k.hash, find(k))
    }
    generation &+= 1
    if let i = found {
      if let h { slots[i].handle = h } else { removeSlot(i) }
    } else if let h {
      if count &+ 1 > capacity { rehash(minimumCapacity: count &+ 1) }
      place(Slot(id: id, hash: hash, handle: h))
      count &+= 1
      if !id.isInline { garbage &-= id.count }
    }
  }

  private mutating func removeSlot(_ found: Int) {
    generation &+= 1
    let id = slots[found].id
    if !id.isInline { garbage &+= id.count }
    let mask = slots.count &- 1
    var hole = found
    var j = found
    // Shift later members of the run back into the hole when their home allows it.
    while true {
      j = (j &+ 1) & mask
      guard slots[j].handle >= 0 else { break }
      let home = Int(truncatingIfNeeded: slots[j].hash) & mask
      let movable = hole <= j ? (home <= hole || home > j) : (home <= hole && home > j)
      if movable {
        slots[hole] = slots[j]
        hole = j
      }
    }
    slots[hole] = Slot()
    count &-= 1
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

  /// A stored id as a string (ids of up to 15 bytes are small strings: no allocation).
  func string(_ id: StoredID) -> String {
    withBytes(of: id) { String(decoding: $0, as: UTF8.self) }
  }

  /// Where the arena ends and how much of it is garbage: a batch's starting point.
  var arenaMark: (count: Int, garbage: Int) { (arena.count, garbage) }

  /// Drops arena bytes appended since `mark` (no entry may still use them).
  mutating func rollBackArena(to mark: (count: Int, garbage: Int)) {
    arena.removeSubrange(mark.count...)
    garbage = mark.garbage
  }

  /// Whether removed ids take up enough of the arena to be worth a compaction: more than
  /// half of it, and more bytes than the table has slots (so a compaction, which visits
  /// every slot, costs at most a few steps per byte reclaimed).
  var needsCompaction: Bool {
    garbage > 4096 && garbage &* 2 > arena.count && garbage >= slots.count
  }

  /// Moves the live ids' bytes to a fresh arena, in table order, and calls `moved` with the
  /// handle and new place of each id that moved. - Complexity: O(slots + live bytes).
  mutating func compact(_ moved: (Handle, StoredID) -> Void) {
    var fresh: [UInt8] = []
    fresh.reserveCapacity(arena.count &- garbage)
    arena.withUnsafeBufferPointer { old in
      for i in slots.indices where slots[i].handle >= 0 && !slots[i].id.isInline {
        let id = slots[i].id
        let new = StoredID(offset: fresh.count, count: id.count)
        fresh.append(
          contentsOf: UnsafeBufferPointer(rebasing: old[id.offset..<id.offset &+ id.count]))
        slots[i].id = new
        moved(slots[i].handle, new)
      }
    }
    arena = fresh
    garbage = 0
  }

  // MARK: Prefetching

  /// Starts loading the slot where a probe for `hash` begins.
  @inline(__always) func prefetch(hash: UInt32) {
    slots.withUnsafeBufferPointer { table in
      guard let base = table.baseAddress else { return }
      listtape_prefetch(base + (Int(truncatingIfNeeded: hash) & (table.count &- 1)))
    }
  }

  /// The handle of the first entry in `hash`'s probe run (within 4 slots) whose tag is
  /// `hash`, after starting to load its arena bytes when it has some: usually the key's own
  /// entry, but another key may share the tag, so this is only good for a prefetch. -1 if
  /// none.
  @inline(__always) func prefetchEntry(taggedWith hash: UInt32) -> Handle {
    slots.withUnsafeBufferPointer { table in
      guard !table.isEmpty else { return -1 }
      let mask = table.count &- 1
      var i = Int(truncatingIfNeeded: hash) & mask
      for _ in 0..<4 {
        if table[i].handle < 0 { return -1 }
        if table[i].hash == hash {
          let id = table[i].id
          if !id.isInline && id.offset < arena.count {
            arena.withUnsafeBufferPointer {
              listtape_prefetch($0.baseAddress.map { $0 + id.offset })
            }
          }
          return table[i].handle
        }
        i = (i &+ 1) & mask
      }
      return -1
    }
  }

  // MARK: Hashing

  /// Keys every table's hash, so a hostile log cannot choose colliding ids.
  static let processSeed = UInt64.random(in: 0...UInt64.max)

  /// The hash `find` computes for `id`: fold hints carry it from the decoding thread.
  static func hash(of id: String) -> UInt32 {
    var key = id
    return key.withUTF8 { ProbeKey($0, seed: processSeed).hash }
  }

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

/// The last few long ids an `IdentifierIndex` looked up, each with the string (kept alive),
/// its storage address and length, its answer (-1: absent) and the index's generation then.
/// Four entries in place: no allocation, and enough for the ids one event names.
struct RecentIDs {
  struct Entry {
    var id = ""
    var address: UInt = 0
    var count = 0
    var handle: Handle = -1
    /// Never a generation an index has had, so an unused entry never answers.
    var generation = UInt64.max
  }

  var e0 = Entry()
  var e1 = Entry()
  var e2 = Entry()
  var e3 = Entry()
  /// The entry the next new id replaces (round robin).
  var next = 0

  /// The remembered handle (-1: absent) of the string at `address` with `count` bytes, if it
  /// was looked up at `generation`.
  @inline(__always) func handle(address: UInt, count: Int, generation: UInt64) -> Handle? {
    func answer(_ e: Entry) -> Handle? {
      e.address == address && e.count == count && e.generation == generation ? e.handle : nil
    }
    return answer(e0) ?? answer(e1) ?? answer(e2) ?? answer(e3)
  }

  mutating func remember(
    _ id: String, address: UInt, count: Int, handle: Handle, generation: UInt64
  ) {
    let e = Entry(id: id, address: address, count: count, handle: handle, generation: generation)
    switch next {
    case 0: e0 = e
    case 1: e1 = e
    case 2: e2 = e
    default: e3 = e
    }
    next = (next &+ 1) & 3
  }
}
