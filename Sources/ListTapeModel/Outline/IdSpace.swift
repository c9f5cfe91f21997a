import ListTapeJSON

/// The identifiers a state knows, by entry number: each id's text is kept once, in stored
/// form, and an item or section is keyed by its entry everywhere else.
///
/// A state folded from a 2.0 log shares its numbering with the log's dictionary (the
/// segment's entries, in the order the log defines them), so the fold's references are
/// entry numbers that need no lookup. A state edited by `String` (the store, the tests, a 1.0
/// log) numbers ids as they come. Entries are never removed: an id whose item went away
/// keeps its entry, and the same id coming back finds it again.
///
/// The string → entry table is built only when someone asks by string (`entry(of:)`), and
/// kept up to date from then on; a fold on entries never builds it.
package struct IdSpace: Sendable {
  /// Every entry's stored form (`IdText.store`), back to back.
  package private(set) var bytes: [UInt8] = []
  /// Where each entry's stored form ends in `bytes`.
  package private(set) var ends: [UInt32] = []
  /// Names this numbering: copies share it, so a state and a dictionary of one log segment
  /// know they agree entry for entry (a prefix of each other). 0 until asked for.
  package private(set) var lineage: UInt64 = 0
  /// The string → entry table, once built.
  private var table = EntryTable()
  /// Whether no entry is a hole (every entry has a stored form): then a loader need not
  /// look each entry up to know it is named.
  package private(set) var isHoleFree = true

  /// An empty space.
  package init() {}

  /// A space holding `count` entries in stored form (`bytes` cut by `ends`), numbered as
  /// there, in `lineage` (0: a new one on first use). Throws when the ends do not cut the
  /// bytes into well-formed entries.
  package init(stored bytes: [UInt8], ends: [UInt32], lineage: UInt64 = 0) throws(CodecError) {
    var previous: UInt32 = 0
    for (i, end) in ends.enumerated() {
      guard end > previous, Int(end) <= bytes.count else {
        throw CodecError("dictionary entry \(i) has a bad extent", offset: Int(previous))
      }
      previous = end
    }
    guard Int(previous) == bytes.count else {
      throw CodecError("dictionary has trailing bytes", offset: Int(previous))
    }
    self.bytes = bytes
    self.ends = ends
    self.lineage = lineage
  }

  /// Entries defined so far.
  @inline(__always) package var count: Int { ends.count }

  /// This space's lineage, drawn on first use.
  package mutating func ensureLineage() -> UInt64 {
    if lineage == 0 { lineage = UInt64.random(in: 1...UInt64.max) }
    return lineage
  }

  /// Gives this space the lineage `l` (a dictionary of a known log segment).
  package mutating func setLineage(_ l: UInt64) { lineage = l }

  /// Where entry `e`'s stored form lies in `bytes` (empty: a hole, an entry whose definition
  /// a salvaged log lost).
  @inline(__always) package func extent(_ e: Int) -> Range<Int> {
    (e == 0 ? 0 : Int(ends[e &- 1]))..<Int(ends[e])
  }

  /// Whether entry `e` is a hole; read only when the space has one, so a fold over a whole
  /// log's references does not touch `ends` at random for each.
  @inline(__always) package func isHole(_ e: Int) -> Bool {
    !isHoleFree && extent(e).isEmpty
  }

  // MARK: Reading entries

  /// The first stored byte of entry `e`, read only to bring it into the cache before a
  /// batch of ids is written.
  @inline(__always) func touch(_ e: Int) -> UInt32 {
    let start = e == 0 ? 0 : Int(ends[e &- 1])
    return start < bytes.count ? UInt32(bytes[start]) : 0
  }

  /// Calls `body` with entry `e`'s stored form.
  @inline(__always) package func withStored<R>(_ e: Int, _ body: (UnsafeRawBufferPointer) -> R)
    -> R
  {
    let r = extent(e)
    return bytes.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[r])) }
  }

  /// Calls `body` with entry `e`'s UTF-8 text (a UUID spelt into a buffer on the stack).
  @inline(__always) package func withText<R>(_ e: Int, _ body: (UnsafeBufferPointer<UInt8>) -> R)
    -> R
  {
    let r = extent(e)
    return bytes.withUnsafeBytes { all in
      IdText.withText(UnsafeRawBufferPointer(rebasing: all[r]), body)
    }
  }

  /// Entry `e`'s text.
  package func text(_ e: Int) -> String {
    withText(e) { String(decoding: $0, as: UTF8.self) }
  }

  /// Whether entry `e` here and entry `f` of `other` are the same id (equal stored forms,
  /// which a text has only one of).
  @inline(__always) func same(_ e: Int, as f: Int, in other: IdSpace) -> Bool {
    let r = extent(e)
    let q = other.extent(f)
    guard r.count == q.count else { return false }
    return bytes.withUnsafeBufferPointer { a in
      other.bytes.withUnsafeBufferPointer { b in
        IdentifierIndex.equal(
          UnsafeBufferPointer(rebasing: a[r]), UnsafeBufferPointer(rebasing: b[q]))
      }
    }
  }

  // MARK: Growing

  /// Appends an entry given in stored form (checked by the caller); returns its number.
  @discardableResult
  package mutating func append(stored form: UnsafeRawBufferPointer) -> Int32 {
    let e = Int32(truncatingIfNeeded: ends.count)
    appendUnindexed(stored: form)
    if table.isBuilt {
      var t = takeTable()
      t.insertIfAbsent(e, self)
      table = t
    }
    return e
  }

  /// Appends an entry given in stored form (checked by the caller) without entering it in
  /// the string table: `indexAppended(from:_:)` must follow before anything asks by string.
  package mutating func appendUnindexed(stored form: UnsafeRawBufferPointer) {
    if form.isEmpty { isHoleFree = false }
    bytes.append(contentsOf: form)
    ends.append(UInt32(truncatingIfNeeded: bytes.count))
  }

  /// Enters the entries from `first` on (appended by `appendUnindexed`) in the string table,
  /// building it over the ones before when needed, and tells `body` each entry and the first
  /// entry holding its id (itself unless it repeats an earlier one).
  package mutating func indexAppended(from first: Int, _ body: (Int32, Int32) -> Void) {
    guard first < count else { return }
    var t = takeTable()
    // A table grows once for a batch of definitions, to room for as many again (an outline
    // defined in one frame is often followed by more), rather than doubling its way there.
    if t.isBuilt {
      t.reserve(count &+ (count &- first))
    } else {
      t.build(self, entries: first, room: count)
    }
    t.insert(first..<count, self, body)
    table = t
  }

  /// Appends `n` entries given in stored form, back to back, cut by `ends` (relative to
  /// the start of `stored`).
  package mutating func append(
    stored: UnsafeRawBufferPointer, ends newEnds: UnsafeBufferPointer<UInt32>
  ) {
    let base = UInt32(truncatingIfNeeded: bytes.count)
    let first = ends.count
    bytes.append(contentsOf: stored)
    var previous: UInt32 = 0
    for end in newEnds {
      if end == previous { isHoleFree = false }
      previous = end
      ends.append(base &+ end)
    }
    if table.isBuilt {
      var t = takeTable()
      t.insert(first..<ends.count, self) { _, _ in }
      table = t
    }
  }

  /// Appends entries `range` of `other` (a dictionary this space follows).
  package mutating func append(from other: IdSpace, _ range: Range<Int>) {
    guard !range.isEmpty else { return }
    let lo = range.lowerBound == 0 ? 0 : Int(other.ends[range.lowerBound &- 1])
    let hi = Int(other.ends[range.upperBound &- 1])
    let first = ends.count
    // Ends shift by where the entries land here against where they lay there.
    let shift = UInt32(truncatingIfNeeded: bytes.count) &- UInt32(truncatingIfNeeded: lo)
    if !other.isHoleFree { isHoleFree = false }
    bytes.append(contentsOf: other.bytes[lo..<hi])
    for k in range { ends.append(other.ends[k] &+ shift) }
    if table.isBuilt {
      var t = takeTable()
      t.insert(first..<ends.count, self) { _, _ in }
      table = t
    }
  }

  /// Appends `id` as a new entry (even when it is already one); returns its number.
  @discardableResult
  package mutating func append(_ id: String) -> Int32 {
    var form: [UInt8] = []
    IdText.store(id, into: &form)
    return form.withUnsafeBytes { append(stored: $0) }
  }

  /// Drops entries from `n` on (a frame decoded again defines them again).
  package mutating func truncate(to n: Int) {
    guard n < ends.count else { return }
    let end = n == 0 ? 0 : Int(ends[n &- 1])
    ends.removeSubrange(n...)
    bytes.removeSubrange(end...)
    if table.isBuilt { table = EntryTable() }
  }

  /// Makes room for `entries` entries of `bytes` stored bytes in all, so that a space
  /// read whole (a segment's definitions) is not copied at every doubling, nor its string
  /// table (when built) placed again at each.
  package mutating func reserve(entries: Int, bytes n: Int) {
    if ends.capacity < entries { ends.reserveCapacity(entries) }
    if bytes.capacity < n { bytes.reserveCapacity(n) }
    if table.isBuilt { table.reserve(entries) }
  }

  /// Empties the space and gives it a new lineage (a dictionary restart).
  package mutating func removeAll(lineage l: UInt64 = 0) {
    bytes.removeAll(keepingCapacity: true)
    ends.removeAll(keepingCapacity: true)
    table = EntryTable()
    lineage = l
    isHoleFree = true
  }

  // MARK: By string

  /// The first entry whose id is `id`, or nil; builds the string table on first use.
  /// - Complexity: O(1) expected once built; the first call O(entries).
  package mutating func entry(of id: String) -> Int32? {
    var id = id
    return id.withUTF8 { entry(ofText: $0) }
  }

  /// The first entry whose id has the UTF-8 bytes `text`, or nil.
  package mutating func entry(ofText text: UnsafeBufferPointer<UInt8>) -> Int32? {
    buildTable()
    return IdText.withStored(text) { table.find($0, self) }
  }

  /// The first entry whose id is entry `e`'s (`e` itself unless it repeats an earlier
  /// one), building the string table when needed.
  package mutating func firstEntry(sameAs e: Int) -> Int32 {
    buildTable()
    if table.last.entry == Int32(truncatingIfNeeded: e) { return table.last.first }
    let r = extent(e)
    let found = bytes.withUnsafeBytes { table.find(UnsafeRawBufferPointer(rebasing: $0[r]), self) }
    return found ?? Int32(truncatingIfNeeded: e)
  }

  /// The entry of `id`, appending it when new.
  package mutating func define(_ id: String) -> Int32 {
    var id = id
    return id.withUTF8 { define(text: $0) }
  }

  /// The entry of the id whose UTF-8 bytes are `text`, appending it when new.
  package mutating func define(text: UnsafeBufferPointer<UInt8>) -> Int32 {
    if let e = entry(ofText: text) { return e }
    return IdText.withStored(text) { append(stored: $0) }
  }

  /// The string table, moved out of the space (put it back when done), so that the space
  /// it is handed with holds no second reference to it (which would copy its slots at every
  /// write).
  private mutating func takeTable() -> EntryTable {
    var t = EntryTable()
    swap(&t, &table)
    return t
  }

  /// Builds the string table if it is not built.
  package mutating func buildTable() {
    guard !table.isBuilt else { return }
    var t = takeTable()
    t.build(self)
    table = t
  }

  /// This space without its string table (a state taking a decoder's dictionary: the fold
  /// asks nothing by string, so it should not keep the table up to date).
  package func withoutStringTable() -> IdSpace {
    var copy = self
    copy.table = EntryTable()
    return copy
  }

  /// For each entry of `previous` (the ids before a dictionary restart, say), the first
  /// entry of this space naming the same id, or -1: each id here is looked up once in
  /// `previous`'s string table by the hash this one keeps (no id hashed again). nil unless
  /// both have their string tables.
  package func renumbering(from previous: IdSpace) -> [Int32]? {
    guard table.isBuilt && previous.table.isBuilt else { return nil }
    return previous.table.firsts(of: self, table, in: previous)
  }

  /// About how many bytes the space holds (its texts, their ends and the string table).
  package var heldBytes: Int {
    bytes.capacity &+ ends.capacity &* 4 &+ table.heldBytes
  }

  /// Whether the string table is built (for tests: a fold on entries never builds it).
  package var hasStringTable: Bool { table.isBuilt }

  /// The first entry in `range` whose stored form is `form`, found by comparing each
  /// (no table: O(entries in range)).
  package func scan(for form: UnsafeRawBufferPointer, in range: Range<Int>) -> Int32? {
    guard !range.isEmpty else { return nil }
    let key = form.assumingMemoryBound(to: UInt8.self)
    return bytes.withUnsafeBufferPointer { all in
      ends.withUnsafeBufferPointer { ends in
        var start = range.lowerBound == 0 ? 0 : Int(ends[range.lowerBound &- 1])
        for e in range {
          let end = Int(ends[e])
          if end &- start == key.count
            && IdentifierIndex.equal(UnsafeBufferPointer(rebasing: all[start..<end]), key)
          {
            return Int32(truncatingIfNeeded: e)
          }
          start = end
        }
        return nil
      }
    }
  }
}

/// An id asked about in many states of one fold (a query's `selected("x")` at every event):
/// it remembers, per lineage, the entry it found or how many entries it has compared, so a
/// state whose ids only grew since is searched in its new entries alone.
package struct IdProbe: Sendable {
  /// The id, as given.
  package let id: String
  private let stored: [UInt8]
  private var lineage: UInt64 = 0
  private var compared = 0
  private var found: Int32 = -1

  package init(_ id: String) {
    self.id = id
    var form: [UInt8] = []
    IdText.store(id, into: &form)
    stored = form
  }

  /// The first entry of `ids` naming this id, or nil. - Complexity: O(1) amortized over
  /// the states of one fold; O(entries) for a space of no lineage without a string table.
  package mutating func entry(in ids: IdSpace) -> Int32? {
    if ids.hasStringTable {
      var copy = ids
      return stored.withUnsafeBytes { form in
        IdText.withText(form) { copy.entry(ofText: $0) }
      }
    }
    if ids.lineage == 0 {
      return stored.withUnsafeBytes { ids.scan(for: $0, in: 0..<ids.count) }
    }
    // A lineage names one numbering whose spaces are prefixes of each other.
    if ids.lineage != lineage || compared > ids.count {
      lineage = ids.lineage
      compared = 0
      found = -1
    }
    if found < 0 && compared < ids.count {
      found = stored.withUnsafeBytes { ids.scan(for: $0, in: compared..<ids.count) } ?? -1
      compared = ids.count
    }
    return found >= 0 ? found : nil
  }
}

/// The string → entry table of an `IdSpace`: open addressing over entry numbers, keyed by
/// a hash of each entry's stored form (seeded per process, so a log cannot choose ids that
/// collide), at most half full, never shrinking (entries are never removed).
struct EntryTable: Sendable {
  /// Each slot: hash << 32 | (entry + 1); 0 is empty.
  private var slots: [UInt64] = []
  /// The last entry inserted and the first entry holding its id (itself unless a repeat).
  private(set) var last: (entry: Int32, first: Int32) = (-1, -1)
  private var count = 0
  var isBuilt: Bool { !slots.isEmpty }
  var heldBytes: Int { slots.capacity &* 8 }

  static func hash(_ form: UnsafeRawBufferPointer) -> UInt32 {
    let bytes = form.assumingMemoryBound(to: UInt8.self)
    if bytes.count <= StoredID.maxInline {
      return IdentifierIndex.hash(
        inline: StoredID(inline: bytes), seed: IdentifierIndex.processSeed)
    }
    return IdentifierIndex.hash(long: bytes, seed: IdentifierIndex.processSeed)
  }

  /// Builds the table over the first `n` entries of `space` (all of them by default),
  /// with room for `room` entries (at least `n`) before it grows.
  mutating func build(_ space: IdSpace, entries n: Int? = nil, room: Int = 0) {
    let n = n ?? space.count
    slots = []
    count = 0
    reserve(max(n, room) &+ 1)
    insert(0..<n, space) { _, _ in }
  }

  func find(_ form: UnsafeRawBufferPointer, _ space: IdSpace) -> Int32? {
    space.bytes.withUnsafeBufferPointer { all in
      probe(
        UnsafeBufferPointer(rebasing: form.assumingMemoryBound(to: UInt8.self)[...]),
        hash: Self.hash(form), all, space
      )
      .entry
    }
  }

  /// For each entry of `own` (whose table this is), the first entry of `space` (whose table
  /// `table` is) naming the same id, or -1: each of `table`'s ids is looked up here by the
  /// hash `table` keeps, so no id is hashed again.
  func firsts(of space: IdSpace, _ table: EntryTable, in own: IdSpace) -> [Int32] {
    var map = [Int32](repeating: -1, count: own.count)
    space.bytes.withUnsafeBufferPointer { theirs in
      own.bytes.withUnsafeBufferPointer { mine in
        map.withUnsafeMutableBufferPointer { map in
          for s in table.slots where s != 0 {
            let e = Int(UInt32(truncatingIfNeeded: s)) &- 1
            let key = UnsafeBufferPointer(rebasing: theirs[space.extent(e)])
            if let o = probe(key, hash: UInt32(truncatingIfNeeded: s >> 32), mine, own).entry {
              map[Int(o)] = Int32(truncatingIfNeeded: e)
            }
          }
        }
      }
    }
    return map
  }

  /// Adds entry `e` of `space` unless an earlier entry holds the same id: one hash and one
  /// probe sequence, which ends at the id's slot or at the empty slot that takes it.
  mutating func insertIfAbsent(_ e: Int32, _ space: IdSpace) {
    if (count &+ 1) &* 2 > slots.count { grow() }
    space.bytes.withUnsafeBufferPointer { all in
      let key = UnsafeBufferPointer(rebasing: all[space.extent(Int(e))])
      insert(e, key, hash: Self.hash(UnsafeRawBufferPointer(key)), all, space)
    }
  }

  /// Adds entries `range` of `space` in order, as `insertIfAbsent` does, telling `body` the
  /// first entry holding each one's id. They go in batches: the hashes of a batch first and
  /// a read of each one's first slot, so that the batch's cache misses overlap.
  mutating func insert(
    _ range: Range<Int>, _ space: IdSpace, _ body: (Int32, Int32) -> Void
  ) {
    let batch = 16
    withUnsafeTemporaryAllocation(of: UInt32.self, capacity: batch) { hs in
      space.bytes.withUnsafeBufferPointer { all in
        var e = range.lowerBound
        while e < range.upperBound {
          let k = min(batch, range.upperBound &- e)
          while (count &+ k) &* 2 > slots.count { grow() }
          let mask = slots.count &- 1
          var touched: UInt64 = 0
          for j in 0..<k {
            let h = Self.hash(
              UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: all[space.extent(e &+ j)])))
            hs[j] = h
            touched |= slots[Int(h & UInt32(truncatingIfNeeded: mask))]
          }
          Self.keep(touched)
          for j in 0..<k {
            let x = Int32(truncatingIfNeeded: e &+ j)
            insert(
              x, UnsafeBufferPointer(rebasing: all[space.extent(e &+ j)]), hash: hs[j], all, space)
            body(x, last.first)
          }
          e &+= k
        }
      }
    }
  }

  /// Adds entry `e` (whose stored form is `key`, hashing to `h`) unless an earlier entry
  /// holds the same id; there must be room for it.
  @inline(__always) private mutating func insert(
    _ e: Int32, _ key: UnsafeBufferPointer<UInt8>, hash h: UInt32,
    _ all: UnsafeBufferPointer<UInt8>, _ space: IdSpace
  ) {
    let found = probe(key, hash: h, all, space)
    last = (e, found.entry ?? e)
    guard found.entry == nil else { return }
    slots[found.slot] = UInt64(h) << 32 | UInt64(UInt32(bitPattern: e) &+ 1)
    count &+= 1
  }

  /// Keeps the loads that produced `value` (an opaque use).
  @inline(never) private static func keep(_ value: UInt64) {
    if value == 0x5EED_F00D { sink &+= 1 }
  }
  nonisolated(unsafe) private static var sink = 0

  /// Grows the slots at once to hold `n` entries at most half full (many entries about to
  /// be inserted), instead of doubling their way there.
  mutating func reserve(_ n: Int) {
    guard n &* 2 > slots.count else { return }
    grow(to: max(16, slots.count, Int.powerOfTwo(atLeast: n &* 2)))
  }

  /// Doubles the slots.
  private mutating func grow() { grow(to: max(16, slots.count &* 2)) }

  /// Moves to `size` slots (a power of two, room for every entry), placing each entry again
  /// by the hash its slot keeps.
  private mutating func grow(to size: Int) {
    var bigger = EntryTable()
    bigger.slots = [UInt64](repeating: 0, count: size)
    for s in slots where s != 0 { bigger.place(s) }
    bigger.count = count
    bigger.last = last
    self = bigger
  }

  /// Where `key` (an id's stored form, hashing to `h`; `all` is `space`'s bytes) is: its
  /// entry, or the empty slot its probe sequence ends at.
  @inline(__always) private func probe(
    _ key: UnsafeBufferPointer<UInt8>, hash h: UInt32, _ all: UnsafeBufferPointer<UInt8>,
    _ space: IdSpace
  ) -> (entry: Int32?, slot: Int) {
    let mask = slots.count &- 1
    // In UInt32 first: a hash above Int32.max is no Int on a 32-bit platform (wasm32).
    var i = Int(h & UInt32(truncatingIfNeeded: mask))
    while true {
      let s = slots[i]
      if s == 0 { return (nil, i) }
      if UInt32(truncatingIfNeeded: s >> 32) == h {
        let e = Int(UInt32(truncatingIfNeeded: s)) &- 1
        if IdentifierIndex.equal(UnsafeBufferPointer(rebasing: all[space.extent(e)]), key) {
          return (Int32(truncatingIfNeeded: e), i)
        }
      }
      i = (i &+ 1) & mask
    }
  }

  private mutating func place(_ s: UInt64) {
    let mask = slots.count &- 1
    var i = Int(UInt32(truncatingIfNeeded: s >> 32) & UInt32(truncatingIfNeeded: mask))
    while slots[i] != 0 { i = (i &+ 1) & mask }
    slots[i] = s
  }
}
