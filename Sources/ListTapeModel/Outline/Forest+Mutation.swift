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
  var itemIndex: [(String, Handle?)] = []
  var sectionIndex: [(String, Handle?)] = []
  var sectionOrder: [Handle]?
  var selection: Set<Handle>
  /// Slots freed during the batch; recycled only once it commits.
  var pendingFreeNodes: [Handle] = []
  var pendingFreeBlocks: [Handle] = []
  var pendingFreeSections: [Handle] = []
}

/// A change of an item's own totals (rows shown, items, selected items), carried upwards.
struct Totals {
  var vis: Int32
  var cnt: Int32
  var sel: Int32

  var isZero: Bool { vis == 0 && cnt == 0 && sel == 0 }
}

extension Forest {
  // MARK: Journalled writes

  /// Writes node `x` through `body`, journalling its old value inside a batch.
  @inline(__always) mutating func edit(_ x: Handle, _ body: (inout Node) -> Void) {
    if journal != nil, Int(x) < journal?.nodeCount ?? 0 {
      journal?.nodes.append((x, nodes[Int(x)]))
    }
    body(&nodes[Int(x)])
  }

  /// Writes an item's content through `body`, journalling its old value inside a batch.
  mutating func editContent(_ x: Handle, _ body: (inout ItemContent) -> Void) {
    if journal != nil, Int(x) < journal?.nodeCount ?? 0 {
      journal?.content.append((x, content[Int(x)]))
    }
    body(&content[Int(x)])
  }

  /// Writes block `b` through `body`, journalling its old value inside a batch.
  @inline(__always) mutating func editBlock(_ b: Handle, _ body: (inout Block) -> Void) {
    if journal != nil, Int(b) < journal?.blockCount ?? 0 {
      journal?.blocks.append((b, blocks[Int(b)]))
    }
    body(&blocks[Int(b)])
  }

  /// Writes one entry slot, journalling its old value inside a batch.
  @inline(__always) mutating func setSlot(_ i: Int, _ value: Int32) {
    if journal != nil, i < (journal?.blockCount ?? 0) * BlockLayout.stride {
      journal?.slots.append((i, slots[i]))
    }
    slots[i] = value
  }

  mutating func editSection(_ s: Handle, _ body: (inout SectionSlot) -> Void) {
    if journal != nil, Int(s) < journal?.sectionCount ?? 0 {
      journal?.sections.append((s, sections[Int(s)]))
    }
    body(&sections[Int(s)])
  }

  mutating func setItemIndex(_ id: String, _ h: Handle?) {
    if journal != nil { journal?.itemIndex.append((id, itemIndex[id])) }
    itemIndex[id] = h
  }

  mutating func setSectionIndex(_ id: String, _ h: Handle?) {
    if journal != nil { journal?.sectionIndex.append((id, sectionIndex[id])) }
    sectionIndex[id] = h
  }

  mutating func editSectionOrder(_ body: (inout [Handle]) -> Void) {
    if journal != nil, journal?.sectionOrder == nil { journal?.sectionOrder = sectionOrder }
    body(&sectionOrder)
  }

  // MARK: Batches

  /// Starts journalling so that `rollback()` can undo everything until `commit()`.
  mutating func begin() {
    journal = Journal(
      nodeCount: nodes.count, sectionCount: sections.count, blockCount: blocks.count,
      selection: selection)
  }

  /// Keeps every change since `begin()`.
  mutating func commit() {
    guard let j = journal else { return }
    journal = nil
    freeNodes.append(contentsOf: j.pendingFreeNodes)
    freeSections.append(contentsOf: j.pendingFreeSections)
    freeBlocks.append(contentsOf: j.pendingFreeBlocks)
  }

  /// Undoes every change since `begin()`.
  mutating func rollback() {
    guard let j = journal else { return }
    journal = nil
    for (x, n) in j.nodes.reversed() { nodes[Int(x)] = n }
    for (b, v) in j.blocks.reversed() { blocks[Int(b)] = v }
    for (i, v) in j.slots.reversed() { slots[i] = v }
    for (x, c) in j.content.reversed() { content[Int(x)] = c }
    for (s, v) in j.sections.reversed() { sections[Int(s)] = v }
    for (k, v) in j.itemIndex.reversed() { itemIndex[k] = v }
    for (k, v) in j.sectionIndex.reversed() { sectionIndex[k] = v }
    if let order = j.sectionOrder { sectionOrder = order }
    nodes.removeSubrange(j.nodeCount...)
    content.removeSubrange(j.nodeCount...)
    sections.removeSubrange(j.sectionCount...)
    blocks.removeSubrange(j.blockCount...)
    slots.removeSubrange((j.blockCount * BlockLayout.stride)...)
    selection = j.selection
  }

  // MARK: Allocation

  /// A fresh, detached node registered under `id`.
  mutating func allocate(_ id: String) -> Handle {
    let node = Node()
    let x: Handle
    if journal == nil, let free = freeNodes.popLast() {
      x = free
      nodes[Int(x)] = node
      content[Int(x)] = ItemContent(id: id)
    } else {
      x = Handle(nodes.count)
      nodes.append(node)
      content.append(ItemContent(id: id))
    }
    setItemIndex(id, x)
    return x
  }

  /// A new item for a state being built from scratch (no journal, no free slots), or nil
  /// when `id` is already taken.
  mutating func allocateFresh(_ id: String) -> Handle? {
    let x = Handle(nodes.count)
    guard itemIndex.insertNew(id, x) else { return nil }
    nodes.append(Node())
    content.append(ItemContent(id: id))
    return x
  }

  /// Unregisters and frees a node already detached from every list.
  mutating func release(_ x: Handle) {
    let id = content[Int(x)].id
    setItemIndex(id, nil)
    if nodes[Int(x)].selected { selection.remove(x) }
    edit(x) {
      $0.live = false
      $0.selected = false
      $0.children = -1
    }
    editContent(x) {
      $0.title = nil
      $0.fields = nil
    }
    if journal != nil {
      journal?.pendingFreeNodes.append(x)
    } else {
      freeNodes.append(x)
    }
  }

  /// A fresh, empty block.
  mutating func allocateBlock(leaf: Bool) -> Handle {
    if journal == nil, let free = freeBlocks.popLast() {
      blocks[Int(free)] = Block(leaf: leaf)
      return free
    }
    blocks.append(Block(leaf: leaf))
    slots.append(contentsOf: repeatElement(0, count: BlockLayout.stride))
    return Handle(blocks.count - 1)
  }

  mutating func releaseBlock(_ b: Handle) {
    editBlock(b) {
      $0.live = false
      $0.count = 0
    }
    if journal != nil {
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

  mutating func allocateSection(_ id: String) -> Handle {
    let slot = SectionSlot(id: id)
    let s: Handle
    if journal == nil, let free = freeSections.popLast() {
      s = free
      sections[Int(s)] = slot
    } else {
      s = Handle(sections.count)
      sections.append(slot)
    }
    setSectionIndex(id, s)
    return s
  }

  mutating func releaseSection(_ s: Handle) {
    setSectionIndex(sections[Int(s)].id, nil)
    editSection(s) {
      $0.live = false
      $0.roots = -1
    }
    if journal != nil {
      journal?.pendingFreeSections.append(s)
    } else {
      freeSections.append(s)
    }
  }

  // MARK: Totals

  /// Recomputes an item's own `vis`, `cnt` and `sel` from its children; returns how much
  /// each changed, for `propagate`.
  @discardableResult
  @inline(__always) mutating func refreshTotals(_ x: Handle) -> Totals {
    let n = nodes[Int(x)]
    let c = 1 + cntSum(n.children)
    let v = 1 + (n.expanded ? visSum(n.children) : 0)
    let s = (n.selected ? 1 : 0) + selSum(n.children)
    let change = Totals(vis: v - n.vis, cnt: c - n.cnt, sel: s - n.sel)
    if !change.isZero {
      edit(x) {
        $0.cnt = c
        $0.vis = v
        $0.sel = s
      }
    }
    return change
  }

  /// Adds a change (of `size` items and of totals) to block `b`'s sums and to every block
  /// above it: one header per level, no entry scanned.
  private mutating func addToBlocks(from b: Handle, size dn: Int32, _ d: Totals) {
    var b = b
    while b >= 0 {
      editBlock(b) {
        $0.size &+= dn
        $0.vis &+= d.vis
        $0.cnt &+= d.cnt
        $0.sel &+= d.sel
      }
      b = blocks[Int(b)].parent
    }
  }

  /// Carries a change of `x`'s own totals up to its section's root list: into the sums of
  /// its leaf and the blocks above it, then into the parent's own totals (rows only when the parent is
  /// expanded), and so on. Touches one block header per B-tree level, never a sibling;
  /// stops once nothing changes. - Complexity: O(depth × log siblings).
  mutating func propagate(from x: Handle, _ change: Totals) {
    var c = x
    var d = change
    while !d.isZero {
      let b = nodes[Int(c)].block
      if b >= 0 { addToBlocks(from: b, size: 0, d) }
      let p = nodes[Int(c)].parent
      guard p >= 0 else { return }
      if !nodes[Int(p)].expanded { d.vis = 0 }
      edit(p) {
        $0.vis &+= d.vis
        $0.cnt &+= d.cnt
        $0.sel &+= d.sel
      }
      c = p
    }
  }

  // MARK: B-tree primitives

  /// Sets the root block of the sibling list owned by item `p` (or by section `s` when
  /// p < 0).
  mutating func setListRoot(parent p: Handle, section s: Handle, _ root: Handle) {
    if root >= 0 && blocks[Int(root)].parent != -1 { editBlock(root) { $0.parent = -1 } }
    if p >= 0 {
      if nodes[Int(p)].children != root { edit(p) { $0.children = root } }
    } else if sections[Int(s)].roots != root {
      editSection(s) { $0.roots = root }
    }
  }

  /// Puts `h` in entry `i` of block `b` and points `h` back at `b`.
  private mutating func writeEntry(_ b: Handle, _ i: Int, _ h: Handle, leaf: Bool) {
    setSlot(slot(b, i), h)
    if leaf {
      if nodes[Int(h)].block != b { edit(h) { $0.block = b } }
    } else if blocks[Int(h)].parent != b {
      editBlock(h) { $0.parent = b }
    }
  }

  /// Recomputes a block's sums from what its entries hold.
  private mutating func resum(_ b: Handle) {
    let block = blocks[Int(b)]
    var sz: Int32 = 0
    var d = Totals(vis: 0, cnt: 0, sel: 0)
    for i in 0..<Int(block.count) {
      let (n, t) = entryValues(entry(b, i), leaf: block.leaf)
      sz &+= n
      d.vis &+= t.vis
      d.cnt &+= t.cnt
      d.sel &+= t.sel
    }
    editBlock(b) {
      $0.size = sz
      $0.vis = d.vis
      $0.cnt = d.cnt
      $0.sel = d.sel
    }
  }

  /// Shifts entries `i..<count` of block `b` one place right (into a free slot).
  private mutating func openGap(_ b: Handle, at i: Int) {
    var k = Int(blocks[Int(b)].count)
    while k > i {
      setSlot(slot(b, k), entry(b, k - 1))
      k -= 1
    }
    editBlock(b) { $0.count += 1 }
  }

  /// Inserts `h` (an item in a leaf, a block in an inner block) as entry `i` of block `b`,
  /// adds its totals to every block above, and splits blocks that fill up.
  private mutating func insertEntry(
    _ h: Handle, in b: Handle, at i: Int, parent p: Handle, section s: Handle
  ) {
    let leaf = blocks[Int(b)].leaf
    openGap(b, at: i)
    writeEntry(b, i, h, leaf: leaf)
    let (n, d) = entryValues(h, leaf: leaf)
    addToBlocks(from: b, size: n, d)
    if Int(blocks[Int(b)].count) == BlockLayout.fanout { split(b, parent: p, section: s) }
  }

  /// Splits a full block in two halves, the upper half in a new block right after it.
  private mutating func split(_ b: Handle, parent p: Handle, section s: Handle) {
    let leaf = blocks[Int(b)].leaf
    let half = BlockLayout.fanout / 2
    let c = allocateBlock(leaf: leaf)
    for i in half..<BlockLayout.fanout { writeEntry(c, i - half, entry(b, i), leaf: leaf) }
    editBlock(b) { $0.count = Int32(half) }
    editBlock(c) { $0.count = Int32(BlockLayout.fanout - half) }
    resum(b)
    resum(c)
    let up = blocks[Int(b)].parent
    if up < 0 {
      let r = allocateBlock(leaf: false)
      editBlock(r) { $0.count = 2 }
      writeEntry(r, 0, b, leaf: false)
      writeEntry(r, 1, c, leaf: false)
      resum(r)
      setListRoot(parent: p, section: s, r)
    } else {
      // The parent's sums already count both halves: only the new entry is added.
      let i = entryIndex(of: b, in: up) + 1
      openGap(up, at: i)
      writeEntry(up, i, c, leaf: false)
      if Int(blocks[Int(up)].count) == BlockLayout.fanout { split(up, parent: p, section: s) }
    }
  }

  /// Removes entry `i` of block `b` (whose totals were already taken off), dropping blocks
  /// that empty and a root left with a single inner child.
  private mutating func removeEntry(at i: Int, of b: Handle, parent p: Handle, section s: Handle) {
    let n = Int(blocks[Int(b)].count)
    for k in i..<(n - 1) { setSlot(slot(b, k), entry(b, k + 1)) }
    editBlock(b) { $0.count -= 1 }
    let up = blocks[Int(b)].parent
    if n - 1 == 0 {
      releaseBlock(b)
      if up >= 0 {
        removeEntry(at: entryIndex(of: b, in: up), of: up, parent: p, section: s)
      } else {
        setListRoot(parent: p, section: s, -1)
      }
      return
    }
    if up < 0 && !blocks[Int(b)].leaf && n - 1 == 1 {
      let only = entry(b, 0)
      releaseBlock(b)
      setListRoot(parent: p, section: s, only)
    }
  }

  /// Builds a B-tree over `items` in order in O(n), leaves three quarters full so that
  /// inserts do not split at once.
  mutating func buildList(_ items: [Handle]) -> Handle {
    guard !items.isEmpty else { return -1 }
    let fill = BlockLayout.fanout * 3 / 4
    var level: [Handle] = []
    var leaf = true
    var members = items
    while true {
      level.removeAll(keepingCapacity: true)
      var start = 0
      while start < members.count {
        let end = min(members.count, start + fill)
        let b = allocateBlock(leaf: leaf)
        editBlock(b) { $0.count = Int32(end - start) }
        for i in start..<end { writeEntry(b, i - start, members[i], leaf: leaf) }
        resum(b)
        level.append(b)
        start = end
      }
      if level.count == 1 { break }
      members = level
      leaf = false
    }
    let root = level[0]
    editBlock(root) { $0.parent = -1 }
    return root
  }

  // MARK: List edits

  /// The leaf and entry index where an item at position `k` (0...count) of a list goes.
  private func leafSlot(forPosition k: Int, in root: Handle) -> (Handle, Int) {
    var b = root
    if k == Int(size(root)) {
      // Appending: the last entry at every level, no sizes to read.
      while !blocks[Int(b)].leaf { b = entry(b, Int(blocks[Int(b)].count) - 1) }
      return (b, Int(blocks[Int(b)].count))
    }
    var k = Int32(k)
    while !blocks[Int(b)].leaf {
      let n = Int(blocks[Int(b)].count)
      var i = 0
      while i < n - 1 && k > entryValue(b, BlockLayout.size, i, leaf: false) {
        k -= entryValue(b, BlockLayout.size, i, leaf: false)
        i += 1
      }
      b = entry(b, i)
    }
    return (b, Int(k))
  }

  /// Inserts detached items (each with its subtree) at position `pos` of the list owned by
  /// `parent` (or the root list of `section`; at the end when `pos` is nil), then fixes
  /// every aggregate above them. A few items go in one by one (O(k × log siblings)); many
  /// rebuild the list (O(siblings + k)).
  mutating func insertList(_ xs: [Handle], parent p: Handle, section s: Handle, at pos: Int?) {
    guard !xs.isEmpty else { return }
    for x in xs {
      edit(x) {
        $0.parent = p
        $0.section = p >= 0 ? -1 : s
      }
    }
    let root = p >= 0 ? nodes[Int(p)].children : sections[Int(s)].roots
    let count = Int(size(root))
    let at = min(pos ?? count, count)
    if root < 0 {
      setListRoot(parent: p, section: s, buildList(xs))
    } else if xs.count >= BlockLayout.fanout && xs.count * 8 >= count {
      var all = list(root)
      all.insert(contentsOf: xs, at: at)
      releaseBlocks(ofList: root)
      setListRoot(parent: p, section: s, buildList(all))
    } else {
      for (k, x) in xs.enumerated() {
        let current = p >= 0 ? nodes[Int(p)].children : sections[Int(s)].roots
        let (leaf, i) = leafSlot(forPosition: at + k, in: current)
        insertEntry(x, in: leaf, at: i, parent: p, section: s)
      }
    }
    if p >= 0 { propagate(from: p, refreshTotals(p)) }
  }

  /// Inserts detached item `x` (with its subtree) right before or after its sibling-to-be
  /// `a`, in `a`'s leaf. - Complexity: O(depth × log siblings × fan-out).
  mutating func insert(_ x: Handle, nextTo a: Handle, after: Bool) {
    let p = nodes[Int(a)].parent
    let s = p >= 0 ? -1 : nodes[Int(a)].section
    edit(x) {
      $0.parent = p
      $0.section = s
    }
    let b = nodes[Int(a)].block
    insertEntry(x, in: b, at: entryIndex(of: a, in: b) + (after ? 1 : 0), parent: p, section: s)
    if p >= 0 { propagate(from: p, refreshTotals(p)) }
  }

  /// Removes `x` (keeping its subtree under it) from its sibling list and fixes aggregates.
  mutating func detach(_ x: Handle) {
    let n = nodes[Int(x)]
    let b = n.block
    addToBlocks(from: b, size: -1, Totals(vis: -n.vis, cnt: -n.cnt, sel: -n.sel))
    removeEntry(at: entryIndex(of: x, in: b), of: b, parent: n.parent, section: n.section)
    edit(x) { $0.block = -1 }
    if n.parent >= 0 { propagate(from: n.parent, refreshTotals(n.parent)) }
    edit(x) {
      $0.parent = -1
      $0.section = -1
    }
  }

  /// Frees every node of the subtree rooted at detached `x`, `x` included, and the blocks
  /// of their lists.
  mutating func releaseSubtree(_ x: Handle) {
    let kids = nodes[Int(x)].children
    if kids >= 0 { releaseAll(list: kids) }
    release(x)
  }

  /// Sets the expanded flag and fixes the rows of every ancestor.
  mutating func setExpanded(_ x: Handle, _ value: Bool) {
    guard nodes[Int(x)].expanded != value else { return }
    edit(x) { $0.expanded = value }
    propagate(from: x, refreshTotals(x))
  }

  /// Selects or deselects an item and fixes the selected counts above it.
  mutating func setSelected(_ x: Handle, _ value: Bool) {
    guard nodes[Int(x)].selected != value else { return }
    edit(x) { $0.selected = value }
    if value {
      selection.insert(x)
    } else {
      selection.remove(x)
    }
    if nodes[Int(x)].live { propagate(from: x, refreshTotals(x)) }
  }

  /// Selected items in a list and below it, found through the selected counts of entries
  /// (only blocks and items whose subtree holds a selection are visited).
  /// - Complexity: O(selected × depth × log siblings × fan-out).
  func selectedItems(inList root: Handle) -> [Handle] {
    var found: [Handle] = []
    var stack: [Handle] = [root]
    while let b = stack.popLast() {
      guard b >= 0, blocks[Int(b)].sel > 0 else { continue }
      let block = blocks[Int(b)]
      for i in 0..<Int(block.count) {
        let h = entry(b, i)
        if !block.leaf {
          stack.append(h)
          continue
        }
        let n = nodes[Int(h)]
        if n.sel == 0 { continue }
        if n.selected { found.append(h) }
        if n.sel > (n.selected ? 1 : 0) { stack.append(n.children) }
      }
    }
    return found
  }

  /// Deselects every selected item below `x` (and `x` itself when `includingSelf`).
  /// - Complexity: O(deselected × depth × log siblings × fan-out).
  mutating func deselectSubtree(of x: Handle, includingSelf: Bool) {
    guard nodes[Int(x)].sel > 0 else { return }
    var found = selectedItems(inList: nodes[Int(x)].children)
    if includingSelf && nodes[Int(x)].selected { found.append(x) }
    for y in found { setSelected(y, false) }
  }
}
