/// How many nodes, blocks, entry slots and sections existed when the open batch began (0
/// outside a batch): writes below these are journalled, writes above them are new.
struct JournalMarks {
  var nodes = 0
  var blocks = 0
  var slots = 0
  var sections = 0
}

/// What a batch overwrote, so that a fault can put everything back.
struct Journal {
  var nodeCount: Int
  var sectionCount: Int
  var blockCount: Int
  var nodes: [(Handle, Node)] = []
  var blocks: [(Handle, Block)] = []
  var slots: [(Int, Int32)] = []
  var content: [(Handle, ItemContent)] = []
  var sections: [(Handle, SectionSlot)] = []
  /// Index entries as they were before each change (nil: absent), oldest first.
  var itemIndex: [(StoredID, Handle?)] = []
  var sectionIndex: [(StoredID, Handle?)] = []
  var itemArena: (count: Int, garbage: Int)
  var sectionArena: (count: Int, garbage: Int)
  var visibleRows: Int
  var selection: Set<Handle>
  /// Slots freed during the batch; recycled only once it commits.
  var pendingFreeNodes: [Handle] = []
  var pendingFreeBlocks: [Handle] = []
  var pendingFreeSections: [Handle] = []
}

/// Batches made atomic: every write below the marks of an open batch is journalled (its
/// old value kept), and a rollback replays the journal backwards.
extension Forest {
  /// Writes node `x` through `body`, journalling its old value inside a batch.
  @inline(__always) mutating func edit(_ x: Handle, _ body: (inout Node) -> Void) {
    if Int(x) < journaled.nodes { journal?.nodes.append((x, nodes[Int(x)])) }
    body(&nodes[Int(x)])
  }

  /// Writes an item's content through `body`, journalling its old value inside a batch.
  mutating func editContent(_ x: Handle, _ body: (inout ItemContent) -> Void) {
    if Int(x) < journaled.nodes { journal?.content.append((x, content[Int(x)])) }
    body(&content[Int(x)])
  }

  /// Writes block `b` through `body`, journalling its old value inside a batch.
  @inline(__always) mutating func editBlock(_ b: Handle, _ body: (inout Block) -> Void) {
    if Int(b) < journaled.blocks { journal?.blocks.append((b, blocks[Int(b)])) }
    body(&blocks[Int(b)])
  }

  /// Writes one entry slot, journalling its old value inside a batch.
  @inline(__always) mutating func setSlot(_ i: Int, _ value: Int32) {
    if i < journaled.slots { journal?.slots.append((i, slots[i])) }
    slots[i] = value
  }

  mutating func editSection(_ s: Handle, _ body: (inout SectionSlot) -> Void) {
    if Int(s) < journaled.sections { journal?.sections.append((s, sections[Int(s)])) }
    body(&sections[Int(s)])
  }

  /// Registers `k` for item `x` unless the id is taken (then nothing changes), journalling
  /// the insert inside a batch.
  @inline(__always) mutating func registerItem(_ k: ProbeKey, _ x: Handle)
    -> IdentifierIndex.Insertion
  {
    let result = itemIndex.insert(k, x)
    if inBatch, case .inserted(let id) = result { journal?.itemIndex.append((id, nil)) }
    return result
  }

  /// Hands the id in `slot` (registered to `old`) over to item `x`, journalled.
  mutating func reregisterItem(inSlot slot: Int, _ id: StoredID, from old: Handle, to x: Handle) {
    if inBatch { journal?.itemIndex.append((id, old)) }
    itemIndex.setHandle(inSlot: slot, x)
  }

  /// Removes item `x`'s id from the index unless another item took it over, journalled.
  @inline(__always) mutating func unregisterItem(_ x: Handle) {
    let id = content[Int(x)].id
    if itemIndex.remove(id, ifMapsTo: x), inBatch { journal?.itemIndex.append((id, x)) }
  }

  /// Starts journalling so that `rollback()` can undo everything until `commit()`.
  mutating func begin() {
    inBatch = true
    journaled = JournalMarks(
      nodes: nodes.count, blocks: blocks.count, slots: slots.count, sections: sections.count)
    journal = Journal(
      nodeCount: nodes.count, sectionCount: sections.count, blockCount: blocks.count,
      itemArena: itemIndex.arenaMark, sectionArena: sectionIndex.arenaMark,
      visibleRows: visibleRows, selection: selection)
    sectionOrder.begin()
  }

  /// Keeps every change since `begin()`.
  mutating func commit() {
    guard let j = journal else { return }
    journal = nil
    inBatch = false
    journaled = JournalMarks()
    sectionOrder.commit()
    freeNodes.append(contentsOf: j.pendingFreeNodes)
    freeSections.append(contentsOf: j.pendingFreeSections)
    freeBlocks.append(contentsOf: j.pendingFreeBlocks)
    compactIfNeeded()
  }

  /// Undoes every change since `begin()`.
  mutating func rollback() {
    guard let j = journal else { return }
    journal = nil
    inBatch = false
    journaled = JournalMarks()
    for (x, n) in j.nodes.reversed() { nodes[Int(x)] = n }
    for (b, v) in j.blocks.reversed() { blocks[Int(b)] = v }
    for (i, v) in j.slots.reversed() { slots[i] = v }
    for (x, c) in j.content.reversed() { content[Int(x)] = c }
    for (s, v) in j.sections.reversed() { sections[Int(s)] = v }
    for (k, v) in j.itemIndex.reversed() { itemIndex.restore(k, to: v) }
    for (k, v) in j.sectionIndex.reversed() { sectionIndex.restore(k, to: v) }
    itemIndex.rollBackArena(to: j.itemArena)
    sectionIndex.rollBackArena(to: j.sectionArena)
    sectionOrder.rollBack()
    visibleRows = j.visibleRows
    nodes.removeSubrange(j.nodeCount...)
    content.removeSubrange(j.nodeCount...)
    sections.removeSubrange(j.sectionCount...)
    blocks.removeSubrange(j.blockCount...)
    slots.removeSubrange((j.blockCount * BlockLayout.stride)...)
    selection = j.selection
  }
}
