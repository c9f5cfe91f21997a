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
        s.string(c.id)
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
    self.init()
    let version = try s.byte()
    guard version == Self.codecVersion else {
      throw CodecError("unknown state encoding version \(version)", offset: 0)
    }
    let mode = try s.byte()
    guard mode <= 1 else { throw s.fail("bad selection mode \(mode)") }
    allowsMultipleSelection = mode == 1
    let sectionCount = try s.count()
    for _ in 0..<sectionCount {
      let id = try s.identifier()
      guard forest.sectionIndex[id] == nil else { throw s.fail("duplicate section \"\(id)\"") }
      let sec = forest.allocateSection(id)
      forest.sectionOrder.append(sec)
      let itemCount = try s.count(minBytes: 3)
      // Grow the tables once, not by doubling while 100k items arrive; but a claimed count
      // reserves no more than that, since its items may never come (hostile checkpoints).
      let needed = forest.nodes.count + min(itemCount, 1 << 17)
      if forest.nodes.capacity < needed {
        forest.nodes.reserveCapacity(needed + needed / 2)
        forest.content.reserveCapacity(needed + needed / 2)
      }
      if forest.itemIndex.capacity < needed {
        forest.itemIndex.reserveCapacity(needed + needed / 2)
      }
      try decodeItems(&s, count: itemCount, section: sec)
    }
    guard s.isAtEnd else { throw s.fail("\(s.remaining) trailing bytes after the state") }
    guard allowsMultipleSelection || forest.selection.count <= 1 else {
      throw s.fail("\(forest.selection.count) items selected in single-selection mode")
    }
  }

  /// Reads `count` pre-order items and links them bottom-up, each sibling list in O(k).
  private mutating func decodeItems(
    _ s: inout ByteSource, count: Int, section: Handle
  ) throws(CodecError) {
    precondition(forest.journal == nil && forest.freeNodes.isEmpty)
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
    for _ in 0..<count {
      // A level is a depth, not an element count: bound it by the open ancestors only.
      let rawLevel = try s.varint()
      guard rawLevel <= UInt64(open.count) else {
        throw s.fail("item level \(rawLevel) skips a level (previous depth \(open.count))")
      }
      let level = Int(rawLevel)
      let flags = try s.byte()
      guard flags <= ItemFlag.all else { throw s.fail("bad item flags \(flags)") }
      let id = try s.identifier()
      guard let x = forest.allocateFresh(id) else { throw s.fail("duplicate item \"\(id)\"") }
      close(to: level)
      forest.nodes[Int(x)].expanded = flags & ItemFlag.expanded != 0
      if flags & ItemFlag.title != 0 { forest.content[Int(x)].title = try s.string() }
      if flags & ItemFlag.fields != 0 {
        forest.content[Int(x)].fields = try EventDecoder.fields(&s)
      }
      if flags & ItemFlag.selected != 0 { selected.append(x) }
      pending.append(x)
      open.append((x, pending.count))
    }
    close(to: 0)
    forest.insertList(pending, parent: -1, section: section, at: nil)
    for x in selected {
      guard forest.isVisible(x) else {
        throw s.fail("selected item \"\(forest.content[Int(x)].id)\" is hidden")
      }
      forest.setSelected(x, true)
    }
  }

  /// Rebuilds a state from its canonical encoding.
  package init(encoded bytes: [UInt8]) throws(CodecError) {
    let result: Result<ListState, CodecError> = bytes.withUnsafeBytes { raw in
      Result { () throws(CodecError) in try ListState(encoded: raw) }
    }
    self = try result.get()
  }
}
