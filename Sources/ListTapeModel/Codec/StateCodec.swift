/// The canonical binary form of a `ListState`, used for 1.0 checkpoints and state hashes.
///
/// Layout: version byte, mode byte, section count, then per section its id, item count and
/// items in pre-order (level, flags, id, title?, fields?). Equal states encode to equal
/// bytes whatever their history, so the encoding doubles as a state fingerprint.
extension ListState {
  static let codecVersion: UInt8 = 1

  /// The canonical encoding of the state.
  public func encoded() -> [UInt8] {
    var s = ByteSink()
    s.bytes.reserveCapacity(16 + forest.itemIndex.count * 12)
    s.byte(Self.codecVersion)
    s.byte(allowsMultipleSelection ? 1 : 0)
    s.count(forest.sectionOrder.count)
    for sec in forest.sectionOrder {
      s.string(forest.sections[Int(sec)].id)
      s.count(forest.itemCount(inSection: sec))
      forest.walk(list: forest.sections[Int(sec)].roots, visibleOnly: false) { x, level in
        let c = forest.content[Int(x)]
        s.count(level)
        s.byte(itemFlags(x))
        s.string(c.id)
        if let title = c.title { s.string(title) }
        if let fields = c.fields { s.fields(fields) }
      }
    }
    return s.bytes
  }

  /// An item's flags in both encodings: expanded 1, selected 2, has title 4, has fields 8.
  private func itemFlags(_ x: Handle) -> UInt8 {
    let n = forest.nodes[Int(x)]
    let c = forest.content[Int(x)]
    return (n.expanded ? 1 : 0) | (n.selected ? 2 : 0) | (c.title == nil ? 0 : 4)
      | (c.fields == nil ? 0 : 8)
  }

  /// A 64-bit FNV-1a fingerprint of the canonical encoding: equal states, equal hashes.
  public var stateHash: UInt64 {
    var h: UInt64 = 0xcbf2_9ce4_8422_2325
    for b in encoded() {
      h ^= UInt64(b)
      h = h &* 0x100_0000_01b3
    }
    return h
  }

  /// Rebuilds a state from its canonical encoding, validating structure and identities.
  public init(encoded bytes: UnsafeRawBufferPointer) throws(CodecError) {
    var s = ByteSource(bytes)
    let version = try s.byte()
    guard version == Self.codecVersion else {
      throw CodecError("unknown state encoding version \(version)", offset: 0)
    }
    let mode = try s.byte()
    guard mode <= 1 else { throw s.fail("bad selection mode \(mode)") }
    var items = StateItems()
    let sectionCount = try s.count()
    for _ in 0..<sectionCount {
      let id = try s.identifier()
      let itemCount = try s.count(minBytes: 3)
      items.sections.append((id, itemCount))
      items.reserve(itemCount)
      for _ in 0..<itemCount {
        // A depth, bounded by the items before it when the state is built (no cap here:
        // states deeper than the protocol allows still read back).
        let level = try s.varint()
        guard level <= UInt64(Int32.max) else { throw s.fail("item level \(level)") }
        let flags = try s.byte()
        guard flags <= 15 else { throw s.fail("bad item flags \(flags)") }
        items.levels.append(Int32(level))
        items.flags.append(flags)
        items.ids.append(try s.identifier())
        if flags & 4 != 0 { items.titles.append(try s.string()) }
        if flags & 8 != 0 { items.fields.append(try s.fields()) }
      }
    }
    guard s.isAtEnd else { throw s.fail("\(s.remaining) trailing bytes after the state") }
    try self.init(multipleSelection: mode == 1, items: items)
  }

  /// Rebuilds a state from its canonical encoding.
  public init(encoded bytes: [UInt8]) throws(CodecError) {
    let result: Result<ListState, CodecError> = bytes.withUnsafeBytes { raw in
      Result { () throws(CodecError) in try ListState(encoded: raw) }
    }
    self = try result.get()
  }
}

/// The items of a state in pre-order, column by column: what both checkpoint encodings
/// decode into, and all that `ListState(multipleSelection:items:)` needs to build a state.
struct StateItems {
  /// Sections in order, each with how many of the items below are its own.
  var sections: [(id: String, count: Int)] = []
  /// Per item: its depth (0 for a root), its flags (expanded 1, selected 2, title 4,
  /// fields 8) and its identifier.
  var levels: [Int32] = []
  var flags: [UInt8] = []
  var ids: [String] = []
  /// Titles of the items with flag 4, fields of those with flag 8, in item order.
  var titles: [String] = []
  var fields: [[String: String]] = []

  mutating func reserve(_ n: Int) {
    levels.reserveCapacity(levels.count + n)
    flags.reserveCapacity(flags.count + n)
    ids.reserveCapacity(ids.count + n)
  }
}

extension ListState {
  /// Builds a state from its items in pre-order, validating structure (levels, duplicate
  /// ids, selection rules). Both checkpoint decoders end here.
  init(multipleSelection: Bool, items: StateItems) throws(CodecError) {
    self.init()
    allowsMultipleSelection = multipleSelection
    let total = items.ids.count
    guard items.levels.count == total, items.flags.count == total else {
      throw CodecError("item columns disagree", offset: 0)
    }
    forest.nodes.reserveCapacity(total + total / 2)
    forest.content.reserveCapacity(total + total / 2)
    forest.itemIndex.reserveCapacity(total + total / 2)
    var next = 0
    var titles = 0
    var fields = 0
    for (id, count) in items.sections {
      guard forest.sectionIndex[id] == nil else {
        throw CodecError("duplicate section \"\(id)\"", offset: 0)
      }
      guard count <= total - next else {
        throw CodecError("section \"\(id)\" claims more items than there are", offset: 0)
      }
      let sec = forest.allocateSection(id)
      forest.sectionOrder.append(sec)
      try buildItems(
        items, range: next..<next + count, titles: &titles, fields: &fields, section: sec)
      next += count
    }
    guard next == total, titles == items.titles.count, fields == items.fields.count else {
      throw CodecError("items do not match their sections", offset: 0)
    }
    guard allowsMultipleSelection || forest.selection.count <= 1 else {
      throw CodecError(
        "\(forest.selection.count) items selected in single-selection mode", offset: 0)
    }
  }

  /// Links one section's pre-order items bottom-up, each sibling list in O(k).
  private mutating func buildItems(
    _ items: StateItems, range: Range<Int>, titles: inout Int, fields: inout Int,
    section: Handle
  ) throws(CodecError) {
    // `pending` holds the items whose sibling lists are still open, each list contiguous:
    // the roots from 0, then the children of each open item from `open[d].start`.
    var pending: [Handle] = []
    var open: [(item: Handle, start: Int)] = []
    var selected: [Handle] = []
    func close(to depth: Int) {
      while open.count > depth {
        let (x, start) = open.removeLast()
        if start < pending.count {
          forest.insertList(Array(pending[start...]), parent: x, section: -1, at: nil)
          pending.removeSubrange(start...)
        }
      }
    }
    for i in range {
      // A level is a depth, not an element count: bound it by the open ancestors only.
      let level = Int(items.levels[i])
      guard level >= 0, level <= open.count else {
        throw CodecError(
          "item \(i + 1) at level \(level) skips a level (previous depth \(open.count))", offset: 0)
      }
      let flags = items.flags[i]
      let id = items.ids[i]
      guard let x = forest.allocateFresh(id) else {
        throw CodecError("duplicate item \"\(id)\"", offset: 0)
      }
      close(to: level)
      forest.nodes[Int(x)].expanded = flags & 1 != 0
      if flags & 4 != 0 {
        guard titles < items.titles.count else { throw CodecError("missing title", offset: 0) }
        forest.content[Int(x)].title = items.titles[titles]
        titles += 1
      }
      if flags & 8 != 0 {
        guard fields < items.fields.count else { throw CodecError("missing fields", offset: 0) }
        forest.content[Int(x)].fields = items.fields[fields]
        fields += 1
      }
      if flags & 2 != 0 { selected.append(x) }
      pending.append(x)
      open.append((x, pending.count))
    }
    close(to: 0)
    forest.insertList(pending, parent: -1, section: section, at: nil)
    for x in selected {
      guard forest.isVisible(x) else {
        throw CodecError("selected item \"\(forest.content[Int(x)].id)\" is hidden", offset: 0)
      }
      forest.setSelected(x, true)
    }
  }
}

// MARK: - Format 2.0 checkpoints

/// The compact state of a 2.0 checkpoint: identifiers as numbers into the segment's
/// dictionary, items in pre-order column by column (levels, flags, entry numbers as deltas,
/// strings), so that a state whose items were added in order costs almost nothing beyond
/// its structure, and decoding is one pass over each column.
extension ListState {
  /// The state encoding version of 2.0 checkpoints (1 is `encoded()`).
  public static let compactVersion: UInt8 = 2
  /// Columns after the header: sections, levels, flags, entries, strings.
  private static let compactColumns = 5

  /// Encodes the state for a checkpoint of segment `segment` whose dictionary holds
  /// `dictionaryCount` entries; `number` gives an identifier's entry. Throws when an id has
  /// no entry below `dictionaryCount`.
  public func compactEncoded(
    segment: UInt64, dictionaryCount: Int, number: (String) -> Int?
  ) throws(CodecError) -> (bytes: [UInt8], flushPoints: [Int]) {
    var sections = ByteSink()
    var levels = ByteSink()
    var flags = ByteSink()
    var refs = ByteSink()
    var strings = ByteSink()
    let n = forest.itemIndex.count
    levels.bytes.reserveCapacity(n)
    flags.bytes.reserveCapacity(n)
    refs.bytes.reserveCapacity(n * 2)
    func entry(_ id: String) throws(CodecError) -> Int {
      guard let e = number(id), e < dictionaryCount else {
        throw CodecError("identifier \"\(id)\" has no dictionary entry", offset: 0)
      }
      return e
    }
    var previous = -1
    var failure: CodecError?
    for sec in forest.sectionOrder where failure == nil {
      sections.count(try entry(forest.sections[Int(sec)].id))
      sections.count(forest.itemCount(inSection: sec))
      forest.walk(list: forest.sections[Int(sec)].roots, visibleOnly: false) { x, level in
        guard failure == nil else { return }
        let c = forest.content[Int(x)]
        let e: Int
        do throws(CodecError) { e = try entry(c.id) } catch {
          failure = error
          return
        }
        levels.count(level)
        flags.byte(itemFlags(x))
        refs.zigzag(Int64(e - previous - 1))
        previous = e
        if let title = c.title { strings.string(title) }
        if let fields = c.fields { strings.fields(fields) }
      }
    }
    if let failure { throw failure }
    var out = ByteSink()
    out.byte(Self.compactVersion)
    out.varint(segment)
    out.count(dictionaryCount)
    out.byte(allowsMultipleSelection ? 1 : 0)
    out.count(forest.sectionOrder.count)
    let columns = [sections.bytes, levels.bytes, flags.bytes, refs.bytes, strings.bytes]
    for c in columns { out.count(c.count) }
    var points: [Int] = []
    for c in columns {
      points.append(out.bytes.count)
      out.bytes.append(contentsOf: c)
    }
    return (out.bytes, points)
  }

  /// The segment and dictionary size a compact state was encoded against.
  public static func compactHeader(_ bytes: UnsafeRawBufferPointer) throws(CodecError) -> (
    segment: UInt64, dictionaryCount: Int
  ) {
    var s = ByteSource(bytes)
    let version = try s.byte()
    guard version == compactVersion else {
      throw s.fail("unknown state encoding version \(version)")
    }
    let segment = try s.varint()
    let count = try s.varint()
    guard count <= UInt64(Int32.max) else { throw s.fail("dictionary size \(count)") }
    return (segment, Int(count))
  }

  /// Rebuilds a state from its compact encoding, its identifiers taken from `dictionary`
  /// (which must hold the segment's first `dictionaryCount` entries).
  public init(compact bytes: UnsafeRawBufferPointer, dictionary: inout IdDictionary)
    throws(CodecError)
  {
    var s = ByteSource(bytes)
    let version = try s.byte()
    guard version == Self.compactVersion else {
      throw s.fail("unknown state encoding version \(version)")
    }
    _ = try s.varint()
    let entries = try s.varint()
    guard entries <= UInt64(dictionary.count) else {
      throw s.fail("state needs \(entries) dictionary entries, \(dictionary.count) known")
    }
    let limit = Int(entries)
    let mode = try s.byte()
    guard mode <= 1 else { throw s.fail("bad selection mode \(mode)") }
    let sectionCount = try s.count()
    var columns = try ColumnSplit.split(&s, count: Self.compactColumns)
    guard s.isAtEnd else { throw s.fail("\(s.remaining) bytes after the columns") }
    func entry(_ v: Int64, _ c: ByteSource) throws(CodecError) -> Int {
      guard v >= 0, v < Int64(limit) else { throw c.fail("entry \(v) of \(limit)") }
      return Int(v)
    }
    var items = StateItems()
    var total = 0
    for _ in 0..<sectionCount {
      let e = try entry(Int64(truncatingIfNeeded: try columns[0].varint()), columns[0])
      let count = try columns[0].varint()
      guard count <= UInt64(columns[2].remaining - total) else {
        throw columns[0].fail("section of \(count) items")
      }
      total += Int(count)
      items.sections.append((try dictionary.entry(e), Int(count)))
    }
    items.reserve(total)
    var previous: Int64 = -1
    for _ in 0..<total {
      let level = try columns[1].varint()
      guard level <= UInt64(Int32.max) else {
        throw columns[1].fail("item level \(level)")
      }
      let flags = try columns[2].byte()
      guard flags <= 15 else { throw columns[2].fail("bad item flags \(flags)") }
      let e = previous &+ 1 &+ (try columns[3].zigzag())
      previous = e
      items.levels.append(Int32(level))
      items.flags.append(flags)
      items.ids.append(try dictionary.entry(try entry(e, columns[3])))
      if flags & 4 != 0 { items.titles.append(try columns[4].string()) }
      if flags & 8 != 0 { items.fields.append(try columns[4].fields()) }
    }
    for c in columns where !c.isAtEnd { throw c.fail("\(c.remaining) bytes left after the items") }
    try self.init(multipleSelection: mode == 1, items: items)
  }
}
