/// The canonical binary form of a `ListState`, used for 1.0 checkpoints and state hashes.
///
/// Layout: version byte, mode byte, section count, then per section its id, item count and
/// items in pre-order (level, flags, id, title?, fields?). Equal states encode to equal
/// bytes whatever their history, so the encoding doubles as a state fingerprint.
extension ListState {
  static let codecVersion: UInt8 = 1
  /// Items a decoder reserves room for before they arrive: a claimed count reserves no
  /// more, since a hostile checkpoint's items may never come (64 MiB of zeros claiming 22M
  /// items would otherwise touch 1.6 GB of tables).
  static let maxReserved = 1 << 17

  /// The bits of an item's flags byte.
  enum ItemFlag {
    static let expanded: UInt8 = 1
    static let selected: UInt8 = 2
    static let title: UInt8 = 4
    static let fields: UInt8 = 8
    static let all: UInt8 = 15
  }

  /// The canonical encoding of the state.
  package func encoded() -> [UInt8] {
    var s = ByteSink()
    s.bytes.reserveCapacity(16 + forest.itemCount * 12)
    s.byte(Self.codecVersion)
    s.byte(allowsMultipleSelection ? 1 : 0)
    s.count(forest.sectionOrder.count)
    for sec in forest.sectionOrder {
      s.string(forest.sectionID(sec))
      s.count(forest.itemCount(inSection: sec))
      forest.walk(list: forest.sections[Int(sec)].roots, visibleOnly: false) { x, level in
        s.count(level)
        s.byte(itemFlags(x))
        forest.withID(of: x) { id in
          s.count(id.count)
          s.bytes.append(contentsOf: id)
        }
        appendText(x, to: &s.bytes)
      }
    }
    return s.bytes
  }

  /// Item `x`'s flags byte (`ItemFlag`), as both encodings write it.
  private func itemFlags(_ x: Handle) -> UInt8 {
    Self.itemFlags(forest.nodes[Int(x)], text: forest.withContent(x) { $0.first ?? 0 })
  }

  /// The flags byte of an item whose node is `n` and whose text blob starts with `text`
  /// (its `ItemText` flags; 0 without text).
  @inline(__always) static func itemFlags(_ n: Node, text: UInt8) -> UInt8 {
    (n.expanded ? ItemFlag.expanded : 0) | (n.selected ? ItemFlag.selected : 0)
      | textFlags(text)
  }

  /// The flags byte's title and fields bits of an item whose text blob starts with `text`.
  @inline(__always) static func textFlags(_ text: UInt8) -> UInt8 {
    (text & ItemText.hasTitle != 0 ? ItemFlag.title : 0)
      | (text & ItemText.hasFields != 0 ? ItemFlag.fields : 0)
  }

  /// Appends item `x`'s title and fields as both encodings hold them: its text blob after
  /// the flags byte.
  private func appendText(_ x: Handle, to out: inout [UInt8]) {
    forest.withContent(x) { blob in
      if blob.count > 1 { out.append(contentsOf: blob[1...]) }
    }
  }

  /// A 64-bit FNV-1a fingerprint of the canonical encoding: equal states, equal hashes.
  package var stateHash: UInt64 {
    var h: UInt64 = 0xcbf2_9ce4_8422_2325
    for b in encoded() {
      h ^= UInt64(b)
      h = h &* 0x100_0000_01b3
    }
    return h
  }

  /// Rebuilds a state from its canonical encoding, validating structure and identities.
  package init(encoded bytes: UnsafeRawBufferPointer) throws(CodecError) {
    var s = ByteSource(bytes)
    let version = try s.byte()
    guard version == Self.codecVersion else {
      throw CodecError("unknown state encoding version \(version)", offset: 0)
    }
    let mode = try s.byte()
    guard mode <= 1 else { throw s.fail("bad selection mode \(mode)") }
    var builder = ListStateBuilder(allowsMultipleSelection: mode == 1)
    let sectionCount = try s.count()
    for _ in 0..<sectionCount {
      let start = s.offset
      let id = try s.identifier()
      try ListStateBuilder.step(at: start) { () throws(ListStateBuilder.Failure) in
        try builder.beginSection(id)
      }
      let itemCount = try s.count(minBytes: 3)
      // Grow the tables once, not by doubling while 100k items arrive.
      builder.reserve(items: min(itemCount, Self.maxReserved))
      for _ in 0..<itemCount {
        // A level is a depth, not an element count: the builder bounds it.
        let start = s.offset
        let level = try s.varint()
        let flags = try s.byte()
        guard flags <= ItemFlag.all else { throw s.fail("bad item flags \(flags)") }
        let n = try s.count()
        let id = UnsafeBufferPointer(
          start: s.base.baseAddress.map { ($0 + s.offset).assumingMemoryBound(to: UInt8.self) },
          count: n)
        s.offset += n
        let title = flags & ItemFlag.title != 0 ? try s.string() : nil
        let fields = flags & ItemFlag.fields != 0 ? try s.fields() : nil
        try ListStateBuilder.step(at: start) { () throws(ListStateBuilder.Failure) in
          try builder.appendItem(
            level: level > UInt64(Int.max) ? Int.max : Int(level), id: id,
            expanded: flags & ItemFlag.expanded != 0, selected: flags & ItemFlag.selected != 0,
            title: title, fields: fields)
        }
      }
    }
    guard s.isAtEnd else { throw s.fail("\(s.remaining) trailing bytes after the state") }
    self = try builder.finish(at: s.offset)
  }

  /// Rebuilds a state from its canonical encoding.
  package init(encoded bytes: [UInt8]) throws(CodecError) {
    let result: Result<ListState, CodecError> = bytes.withUnsafeBytes { raw in
      Result { () throws(CodecError) in try ListState(encoded: raw) }
    }
    self = try result.get()
  }
}

extension ListStateBuilder {
  /// Runs a builder step; its failure is reported at `offset` (where the entry began).
  fileprivate static func step(at offset: Int, _ body: () throws(Failure) -> Void)
    throws(CodecError)
  {
    do {
      try body()
    } catch {
      throw CodecError(error.description, offset: offset)
    }
  }

  /// The state built, or the builder's failure reported at `offset`.
  fileprivate mutating func finish(at offset: Int) throws(CodecError) -> ListState {
    do {
      return try finish()
    } catch {
      throw CodecError(error.description, offset: offset)
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
  package static let compactVersion: UInt8 = 2
  /// Columns after the header: sections, levels, flags, entries, strings.
  private static let compactColumns = 5

  /// Encodes the state for a checkpoint of segment `segment` whose dictionary holds
  /// `dictionaryCount` entries: with `table`, the writer's numbering of that dictionary, each
  /// id is looked up there; without, the state's ids are that dictionary (a fold of the
  /// log's records) and its entries are written as they are. Throws when an id has no entry
  /// below `dictionaryCount`.
  package func compactEncoded(segment: UInt64, dictionaryCount: Int, table: IdTable? = nil)
    throws(CodecError) -> (bytes: [UInt8], flushPoints: [Int])
  {
    let ids = forest.ids
    func missing(_ e: Int32) -> CodecError {
      CodecError("identifier \"\(ids.text(Int(e)))\" has no dictionary entry", offset: 0)
    }
    let source = CompactSource(self, copying: false)
    guard let table else {
      return try source.encoded(segment: segment, dictionaryCount: dictionaryCount, missing)
    }
    return try source.encoded(segment: segment, dictionaryCount: dictionaryCount) {
      e throws(CodecError) in
      guard let n = ids.withText(Int(e), { table.number(ofBytes: $0) }), n < dictionaryCount
      else { throw missing(e) }
      return n
    }
  }

  /// Lays out a compact state: its header, then its columns. Returns the bytes and where
  /// each column starts.
  static func compactLayout(
    segment: UInt64, dictionaryCount: Int, allowsMultipleSelection: Bool, sectionCount: Int,
    columns: [[UInt8]]
  ) -> (bytes: [UInt8], flushPoints: [Int]) {
    var out = ByteSink()
    out.byte(compactVersion)
    out.varint(segment)
    out.count(dictionaryCount)
    out.byte(allowsMultipleSelection ? 1 : 0)
    out.count(sectionCount)
    for c in columns { out.count(c.count) }
    out.bytes.reserveCapacity(out.bytes.count + columns.reduce(0) { $0 + $1.count })
    var points: [Int] = []
    for c in columns {
      points.append(out.bytes.count)
      out.bytes.append(contentsOf: c)
    }
    return (out.bytes, points)
  }

  /// The segment and dictionary size a compact state was encoded against.
  package static func compactHeader(_ bytes: UnsafeRawBufferPointer) throws(CodecError) -> (
    segment: UInt64, dictionaryCount: Int
  ) {
    var s = ByteSource(bytes)
    return try compactStart(&s)
  }

  /// Reads a compact state's version (which must be this one's), segment and dictionary
  /// size from `s`: the start every reader of the layout checks the same way.
  private static func compactStart(_ s: inout ByteSource) throws(CodecError) -> (
    segment: UInt64, dictionaryCount: Int
  ) {
    let version = try s.byte()
    guard version == compactVersion else {
      throw s.fail("unknown state encoding version \(version)")
    }
    let segment = try s.varint()
    let count = try s.varint()
    guard count <= UInt64(Int32.max) else { throw s.fail("dictionary size \(count)") }
    return (segment, Int(count))
  }

  /// Builds a state from its compact encoding whose items and sections are entries of
  /// `ids` (the segment's dictionary, which must hold its first `dictionaryCount` entries;
  /// `aliases` reads a repeated entry as the one it repeats), through the same checks as
  /// canonical states (levels, nesting limit, duplicates, selection rules). The state's ids
  /// are `ids`, so a fold of the log's records goes on from it. - Complexity: O(items), no
  /// hashing and no `String` per item.
  package init(compact bytes: UnsafeRawBufferPointer, ids: IdSpace, aliases: DefinitionAliases)
    throws(CodecError)
  {
    try self.init(compact: bytes, ids: CompactIDs(ids), aliases: aliases)
  }

  /// `init(compact:ids:aliases:)` with a dictionary that may still be decoding (`ids`):
  /// the items are read meanwhile, and the dictionary is awaited at the end.
  package init(
    compact bytes: UnsafeRawBufferPointer, ids: CompactIDs, aliases: DefinitionAliases
  ) throws(CodecError) {
    try self.init(compact: bytes, lastColumn: nil, ids: ids, aliases: aliases)
  }

  /// `init(compact:ids:aliases:)` with the state in two parts: `head`, all of it before its
  /// last column, and that column (`strings`, its titles and fields), which may still be
  /// inflating: the structure and entries are read meanwhile. The same checks and messages
  /// as the state in one piece (offsets in the last column count from `head`'s end); a head
  /// that does not end where the last column starts is joined to it first.
  package init(
    compact head: UnsafeRawBufferPointer, strings: CompactStrings, ids: CompactIDs,
    aliases: DefinitionAliases
  ) throws(CodecError) {
    guard Self.endsBeforeLastColumn(head, lastColumn: strings.count) else {
      guard let tail = strings.bytes() else {
        throw CodecError("the state's last column did not inflate", offset: head.count)
      }
      var whole = [UInt8](head)
      whole.append(contentsOf: tail)
      self = try whole.withUnsafeBytes { whole in
        Result { () throws(CodecError) in
          try ListState(compact: whole, lastColumn: nil, ids: ids, aliases: aliases)
        }
      }.get()
      return
    }
    try self.init(compact: head, lastColumn: strings, ids: ids, aliases: aliases)
  }

  /// Whether a compact state's first part `head` holds its header and every column but the
  /// last, exactly, and the header gives the last `lastColumn` bytes: then it reads as the
  /// whole would, every check in the header passing on the head alone.
  private static func endsBeforeLastColumn(_ head: UnsafeRawBufferPointer, lastColumn: Int)
    -> Bool
  {
    guard let c = compactColumnSizes(head) else { return false }
    return c.last == lastColumn && c.before == head.count - c.headerEnd
  }

  /// Where a compact state's header ends and how many bytes its columns take, the last one
  /// apart, by the lengths the header gives; nil when the header does not read that far.
  static func compactColumnSizes(_ bytes: UnsafeRawBufferPointer) -> (
    headerEnd: Int, before: Int, last: Int
  )? {
    var s = ByteSource(bytes)
    do throws(CodecError) {
      _ = try compactStart(&s)
      _ = try s.byte()
      _ = try s.count(minBytes: 2)
      var before = 0
      for i in 0..<compactColumns {
        let n = try s.varint()
        guard n <= UInt64(Int32.max) else { return nil }
        if i < compactColumns - 1 {
          before += Int(n)
        } else {
          return (s.offset, before, Int(n))
        }
      }
    } catch {
      return nil
    }
    return nil
  }

  /// The body of both: `strings`, when given, is the last column, `bytes` all before it.
  private init(
    compact bytes: UnsafeRawBufferPointer, lastColumn strings: CompactStrings?, ids: CompactIDs,
    aliases: DefinitionAliases
  ) throws(CodecError) {
    var s = ByteSource(bytes)
    let limit = try Self.compactStart(&s).dictionaryCount
    guard limit <= ids.count else {
      throw s.fail("state needs \(limit) dictionary entries, \(ids.count) known")
    }
    let mode = try s.byte()
    guard mode <= 1 else { throw s.fail("bad selection mode \(mode)") }
    // Each section takes at least two bytes of its column: bounded before anything is kept.
    let sectionCount = try s.count(minBytes: 2)
    var columns = try ColumnSplit.split(
      &s, count: Self.compactColumns, through: strings == nil ? nil : Self.compactColumns - 2)
    guard s.isAtEnd else { throw s.fail("\(s.remaining) bytes after the columns") }
    // Sections first (entry, item count): every item has one byte in the flags column, so
    // the total is bounded by that column before the tables grow for it.
    var sections: [CompactSection] = []
    var total = 0
    for _ in 0..<sectionCount {
      let at = columns[0].origin + columns[0].offset
      let e = try Self.compactEntry(
        Int64(truncatingIfNeeded: try columns[0].varint()), in: columns[0], limit: limit,
        aliases: aliases, ids: ids.holeFree ? nil : try ids.space())
      let count = try columns[0].varint()
      guard count <= UInt64(columns[2].remaining - total) else {
        throw columns[0].fail("section of \(count) items")
      }
      total += Int(count)
      sections.append(CompactSection(entry: e, count: Int(count), offset: at))
    }
    guard columns[0].isAtEnd else {
      throw columns[0].fail("\(columns[0].remaining) bytes left after the sections")
    }
    self = try Self.loadCompact(
      sections, total: total, columns: &columns,
      strings: strings.map { ($0, bytes.count) }, limit: limit, ids: ids, aliases: aliases,
      allowsMultipleSelection: mode == 1, end: bytes.count + (strings?.count ?? 0))
  }
}
