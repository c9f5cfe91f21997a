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
  var content: [(Handle, ContentRef)] = []
  var sections: [(Handle, SectionSlot)] = []
  /// Entry maps as they were before each change, oldest first.
  var handleOf: [(Int32, Handle)] = []
  var sectionOf: [(Int32, Handle)] = []
  var text: (count: Int, garbage: Int)
  var visibleRows: Int
  var itemCount: Int
  var selectedCount: Int
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
  mutating func editContent(_ x: Handle, _ body: (inout ContentRef) -> Void) {
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

  /// Points entry `e` at item `x` (-1: at none), journalled.
  @inline(__always) mutating func mapItem(_ e: Int32, to x: Handle) {
    let k = Int(e)
    if k >= handleOf.count {
      if x < 0 { return }
      handleOf.append(contentsOf: repeatElement(-1, count: k &+ 1 &- handleOf.count))
    }
    if inBatch { journal?.handleOf.append((e, handleOf[k])) }
    handleOf[k] = x
  }

  /// Points entry `e` at section `s` (-1: at none), journalled.
  mutating func mapSection(_ e: Int32, to s: Handle) {
    let k = Int(e)
    if k >= sectionOf.count {
      if s < 0 { return }
      sectionOf.append(contentsOf: repeatElement(-1, count: k &+ 1 &- sectionOf.count))
    }
    if inBatch { journal?.sectionOf.append((e, sectionOf[k])) }
    sectionOf[k] = s
  }

  /// Unmaps item `x`'s entry unless another item took it over.
  @inline(__always) mutating func unregisterItem(_ x: Handle) {
    let e = entryOf[Int(x)]
    if item(entry: e) == x { mapItem(e, to: -1) }
  }

  /// Starts journalling so that `rollback()` can undo everything until `commit()`.
  mutating func begin() {
    inBatch = true
    journaled = JournalMarks(
      nodes: nodes.count, blocks: blocks.count, slots: slots.count, sections: sections.count)
    journal = Journal(
      nodeCount: nodes.count, sectionCount: sections.count, blockCount: blocks.count,
      text: (text.count, textGarbage), visibleRows: visibleRows, itemCount: itemCount,
      selectedCount: selectedCount)
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
    for (e, h) in j.handleOf.reversed() { handleOf[Int(e)] = h }
    for (e, s) in j.sectionOf.reversed() { sectionOf[Int(e)] = s }
    text.removeSubrange(j.text.count...)
    textGarbage = j.text.garbage
    sectionOrder.rollBack()
    visibleRows = j.visibleRows
    itemCount = j.itemCount
    selectedCount = j.selectedCount
    nodes.removeSubrange(j.nodeCount...)
    entryOf.removeSubrange(j.nodeCount...)
    content.removeSubrange(j.nodeCount...)
    sections.removeSubrange(j.sectionCount...)
    blocks.removeSubrange(j.blockCount...)
    slots.removeSubrange((j.blockCount * BlockLayout.stride)...)
  }
}
