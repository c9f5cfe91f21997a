/// What a log's frames know of its sites, shared from frame to frame (layout 3,
/// docs/log-format.md): for each context (the event's op and the site before it) the sites
/// met there, most frequent first; for each op the sites it used lately; and the coder's
/// probabilities. The writer and every reader move their copies alike, so an event costs
/// the few bits of its site's rank where the model predicted it, about 0.7 bits on an app's
/// sessions.
///
/// A site is named by its raw dictionary entry (the entry the writer numbered it), never by
/// an alias, so the model evolves the same in a salvaged or hostile log as in the writer.
package struct SiteModel: Sendable, Equatable {
  /// Contexts plus list entries beyond which a writer starts the model over (at a frame's
  /// start) and a reader refuses to go on with it.
  static let limit = 1 << 18
  /// Longest list kept per context and per op (the least used entry goes).
  static let listLimit = 255

  /// Sites coded since the model started (a layout 3 frame's header carries it, so a
  /// reader knows whether its copy is the writer's).
  package private(set) var coded = 0
  /// Contexts and list entries held (bounded by `limit`).
  private(set) var size = 0
  private var previous: Int32 = -1
  private var contexts = ContextTable()
  private var lists = ContextSites()
  private var recent: [[Int32]] = Array(repeating: [], count: Int(EventCodes.codeMask) + 1)
  private var probabilities = [UInt16](
    repeating: RangeProbability.half, count: (Int(EventCodes.codeMask) + 1) * Slot.perOp)

  package init() {}

  /// The bytes the model's storage takes (a copy held apart costs as much).
  var heldBytes: Int {
    lists.heldBytes &+ contexts.heldBytes &+ recent.reduce(0) { $0 &+ $1.capacity &* 4 }
      &+ probabilities.count &* 2
  }

  /// Contexts met so far, each with its list.
  var contextCount: Int { lists.count }

  /// Whether every context's list holds distinct sites, each used, most used first.
  var listsAreRanked: Bool {
    (0..<lists.count).allSatisfy { i in
      let sites = lists.sites(of: i)
      return Set(sites.map(\.entry)).count == sites.count && sites.allSatisfy { $0.uses > 0 }
        && zip(sites, sites.dropFirst()).allSatisfy { $0.uses >= $1.uses }
    }
  }

  /// The longest context's list (at most `listLimit`).
  var longestList: Int { (0..<lists.count).map { lists.length(of: $0) }.max() ?? 0 }

  /// Whether a writer should start the model over before its next frame.
  var isFull: Bool { size > Self.limit }

  /// Forgets everything (a new segment, or a model that grew to its bound).
  mutating func removeAll() { self = SiteModel() }

  /// Takes site `entry` of an event of op `code` that the event defines (the frame says
  /// which events do elsewhere, so it costs no bits here).
  mutating func define(_ entry: Int32, code: UInt8) {
    let c = Int(code & EventCodes.codeMask)
    learn(entry, in: context(c), code: c)
  }

  /// Codes site `entry` of an event of op `code`, an entry defined before the event;
  /// `frame` bounds the entry numbers.
  mutating func encode(
    _ entry: Int32, code: UInt8, frame: SiteFrame, into coder: inout RangeEncoder
  ) {
    let c = Int(code & EventCodes.codeMask)
    let list = context(c)
    var bits = EncodingBits(coder: RangeEncoder())
    swap(&bits.coder, &coder)
    defer { swap(&bits.coder, &coder) }
    // The encoder's bits cannot fail.
    let r = lists.rank(of: entry, in: list)
    if let hit = try? rank(r, count: lists.length(of: list), slot: c &* Slot.perOp, &bits) {
      use(entry: entry, at: hit, of: list, code: c)
      return
    }
    let rr = recent[c].firstIndex(of: entry)
    if (try? rank(rr, count: recent[c].count, slot: c &* Slot.perOp &+ Slot.recent, &bits)) != nil {
      learn(entry, in: list, code: c)
      return
    }
    bits.coder.encodeDirect(UInt64(entry), width: Self.width(frame.entries &- 1))
    learn(entry, in: list, code: c)
  }

  /// The raw entry of the site of an event of op `code` that does not define it, read from
  /// `coder` (the caller checks that the entry was defined before the event).
  mutating func decode(code: UInt8, frame: SiteFrame, from coder: inout RangeDecoder)
    throws(CodecError) -> Int32
  {
    let c = Int(code & EventCodes.codeMask)
    let list = context(c)
    var bits = DecodingBits(coder: coder)
    defer { coder = bits.coder }
    if let hit = try rank(nil, count: lists.length(of: list), slot: c &* Slot.perOp, &bits) {
      let entry = lists.entry(list, hit)
      use(entry: entry, at: hit, of: list, code: c)
      return entry
    }
    if let hit = try rank(
      nil, count: recent[c].count, slot: c &* Slot.perOp &+ Slot.recent, &bits)
    {
      let entry = recent[c][hit]
      learn(entry, in: list, code: c)
      return entry
    }
    let v = try bits.coder.decodeDirect(width: Self.width(frame.entries &- 1))
    guard v < UInt64(frame.entries) else {
      throw bits.coder.fail("site entry \(v) of \(frame.entries)")
    }
    let entry = Int32(truncatingIfNeeded: v)
    learn(entry, in: list, code: c)
    return entry
  }

  /// A rank below `count` or an escape (nil), coded in the four probabilities from `slot`:
  /// a list of one needs one bit, ranks 0 and 1 two, later ranks their number in full.
  private mutating func rank<B: SiteBits>(_ r: Int?, count: Int, slot: Int, _ b: inout B)
    throws(CodecError) -> Int?
  {
    if count == 0 { return nil }
    if count == 1 { return try b.bit(r == nil, &probabilities[slot]) ? nil : 0 }
    if try !b.bit((r ?? 2) >= 2, &probabilities[slot &+ 1]) {
      return try b.bit(r == 1, &probabilities[slot &+ 2]) ? 1 : 0
    }
    if count == 2 { return nil }
    if try b.bit(r == nil, &probabilities[slot &+ 3]) { return nil }
    let v = try b.direct(UInt64((r ?? 2) &- 2), width: Self.width(count &- 3))
    guard v < UInt64(count &- 2) else {
      throw b.fail("site rank \(v + 2) of a list of \(count)")
    }
    return Int(v) &+ 2
  }

  /// The list of context (op `code`, the site before), made when first met.
  private mutating func context(_ code: Int) -> Int {
    let key = UInt64(code) << 32 | UInt64(UInt32(bitPattern: previous))
    let i = contexts.findOrAdd(key, Int32(truncatingIfNeeded: lists.count))
    if i < lists.count { return i }
    lists.append()
    size &+= 1
    return i
  }

  /// A hit at rank `k` of list `list`: counted, moved before the entries now counted less.
  private mutating func use(entry: Int32, at k: Int, of list: Int, code: Int) {
    lists.count(list, at: k)
    touch(entry, code: code)
  }

  /// A site new to list `list`: appended (in place of the least used when full).
  private mutating func learn(_ entry: Int32, in list: Int, code: Int) {
    if lists.add(entry, to: list) { size &+= 1 }
    touch(entry, code: code)
  }

  /// Moves `entry` to the front of op `code`'s recent sites; ends the event.
  private mutating func touch(_ entry: Int32, code: Int) {
    if let k = recent[code].firstIndex(of: entry) {
      if k > 0 {
        // In place: one shift of the entries before it.
        recent[code].withUnsafeMutableBufferPointer { r in
          var i = k
          while i > 0 {
            r[i] = r[i &- 1]
            i &-= 1
          }
          r[0] = entry
        }
      }
    } else {
      recent[code].insert(entry, at: 0)
      if recent[code].count > Self.listLimit { recent[code].removeLast() }
    }
    previous = entry
    coded &+= 1
  }

  /// Bits needed to write numbers up to `n` (0 for n ≤ 0).
  static func width(_ n: Int) -> Int { n <= 0 ? 0 : Int.bitWidth &- n.leadingZeroBitCount }

  private enum Slot {
    static let recent = 4
    static let perOp = 8
  }
}

/// A reader's site model and whether it stands where the writer's did (a layout 3 frame
/// carries how many sites the writer's model had coded: 0 when it started over there).
package struct SiteSync: Sendable, Equatable {
  var model = SiteModel()
  /// The segment the model stands in.
  package internal(set) var segment: UInt64 = 0
  /// Whether the frames read so far give the writer's model (else sites are lost until
  /// the writer starts its model over).
  package var live = false
  /// Whether sites are read at all: a reader that wants states only (a fold for `show
  /// --json`, an index build) skips them, and their events come without sites.
  package var enabled = true

  package init() {}

  /// Takes a layout 3 frame of segment `segment` whose writer had coded `siteRun` sites.
  mutating func begin(segment: UInt64, siteRun: Int) {
    if !enabled {
      live = false
    } else if siteRun == 0 {
      model.removeAll()
      self.segment = segment
      live = true
    } else if live && segment == self.segment && model.coded == siteRun && !model.isFull {
      return
    } else if let before, before.coded == siteRun, segment == self.segment {
      // The frame whose definitions were read last, now read for its events.
      model = before
      live = true
    } else {
      live = false
    }
  }

  /// The model as the last frame read for its definitions alone began (a reader of
  /// definitions reads the frame holding its last event whole, then decodes it again).
  private var before: SiteModel?

  /// Keeps the model as it stands at a frame's start, for that frame to be read again.
  mutating func keepBefore() { before = live ? model : nil }

  /// Forgets the model: the frames before the next one were not read.
  mutating func forget() {
    live = false
    before = nil
  }
}

/// What bounds a frame's site entries: the entries defined before it and in it.
struct SiteFrame {
  var entries: Int
}

/// The model's contexts (op and site before, as one key) and the list each one has: an
/// open-addressed table of linear probes, so that finding an event's context costs a
/// multiply and a probe or two rather than a hash of its bytes. Keys are kept in the order
/// they came too (the lists' order), which is what two tables are compared by.
private struct ContextTable: Sendable, Equatable {
  /// Keys in the order they came: key `keys[i]` names list `i`.
  private(set) var keys: [UInt64] = []
  /// A power of two of slots, at most half full, each a key and its list number plus one
  /// (0: empty), side by side so that a probe reads one place.
  private var slots: [(key: UInt64, list: Int32)] = []

  static func == (a: ContextTable, b: ContextTable) -> Bool { a.keys == b.keys }

  var heldBytes: Int { keys.capacity &* 8 &+ slots.capacity &* 16 }

  /// The list of `key`, or `next` (the number of lists so far) after adding it.
  mutating func findOrAdd(_ key: UInt64, _ next: Int32) -> Int {
    if keys.count &* 2 >= slots.count { grow() }
    let mask = slots.count &- 1
    var h = Self.slot(key, mask)
    while true {
      let s = slots[h]
      if s.list == 0 {
        slots[h] = (key, next &+ 1)
        keys.append(key)
        return Int(next)
      }
      if s.key == key { return Int(s.list) &- 1 }
      h = (h &+ 1) & mask
    }
  }

  /// A key's first slot: Fibonacci hashing of its bits (the op in the high half, the site
  /// below), whose top bits spread sites that differ in their low ones.
  private static func slot(_ key: UInt64, _ mask: Int) -> Int {
    Int(truncatingIfNeeded: (key &* 0x9E37_79B9_7F4A_7C15) >> 40) & mask
  }

  /// Twice the slots (at least 64), every key placed again.
  private mutating func grow() {
    let count = Swift.max(64, slots.count &* 2)
    slots = Array(repeating: (0, 0), count: count)
    let mask = count &- 1
    for (i, key) in keys.enumerated() {
      var h = Self.slot(key, mask)
      while slots[h].list != 0 { h = (h &+ 1) & mask }
      slots[h] = (key, Int32(truncatingIfNeeded: i) &+ 1)
    }
  }
}

/// Every context's sites, each list most counted first (ties: the earlier first), all in
/// one pool: a copy of the model (an index build takes one at each frame's end) is a few
/// flat arrays rather than an array per context, and a hit reads one place.
private struct ContextSites: Sendable, Equatable {
  struct Site: Sendable, Equatable {
    var entry: Int32
    var uses: UInt32
  }
  /// Where list `i` lives in `pool`: its first place, length and room.
  private struct Head: Sendable {
    var start: Int32
    var count: Int32
    var room: Int32
  }
  private var heads: [Head] = []
  /// The lists' places; a list that outgrows its room moves to the end (room doubled, up to
  /// the list bound), so the pool holds at most about twice its lists' room.
  private var pool: [Site] = []

  /// Lists (contexts).
  var count: Int { heads.count }

  var heldBytes: Int { heads.capacity &* 12 &+ pool.capacity &* 8 }

  static func == (a: ContextSites, b: ContextSites) -> Bool {
    a.count == b.count && (0..<a.count).allSatisfy { a.sites(of: $0) == b.sites(of: $0) }
  }

  /// A new, empty list.
  mutating func append() { heads.append(Head(start: 0, count: 0, room: 0)) }

  /// A new list of `sites` (a stored model's), within the list bound.
  mutating func append(_ sites: [Site]) {
    heads.append(
      Head(
        start: Int32(truncatingIfNeeded: pool.count), count: Int32(truncatingIfNeeded: sites.count),
        room: Int32(truncatingIfNeeded: sites.count)))
    pool.append(contentsOf: sites)
  }

  func length(of list: Int) -> Int { Int(heads[list].count) }

  func sites(of list: Int) -> ArraySlice<Site> {
    let h = heads[list]
    return pool[Int(h.start)..<Int(h.start &+ h.count)]
  }

  /// Site `k` of `list`.
  func entry(_ list: Int, _ k: Int) -> Int32 { pool[Int(heads[list].start) &+ k].entry }

  func rank(of entry: Int32, in list: Int) -> Int? {
    let h = heads[list]
    return pool.withUnsafeBufferPointer { p in
      var k = 0
      while k < Int(h.count) {
        if p[Int(h.start) &+ k].entry == entry { return k }
        k &+= 1
      }
      return nil
    }
  }

  /// Counts a use of site `k` of `list` and moves it before the sites now counted less.
  mutating func count(_ list: Int, at k: Int) {
    let h = heads[list]
    pool.withUnsafeMutableBufferPointer { p in
      let s = UnsafeMutableBufferPointer(rebasing: p[Int(h.start)..<Int(h.start &+ h.count)])
      s[k].uses &+= 1
      if s[k].uses == UInt32.max >> 1 {
        for i in s.indices { s[i].uses = s[i].uses >> 1 | 1 }
      }
      let moved = s[k]
      var i = k
      while i > 0 && s[i &- 1].uses < moved.uses {
        s[i] = s[i &- 1]
        i &-= 1
      }
      s[i] = moved
    }
  }

  /// Adds `entry` with one use to `list`; whether the list grew (else it replaced its last).
  mutating func add(_ entry: Int32, to list: Int) -> Bool {
    var h = heads[list]
    if Int(h.count) >= SiteModel.listLimit {
      pool[Int(h.start &+ h.count) &- 1] = Site(entry: entry, uses: 0)
      count(list, at: Int(h.count) &- 1)
      return false
    }
    if h.count == h.room {
      let room = Swift.min(SiteModel.listLimit, Swift.max(2, Int(h.room) &* 2))
      let start = pool.count
      pool.append(contentsOf: repeatElement(Site(entry: 0, uses: 0), count: room))
      pool.withUnsafeMutableBufferPointer { p in
        for k in 0..<Int(h.count) { p[start &+ k] = p[Int(h.start) &+ k] }
      }
      h.start = Int32(truncatingIfNeeded: start)
      h.room = Int32(truncatingIfNeeded: room)
    }
    pool[Int(h.start &+ h.count)] = Site(entry: entry, uses: 0)
    h.count &+= 1
    heads[list] = h
    count(list, at: Int(h.count) &- 1)
    return true
  }
}

/// The coder's side of the model's choices: the encoder codes the value it is given, the
/// decoder reads one, and both return what was coded.
private protocol SiteBits {
  mutating func bit(_ value: Bool, _ p: inout UInt16) throws(CodecError) -> Bool
  mutating func direct(_ value: UInt64, width: Int) throws(CodecError) -> UInt64
  func fail(_ message: String) -> CodecError
}

private struct EncodingBits: SiteBits {
  var coder: RangeEncoder

  mutating func bit(_ value: Bool, _ p: inout UInt16) -> Bool {
    coder.encode(value, &p)
    return value
  }

  mutating func direct(_ value: UInt64, width: Int) -> UInt64 {
    coder.encodeDirect(value, width: width)
    return value
  }

  func fail(_ message: String) -> CodecError { CodecError(message, offset: 0) }
}

private struct DecodingBits: SiteBits {
  var coder: RangeDecoder

  mutating func bit(_ value: Bool, _ p: inout UInt16) throws(CodecError) -> Bool {
    try coder.decode(&p)
  }

  mutating func direct(_ value: UInt64, width: Int) throws(CodecError) -> UInt64 {
    try coder.decodeDirect(width: width)
  }

  func fail(_ message: String) -> CodecError { coder.fail(message) }
}

// MARK: - Stored models

extension SiteSync {
  /// The model as an index seek point stores it (nil when this copy is not the writer's):
  /// what a seek from that point reads instead of the segment's frames before it.
  package var stored: [UInt8]? {
    guard live && enabled else { return nil }
    var out = ByteSink()
    out.varint(segment)
    model.store(into: &out)
    return out.bytes
  }

  /// A model read back from `stored` bytes, for a reader standing where it was taken whose
  /// dictionary holds `entries` entries; every part is checked, so damaged bytes are an
  /// error, never a wrong or oversized model.
  package init(stored bytes: UnsafeRawBufferPointer, entries: Int) throws(CodecError) {
    var s = ByteSource(bytes)
    segment = try s.varint()
    model = try SiteModel(from: &s, entries: entries)
    guard s.isAtEnd else { throw s.fail("\(s.remaining) bytes after the site model") }
    live = true
  }
}

extension SiteModel {
  /// Writes the whole model: its count, the site before, each context's list (in the
  /// order contexts were made), each op's recent sites, the probabilities.
  fileprivate func store(into out: inout ByteSink) {
    out.count(coded)
    out.zigzag(Int64(previous))
    out.count(lists.count)
    for (list, key) in contexts.keys.enumerated() {
      out.byte(UInt8(truncatingIfNeeded: key >> 32))
      out.zigzag(Int64(Int32(bitPattern: UInt32(truncatingIfNeeded: key))))
      let sites = lists.sites(of: list)
      out.count(sites.count)
      for site in sites {
        out.count(Int(site.entry))
        out.count(Int(site.uses))
      }
    }
    for r in recent {
      out.count(r.count)
      for e in r { out.count(Int(e)) }
    }
    for p in probabilities {
      out.byte(UInt8(truncatingIfNeeded: p))
      out.byte(UInt8(truncatingIfNeeded: p >> 8))
    }
  }

  /// Reads what `store` wrote, checking every entry below `entries`, every list within
  /// its bound, the model within `limit` and every probability inside the coder's range.
  fileprivate init(from s: inout ByteSource, entries: Int) throws(CodecError) {
    self.init()
    func entry(_ s: inout ByteSource) throws(CodecError) -> Int32 {
      let e = try s.varint()
      guard e < UInt64(entries) else { throw s.fail("site entry \(e) of \(entries)") }
      return Int32(truncatingIfNeeded: e)
    }
    let n = try s.varint()
    guard n <= UInt64(Int.max >> 1) else { throw s.fail("site count \(n) out of range") }
    coded = Int(n)
    let before = try s.zigzag()
    guard before >= -1, before < Int64(entries) else { throw s.fail("site \(before) before") }
    previous = Int32(truncatingIfNeeded: before)
    let count = try s.count(minBytes: 3)
    guard count <= Self.limit else { throw s.fail("\(count) site contexts") }
    for i in 0..<count {
      let op = try s.byte()
      let site = try s.zigzag()
      guard op <= EventCodes.codeMask, site >= -1, site < Int64(entries) else {
        throw s.fail("site context \(op), \(site)")
      }
      let key = UInt64(op) << 32 | UInt64(UInt32(bitPattern: Int32(truncatingIfNeeded: site)))
      guard contexts.findOrAdd(key, Int32(truncatingIfNeeded: i)) == i else {
        throw s.fail("site context \(op), \(site) twice")
      }
      let length = try s.count(minBytes: 2)
      guard length <= Self.listLimit else { throw s.fail("site list of \(length)") }
      var list: [ContextSites.Site] = []
      for _ in 0..<length {
        let site = try entry(&s)
        let uses = try s.varint()
        guard uses >= 1, uses < UInt64(UInt32.max >> 1) else {
          throw s.fail("site used \(uses) times")
        }
        list.append(.init(entry: site, uses: UInt32(uses)))
      }
      lists.append(list)
      size &+= 1 &+ length
      guard size <= Self.limit &+ Self.limit / 2 else { throw s.fail("site model too large") }
    }
    for c in recent.indices {
      let length = try s.count()
      guard length <= Self.listLimit else { throw s.fail("recent sites of \(length)") }
      for _ in 0..<length { recent[c].append(try entry(&s)) }
    }
    for k in probabilities.indices {
      let p = UInt16(try s.byte()) | UInt16(try s.byte()) << 8
      guard p > 0, p < RangeProbability.one else { throw s.fail("site probability \(p)") }
      probabilities[k] = p
    }
  }
}
