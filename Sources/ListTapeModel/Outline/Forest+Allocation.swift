/// Where nodes, blocks and sections come from and go: free lists (recycled only once a
/// batch commits), the entry maps, and the reclaiming of unused text and ids.
extension Forest {
  /// The handle the next new node gets: a free one outside batches (which recycle only once
  /// they commit), else a new one at the end.
  @inline(__always) var nextNodeHandle: Handle {
    if !inBatch, let free = freeNodes.last { return free }
    return Handle(nodes.count)
  }

  /// Makes room for `n` new nodes when they are many (one event may build a 50,000-item
  /// outline, and the events after it add more): the node arrays and the entry map grow
  /// once, to the power of two doubling would reach for twice the build, instead of
  /// doubling their way there, each doubling a copy and fresh pages that a new process
  /// faults in one by one. Room not yet used is not touched, so costs no page.
  mutating func makeRoom(forNodes n: Int) {
    guard n >= Self.roomFrom else { return }
    let need = nodes.count &+ max(0, n &- freeNodes.count)
    if need > nodes.capacity {
      let room = Int.powerOfTwo(atLeast: need &+ n)
      nodes.reserveCapacity(room)
      entryOf.reserveCapacity(room)
      content.reserveCapacity(room)
    }
    let entries = ids.count &+ n
    if entries > handleOf.capacity { handleOf.reserveCapacity(Int.powerOfTwo(atLeast: entries)) }
  }

  /// Fewer new nodes than this grow the arrays as appends do.
  static let roomFrom = 4096

  /// Stores new node `x` (which `nextNodeHandle` gave) with its id's entry and content,
  /// taking it off the free list or appending it. The entry map is the caller's business.
  @inline(__always) mutating func store(_ x: Handle, _ node: Node, entry e: Int32, _ c: ContentRef)
  {
    if Int(x) == nodes.count {
      nodes.append(node)
      entryOf.append(e)
      content.append(c)
    } else {
      freeNodes.removeLast()
      nodes[Int(x)] = node
      entryOf[Int(x)] = e
      content[Int(x)] = c
    }
    itemCount &+= 1
    if node.selected { selectedCount &+= 1 }
  }

  /// Unregisters and frees a node already detached from every list.
  mutating func release(_ x: Handle) {
    unregisterItem(x)
    if nodes[Int(x)].selected { selectedCount &-= 1 }
    itemCount &-= 1
    edit(x) {
      $0.live = false
      $0.selected = false
      $0.children = -1
    }
    if !content[Int(x)].isNone {
      textGarbage &+= Int(content[Int(x)].length)
      editContent(x) { $0 = .none }
    }
    if inBatch {
      journal?.pendingFreeNodes.append(x)
    } else {
      freeNodes.append(x)
    }
  }

  /// A fresh, empty block.
  mutating func allocateBlock(leaf: Bool) -> Handle {
    if !inBatch, let free = freeBlocks.popLast() {
      blocks[Int(free)] = Block(leaf: leaf)
      return free
    }
    blocks.append(Block(leaf: leaf))
    // A load grows the slots once for all its blocks (`Forest.linkLists`).
    let need = blocks.count &* BlockLayout.stride
    if slots.count < need { slots.append(contentsOf: repeatElement(0, count: need &- slots.count)) }
    return Handle(blocks.count - 1)
  }

  mutating func releaseBlock(_ b: Handle) {
    editBlock(b) {
      $0.live = false
      $0.count = 0
    }
    if inBatch {
      journal?.pendingFreeBlocks.append(b)
    } else {
      freeBlocks.append(b)
    }
  }

  /// Frees every block of a list's B-tree (the items are the caller's business).
  mutating func releaseBlocks(ofList root: Handle) {
    var all: [Handle] = []
    forEachBlock(root) { all.append($0) }
    for b in all { releaseBlock(b) }
  }

  /// A new section for the id of entry `e`, or nil when a live section has it.
  mutating func allocateSection(entry e: Int32) -> Handle? {
    guard section(entry: e) < 0 else { return nil }
    let s = !inBatch ? freeSections.last ?? Handle(sections.count) : Handle(sections.count)
    let slot = SectionSlot(entry: e)
    if Int(s) == sections.count {
      sections.append(slot)
    } else {
      freeSections.removeLast()
      sections[Int(s)] = slot
    }
    mapSection(e, to: s)
    return s
  }

  mutating func releaseSection(_ s: Handle) {
    let e = sections[Int(s)].entry
    if section(entry: e) == s { mapSection(e, to: -1) }
    editSection(s) {
      $0.live = false
      $0.roots = -1
    }
    if inBatch {
      journal?.pendingFreeSections.append(s)
    } else {
      freeSections.append(s)
    }
  }

  /// Reclaims text no item uses when it is over half the arena, and (for a space of its
  /// own, not a log's dictionary) renumbers the ids when dead entries outnumber the live
  /// ones; never inside a batch, whose journal still refers to both.
  mutating func compactIfNeeded() {
    guard !inBatch else { return }
    if textGarbage > 4096 && textGarbage &* 2 > text.count { compactText() }
    let live = itemCount &+ sectionOrder.count
    if !idsFollowLog && ids.count &- live > live &+ Self.idSlack { compactIDs() }
  }

  /// Dead ids a state of its own keeps before it renumbers (as a log's recorder restarts
  /// its dictionary).
  static let idSlack = 4_096

  /// Renumbers the ids to the live ones, sections first, then items by handle: O(live),
  /// paid for by the dead ids it drops. The string table is built again on next use.
  mutating func compactIDs() {
    var fresh = IdSpace()
    var newSectionOf: [Handle] = []
    var newHandleOf: [Handle] = []
    for s in sectionOrder {
      let e = sections[Int(s)].entry
      let n = ids.withStored(Int(e)) { fresh.append(stored: $0) }
      sections[Int(s)].entry = n
      newSectionOf.append(s)
      newHandleOf.append(-1)
    }
    for x in nodes.indices where nodes[x].live {
      let n = ids.withStored(Int(entryOf[x])) { fresh.append(stored: $0) }
      entryOf[x] = n
      newHandleOf.append(Handle(truncatingIfNeeded: x))
      newSectionOf.append(-1)
    }
    _ = fresh.ensureLineage()
    ids = fresh
    handleOf = newHandleOf
    sectionOf = newSectionOf
  }

  /// Copies the live items' text to a fresh arena.
  mutating func compactText() {
    var fresh: [UInt8] = []
    fresh.reserveCapacity(text.count &- textGarbage)
    for x in nodes.indices where nodes[x].live && !content[x].isNone {
      let c = content[x]
      let start = fresh.count
      fresh.append(contentsOf: text[Int(c.offset)..<Int(c.offset) &+ Int(c.length)])
      content[x].offset = UInt32(truncatingIfNeeded: start)
    }
    text = fresh
    textGarbage = 0
  }
}

extension Int {
  /// The least power of two at least `n` (1 for `n` ≤ 1): the sizes arrays and tables grow to.
  static func powerOfTwo(atLeast n: Int) -> Int {
    var p = 1
    while p < n { p &<<= 1 }
    return p
  }
}
