/// The canonical binary form of a `ListState`, used for checkpoints and state hashes.
///
/// Layout: version byte, mode byte, section count, then per section its id, item count and
/// items in pre-order (level, flags, id, title?, fields?). Equal states encode to equal
/// bytes whatever their history, so the encoding doubles as a state fingerprint.
extension ListState {
  static let codecVersion: UInt8 = 1

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
    s.bytes.reserveCapacity(16 + forest.itemIndex.count * 12)
    s.byte(Self.codecVersion)
    s.byte(allowsMultipleSelection ? 1 : 0)
    s.count(forest.sectionOrder.count)
    for sec in forest.sectionOrder {
      s.string(forest.sections[Int(sec)].id)
      s.count(forest.itemCount(inSection: sec))
      forest.walk(list: forest.sections[Int(sec)].roots, visibleOnly: false) { x, level in
        let n = forest.nodes[Int(x)]
        let c = forest.content[Int(x)]
        s.count(level)
        let flags: UInt8 =
          (n.expanded ? ItemFlag.expanded : 0) | (n.selected ? ItemFlag.selected : 0)
          | (c.title == nil ? 0 : ItemFlag.title) | (c.fields == nil ? 0 : ItemFlag.fields)
        s.byte(flags)
        forest.withID(of: x) { id in
          s.count(id.count)
          s.bytes.append(contentsOf: id)
        }
        if let title = c.title { s.string(title) }
        if let fields = c.fields { EventEncoder.fields(fields, &s) }
      }
    }
    return s.bytes
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
    /// Runs a builder step; its failure is reported at `offset` (where the entry began).
    func build(at offset: Int, _ body: () throws(ListStateBuilder.Failure) -> Void)
      throws(CodecError)
    {
      do {
        try body()
      } catch {
        throw CodecError(error.description, offset: offset)
      }
    }
    let sectionCount = try s.count()
    for _ in 0..<sectionCount {
      let start = s.offset
      let id = try s.identifier()
      try build(at: start) { () throws(ListStateBuilder.Failure) in try builder.beginSection(id) }
      let itemCount = try s.count(minBytes: 3)
      // Grow the tables once, not by doubling while 100k items arrive; but a claimed count
      // reserves no more than that, since its items may never come (hostile checkpoints).
      builder.reserve(items: min(itemCount, 1 << 17), idBytes: min(s.remaining, 1 << 22))
      for _ in 0..<itemCount {
        // A level is a depth, not an element count: the builder bounds it.
        let start = s.offset
        let level = try s.varint()
        let flags = try s.byte()
        guard flags <= 15 else { throw s.fail("bad item flags \(flags)") }
        let n = try s.count()
        let id = UnsafeBufferPointer(
          start: s.base.baseAddress.map { ($0 + s.offset).assumingMemoryBound(to: UInt8.self) },
          count: n)
        s.offset += n
        let title = flags & 4 != 0 ? try s.string() : nil
        let fields = flags & 8 != 0 ? try EventDecoder.fields(&s) : nil
        do {
          try builder.appendItem(
            level: level > UInt64(Int.max) ? Int.max : Int(level), id: id,
            expanded: flags & 1 != 0, selected: flags & 2 != 0, title: title, fields: fields)
        } catch {
          throw CodecError(error.description, offset: start)
        }
      }
    }
    guard s.isAtEnd else { throw s.fail("\(s.remaining) trailing bytes after the state") }
    var built = ListState()
    try build(at: s.offset) { () throws(ListStateBuilder.Failure) in built = try builder.finish() }
    self = built
  }

  /// Rebuilds a state from its canonical encoding.
  package init(encoded bytes: [UInt8]) throws(CodecError) {
    let result: Result<ListState, CodecError> = bytes.withUnsafeBytes { raw in
      Result { () throws(CodecError) in try ListState(encoded: raw) }
    }
    self = try result.get()
  }
}
