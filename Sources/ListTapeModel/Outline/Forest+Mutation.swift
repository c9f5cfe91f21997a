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

  /// Reclaims the arena bytes of removed ids when they are worth it; never inside a batch,
  /// whose journal still refers to them.
  mutating func compactIfNeeded() {
    guard !inBatch else { return }
    if itemIndex.needsCompaction {
      // Take the contents out so the closure does not overlap the index's access.
      var c = content
      content = []
      itemIndex.compact { x, id in c[Int(x)].id = id }
      content = c
    }
    if sectionIndex.needsCompaction {
      var s = sections
      sections = []
      sectionIndex.compact { x, id in s[Int(x)].key = id }
      sections = s
    }
  }

  // MARK: Batches

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

  // MARK: Allocation

  /// The handle the next new node gets: a free one outside batches (which recycle only once
  /// they commit), else a new one at the end.
  @inline(__always) var nextNodeHandle: Handle {
    if !inBatch, let free = freeNodes.last { return free }
    return Handle(nodes.count)
  }

  /// Stores new node `x` (which `nextNodeHandle` gave) with its content, taking it off the
  /// free list or appending it.
  @inline(__always) mutating func store(_ x: Handle, _ node: Node, _ c: ItemContent) {
    if Int(x) < entryTags.count { entryTags[Int(x)] = -1 }
    if Int(x) == nodes.count {
      nodes.append(node)
      content.append(c)
    } else {
      freeNodes.removeLast()
      nodes[Int(x)] = node
      content[Int(x)] = c
    }
  }

  /// Unregisters and frees a node already detached from every list.
  mutating func release(_ x: Handle) {
    unregisterItem(x)
    if nodes[Int(x)].selected { selection.remove(x) }
    edit(x) {
      $0.live = false
      $0.selected = false
      $0.children = -1
    }
    if content[Int(x)].title != nil || content[Int(x)].fields != nil {
      editContent(x) {
        $0.title = nil
        $0.fields = nil
      }
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
    slots.append(contentsOf: BlockLayout.emptyEntries)
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

  /// A new section registered under `id`, or nil when the id is taken.
  mutating func allocateSection(_ id: String) -> Handle? {
    let s = !inBatch ? freeSections.last ?? Handle(sections.count) : Handle(sections.count)
    let inserted = ProbeKey.with(id, seed: sectionIndex.seed) { sectionIndex.insert($0, s) }
    guard case .inserted(let key) = inserted else { return nil }
    if inBatch { journal?.sectionIndex.append((key, nil)) }
    let slot = SectionSlot(id: id, key: key)
    if Int(s) == sections.count {
      sections.append(slot)
    } else {
      freeSections.removeLast()
      sections[Int(s)] = slot
    }
    return s
  }

  mutating func releaseSection(_ s: Handle) {
    let key = sections[Int(s)].key
    if sectionIndex.remove(key, ifMapsTo: s), inBatch {
      journal?.sectionIndex.append((key, s))
    }
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
      guard p >= 0 else {
        // A root item in its section's list: the section's rows change with it.
        if b >= 0 { visibleRows &+= Int(d.vis) }
        return
      }
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
    var height: UInt8 = 0
    for i in 0..<Int(block.count) {
      let h = entry(b, i)
      let (n, t) = entryValues(h, leaf: block.leaf)
      sz &+= n
      d.vis &+= t.vis
      d.cnt &+= t.cnt
      d.sel &+= t.sel
      height = max(height, entryHeight(h, leaf: block.leaf))
    }
    editBlock(b) {
      $0.size = sz
      $0.vis = d.vis
      $0.cnt = d.cnt
      $0.sel = d.sel
      $0.height = height
    }
  }

  // MARK: Heights

  /// The height an entry holds: an item's own, or a block's greatest.
  @inline(__always) func entryHeight(_ h: Handle, leaf: Bool) -> UInt8 {
    leaf ? nodes[Int(h)].height : blocks[Int(h)].height
  }

  /// The greatest height among block `b`'s entries. - Complexity: O(fan-out).
  private func scannedHeight(_ b: Handle) -> UInt8 {
    let block = blocks[Int(b)]
    var height: UInt8 = 0
    for i in 0..<Int(block.count) {
      height = max(height, entryHeight(entry(b, i), leaf: block.leaf))
    }
    return height
  }

  /// The height item `x` has by its children: one more than its list's greatest, 0 without.
  @inline(__always) func heightByChildren(_ x: Handle) -> UInt8 {
    let c = nodes[Int(x)].children
    guard c >= 0 else { return 0 }
    let h = blocks[Int(c)].height
    return h == UInt8.max ? h : h &+ 1
  }

  /// Raises the heights of block `b` and the blocks above it to at least `height` (a new
  /// entry's): one header per level, and only while they grow.
  @inline(__always) private mutating func raiseHeights(from b: Handle, to height: UInt8) {
    var b = b
    while b >= 0 && blocks[Int(b)].height < height {
      editBlock(b) { $0.height = height }
      b = blocks[Int(b)].parent
    }
  }

  /// After an entry of height `removed` left block `b`: rescans the blocks from `b` up while
  /// that entry may have been their tallest. Nothing to do for a removed height of 0.
  private mutating func lowerHeights(from b: Handle, removed: UInt8) {
    var b = b
    while b >= 0 && removed > 0 && blocks[Int(b)].height == removed {
      let h = scannedHeight(b)
      if h == removed { return }
      editBlock(b) { $0.height = h }
      b = blocks[Int(b)].parent
    }
  }

  /// Recomputes item `x`'s height from its children and carries a change up through the
  /// blocks holding it and through its ancestors, stopping once nothing changes.
  /// - Complexity: O(depth × log siblings), times the fan-out where a height drops.
  mutating func refreshHeight(_ x: Handle) {
    var x = x
    while x >= 0 {
      let n = nodes[Int(x)]
      let h = heightByChildren(x)
      if h == n.height { return }
      edit(x) { $0.height = h }
      guard n.block >= 0 else { return }
      let root = listRoot(of: x)
      let before = blocks[Int(root)].height
      if h > n.height {
        raiseHeights(from: n.block, to: h)
      } else {
        lowerHeights(from: n.block, removed: n.height)
      }
      if blocks[Int(root)].height == before { return }
      x = n.parent
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
    raiseHeights(from: b, to: entryHeight(h, leaf: leaf))
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
  /// An entry of height `removed` is what leaves; the heights above it are lowered to match.
  private mutating func removeEntry(
    at i: Int, of b: Handle, parent p: Handle, section s: Handle, removed: UInt8
  ) {
    let n = Int(blocks[Int(b)].count)
    for k in i..<(n - 1) { setSlot(slot(b, k), entry(b, k + 1)) }
    editBlock(b) { $0.count -= 1 }
    let up = blocks[Int(b)].parent
    if n - 1 == 0 {
      releaseBlock(b)
      if up >= 0 {
        removeEntry(at: entryIndex(of: b, in: up), of: up, parent: p, section: s, removed: removed)
      } else {
        setListRoot(parent: p, section: s, -1)
      }
      return
    }
    lowerHeights(from: b, removed: removed)
    if up < 0 && !blocks[Int(b)].leaf && n - 1 == 1 {
      let only = entry(b, 0)
      releaseBlock(b)
      setListRoot(parent: p, section: s, only)
    }
  }

  /// Builds a B-tree over `items` in order in O(n), leaves three quarters full so that
  /// inserts do not split at once. The items' own totals and heights must be final.
  mutating func buildList(_ items: [Handle]) -> Handle {
    items.withUnsafeBufferPointer { buildList($0) }
  }

  /// Builds a B-tree over `items` in order in O(n) (see `buildList(_:)`).
  mutating func buildList(_ items: UnsafeBufferPointer<Handle>) -> Handle {
    guard !items.isEmpty else { return -1 }
    let fill = BlockLayout.fanout * 3 / 4
    if items.count <= fill { return buildBlock(items, leaf: true) }
    var level: [Handle] = []
    level.reserveCapacity((items.count &+ fill &- 1) / fill)
    var start = 0
    while start < items.count {
      let end = min(items.count, start &+ fill)
      level.append(buildBlock(UnsafeBufferPointer(rebasing: items[start..<end]), leaf: true))
      start = end
    }
    // Inner levels: each pass groups the blocks of the level below.
    while level.count > 1 {
      var next: [Handle] = []
      next.reserveCapacity((level.count &+ fill &- 1) / fill)
      level.withUnsafeBufferPointer { members in
        var start = 0
        while start < members.count {
          let end = min(members.count, start &+ fill)
          next.append(buildBlock(UnsafeBufferPointer(rebasing: members[start..<end]), leaf: false))
          start = end
        }
      }
      level = next
    }
    return level[0]
  }

  /// A new block holding `entries` (at most the fan-out), its sums and height computed. The
  /// block is new, so only the entries' back links may need journalling.
  private mutating func buildBlock(_ entries: UnsafeBufferPointer<Handle>, leaf: Bool) -> Handle {
    let b = allocateBlock(leaf: leaf)
    var sums = Block(leaf: leaf)
    sums.count = Int32(entries.count)
    let base = slot(b, 0)
    slots.withUnsafeMutableBufferPointer { s in
      for i in entries.indices { s[base &+ i] = entries[i] }
    }
    if leaf {
      if journaled.nodes > 0 {
        for h in entries where Int(h) < journaled.nodes {
          journal?.nodes.append((h, nodes[Int(h)]))
        }
      }
      nodes.withUnsafeMutableBufferPointer { all in
        for h in entries {
          all[Int(h)].block = b
          let n = all[Int(h)]
          sums.size &+= 1
          sums.vis &+= n.vis
          sums.cnt &+= n.cnt
          sums.sel &+= n.sel
          sums.height = max(sums.height, n.height)
        }
      }
    } else {
      blocks.withUnsafeMutableBufferPointer { all in
        for h in entries {
          all[Int(h)].parent = b
          let inner = all[Int(h)]
          sums.size &+= inner.size
          sums.vis &+= inner.vis
          sums.cnt &+= inner.cnt
          sums.sel &+= inner.sel
          sums.height = max(sums.height, inner.height)
        }
      }
    }
    blocks[Int(b)] = sums
    return b
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
    xs.withUnsafeBufferPointer { insertList($0, parent: p, section: s, at: pos) }
  }

  /// Inserts one detached item (with its subtree) as `insertList` does.
  mutating func insertList(_ x: Handle, parent p: Handle, section s: Handle, at pos: Int?) {
    withUnsafePointer(to: x) {
      insertList(UnsafeBufferPointer(start: $0, count: 1), parent: p, section: s, at: pos)
    }
  }

  /// Inserts detached items as `insertList(_:parent:section:at:)` does.
  mutating func insertList(
    _ xs: UnsafeBufferPointer<Handle>, parent p: Handle, section s: Handle, at pos: Int?
  ) {
    guard !xs.isEmpty else { return }
    for x in xs {
      edit(x) {
        $0.parent = p
        $0.section = p >= 0 ? -1 : s
      }
      if p < 0 { visibleRows &+= Int(nodes[Int(x)].vis) }
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
    if p >= 0 {
      propagate(from: p, refreshTotals(p))
      refreshHeight(p)
    }
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
    if p < 0 { visibleRows &+= Int(nodes[Int(x)].vis) }
    let b = nodes[Int(a)].block
    insertEntry(x, in: b, at: entryIndex(of: a, in: b) + (after ? 1 : 0), parent: p, section: s)
    if p >= 0 {
      propagate(from: p, refreshTotals(p))
      refreshHeight(p)
    }
  }

  /// Removes `x` (keeping its subtree under it) from its sibling list and fixes aggregates.
  mutating func detach(_ x: Handle) {
    let n = nodes[Int(x)]
    let b = n.block
    if n.parent < 0 { visibleRows &-= Int(n.vis) }
    addToBlocks(from: b, size: -1, Totals(vis: -n.vis, cnt: -n.cnt, sel: -n.sel))
    removeEntry(
      at: entryIndex(of: x, in: b), of: b, parent: n.parent, section: n.section, removed: n.height)
    edit(x) { $0.block = -1 }
    if n.parent >= 0 {
      propagate(from: n.parent, refreshTotals(n.parent))
      refreshHeight(n.parent)
    }
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
