/// Handle of a node or section slot inside a `Forest`; `-1` means none.
typealias Handle = Int32

/// One item's place in the outline: its links, flags and own totals (its content lives at
/// the same handle in `Forest.content`; its position among its siblings is the slot that
/// holds it in a leaf of the sibling list's B-tree).
struct Node {
  /// Parent item, or -1 for a root item.
  var parent: Handle = -1
  /// Section slot; meaningful for root items only (others find it through their root).
  var section: Handle = -1
  /// Root block of the B-tree holding this item's children in order.
  var children: Handle = -1
  /// Leaf block holding this item among its siblings (-1 while detached).
  var block: Handle = -1
  var expanded: Bool = false
  var selected: Bool = false
  var live: Bool = true
  /// Levels below this item (0 without children); at most 255 under the nesting limit.
  var height: UInt8 = 0
  /// Rows this item's subtree shows when the item itself is visible.
  var vis: Int32 = 1
  /// Items in this item's subtree, the item included.
  var cnt: Int32 = 1
  /// Selected items in this item's subtree, the item included.
  var sel: Int32 = 0
}

/// One block of a sibling list's B-tree: a leaf holds items, an inner block holds blocks.
/// Its entries (handles and their totals) live in `Forest.slots`; here are their sums.
struct Block {
  /// Parent block, or -1 at the root of a list.
  var parent: Handle = -1
  var count: Int32 = 0
  var leaf: Bool
  var live: Bool = true
  /// The greatest `height` among the items this block holds, directly or through its
  /// entries.
  var height: UInt8 = 0
  /// Items below this block.
  var size: Int32 = 0
  /// Sums of the entries' `vis`, `cnt` and `sel`.
  var vis: Int32 = 0
  var cnt: Int32 = 0
  var sel: Int32 = 0

  init(leaf: Bool) { self.leaf = leaf }
}

/// Where a block's entries sit in `Forest.slots`: `fanout` handles, one cache line at
/// fan-out 16. An entry's totals are not copied next to it: they are read from what it
/// holds (an item's own totals, a block's sums), so the fold's updates touch only the
/// block headers on the way up, and only queries (positions, rows) read the siblings.
enum BlockLayout {
  static let fanout = 16
  static let size = 0
  static let vis = 1
  static let cnt = 2
  static let sel = 3
  /// Slots per block.
  static let stride = fanout
}

/// A section: its id's entry and the root block of its root items.
struct SectionSlot {
  var entry: Int32
  var roots: Handle = -1
  var live: Bool = true
}

/// The outline engine shared by `ListState` and `SectionSnapshot`: every section's items
/// as a tree, with each sibling list kept in a B-tree (fan-out 16) whose entries carry
/// item counts, visible rows and selected counts, so that visibility, rows and counts
/// never scan the list.
///
/// A position is a sum of entry sizes along the block path; a row is the sum, along the
/// ancestor path, of the visible rows before each step. Wide blocks keep those paths to a
/// few cache lines even on lists of a million items. A batch is made atomic by a journal
/// of the slots it overwrote, replayed backwards on rollback.
struct Forest {
  var nodes: [Node] = []
  var blocks: [Block] = []
  /// Entries of every block, `BlockLayout.stride` slots per block.
  var slots: [Int32] = []
  var freeBlocks: [Handle] = []
  /// The entry of each node's id, by handle (`ids`).
  var entryOf: [Int32] = []
  /// Each node's title and fields in `text`, by handle.
  var content: [ContentRef] = []
  /// Titles and fields (`ItemText`), and how many of its bytes no item uses any more.
  var text: [UInt8] = []
  var textGarbage = 0
  var freeNodes: [Handle] = []
  /// Every id the forest knows; items and sections are keyed by entry.
  var ids = IdSpace()
  /// Whether `ids` is a log's dictionary (a fold of the log's records follows it), which
  /// only the log renumbers; else the forest renumbers its ids when dead ones pile up.
  var idsFollowLog = false
  /// The live item of each entry (-1: none), by entry; shorter than `ids` when the last
  /// entries name no item.
  var handleOf: [Handle] = []
  /// The live section of each entry (-1: none), likewise.
  var sectionOf: [Handle] = []
  var sections: [SectionSlot] = []
  var freeSections: [Handle] = []
  /// Live sections in display order.
  var sectionOrder = SectionOrder()
  /// Visible rows over all sections, kept up to date wherever a section's root list changes
  /// so that counting them never walks the sections.
  var visibleRows = 0
  /// Live items, and selected ones.
  var itemCount = 0
  var selectedCount = 0

  var journal: Journal?
  /// Whether a batch is open (`journal` is set); a plain flag for the hot paths.
  var inBatch = false
  var journaled = JournalMarks()
  /// Buffers the bulk builder reuses from one event to the next (empty between events).
  var scratch = BuildScratch()
  /// Records `ListState.apply(_: Event)` writes an event into, reused (empty between events).
  var opScratch = FoldOps()

  /// About how many bytes the forest's arrays hold, ids included: what keeping a copy of
  /// a state apart from the one being folded costs once the fold has written to every
  /// array (a budget for saved states).
  var heldBytes: Int {
    nodes.capacity &* MemoryLayout<Node>.stride &+ blocks.capacity
      &* MemoryLayout<Block>.stride &+ slots.capacity &* 4 &+ entryOf.capacity &* 4
      &+ content.capacity &* MemoryLayout<ContentRef>.stride &+ text.capacity
      &+ handleOf.capacity &* 4 &+ sectionOf.capacity &* 4 &+ sections.capacity
      &* MemoryLayout<SectionSlot>.stride &+ ids.heldBytes
  }

  /// The deepest level an item may have (protocol section 5: 256 levels, 0...255).
  static let deepestLevel = 255

  // MARK: Lookups

  /// Item `x`'s identifier. - Complexity: O(1).
  @inline(__always) func id(of x: Handle) -> String { ids.text(Int(entryOf[Int(x)])) }

  /// Section `s`'s identifier.
  @inline(__always) func sectionID(_ s: Handle) -> String { ids.text(Int(sections[Int(s)].entry)) }

  /// Calls `body` with the UTF-8 bytes of item `x`'s identifier.
  @inline(__always) func withID<R>(of x: Handle, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
    ids.withText(Int(entryOf[Int(x)]), body)
  }

  /// The live item whose id is entry `e`, or -1. - Complexity: O(1).
  @inline(__always) func item(entry e: Int32) -> Handle {
    e >= 0 && Int(e) < handleOf.count ? handleOf[Int(e)] : -1
  }

  /// The live section whose id is entry `e`, or -1. - Complexity: O(1).
  @inline(__always) func section(entry e: Int32) -> Handle {
    e >= 0 && Int(e) < sectionOf.count ? sectionOf[Int(e)] : -1
  }

  /// The entry of `id` without building the string table: through it when built, else by
  /// comparing every entry (O(entries); callers that ask often use an `IdProbe`).
  func findEntry(_ id: String) -> Int32? {
    var probe = IdProbe(id)
    return findEntry(&probe)
  }

  /// The entry `probe` names (its cost).
  @inline(__always) func findEntry(_ probe: inout IdProbe) -> Int32? { probe.entry(in: ids) }

  /// Totals of a list (or block) by its root block; 0 for an empty list.
  @inline(__always) func visSum(_ b: Handle) -> Int32 { b < 0 ? 0 : blocks[Int(b)].vis }
  @inline(__always) func cntSum(_ b: Handle) -> Int32 { b < 0 ? 0 : blocks[Int(b)].cnt }
  @inline(__always) func size(_ b: Handle) -> Int32 { b < 0 ? 0 : blocks[Int(b)].size }
  @inline(__always) func selSum(_ b: Handle) -> Int32 { b < 0 ? 0 : blocks[Int(b)].sel }

  /// The slot of entry `i` of block `b`.
  @inline(__always) func slot(_ b: Handle, _ i: Int) -> Int {
    Int(b) &* BlockLayout.stride &+ i
  }

  /// The handle in entry `i` of block `b`.
  @inline(__always) func entry(_ b: Handle, _ i: Int) -> Handle { slots[slot(b, i)] }

  /// The totals an entry for `h` carries: an item's own (size 1), or a block's sums.
  @inline(__always) func entryValues(_ h: Handle, leaf: Bool) -> (size: Int32, Totals) {
    if leaf {
      let n = nodes[Int(h)]
      return (1, Totals(vis: n.vis, cnt: n.cnt, sel: n.sel))
    }
    let b = blocks[Int(h)]
    return (b.size, Totals(vis: b.vis, cnt: b.cnt, sel: b.sel))
  }

  /// A total (`BlockLayout.size`, `.vis`, `.cnt` or `.sel`) of what entry `i` of block `b`
  /// holds.
  @inline(__always) func entryValue(_ b: Handle, _ field: Int, _ i: Int, leaf: Bool) -> Int32 {
    let (size, t) = entryValues(entry(b, i), leaf: leaf)
    switch field {
    case BlockLayout.size: return size
    case BlockLayout.vis: return t.vis
    case BlockLayout.cnt: return t.cnt
    default: return t.sel
    }
  }

  /// Index of the entry holding `h` in block `b`. - Complexity: O(fan-out).
  @inline(__always) func entryIndex(of h: Handle, in b: Handle) -> Int {
    let base = slot(b, 0)
    let n = Int(blocks[Int(b)].count)
    return slots.withUnsafeBufferPointer { s in
      var i = 0
      while i < n && s[base &+ i] != h { i &+= 1 }
      return i
    }
  }

  /// Sum of a total over the first `k` entries of block `b`.
  func prefixSum(_ b: Handle, _ field: Int, _ k: Int) -> Int {
    let leaf = blocks[Int(b)].leaf
    var total = 0
    for i in 0..<k { total &+= Int(entryValue(b, field, i, leaf: leaf)) }
    return total
  }

  /// The live item `id` names, or nil (`findEntry`'s cost).
  func handle(ofItem id: String) -> Handle? {
    guard let e = findEntry(id) else { return nil }
    let x = item(entry: e)
    return x >= 0 ? x : nil
  }

  /// The live section `id` names, or nil (`findEntry`'s cost).
  func handle(ofSection id: String) -> Handle? {
    guard let e = findEntry(id) else { return nil }
    let s = section(entry: e)
    return s >= 0 ? s : nil
  }

  /// The section slot an item lives in. - Complexity: O(depth).
  func section(of x: Handle) -> Handle {
    var r = x
    while nodes[Int(r)].parent >= 0 { r = nodes[Int(r)].parent }
    return nodes[Int(r)].section
  }

  /// Depth of an item (0 for roots). - Complexity: O(depth).
  func level(of x: Handle) -> Int {
    var d = 0
    var r = nodes[Int(x)].parent
    while r >= 0 {
      d += 1
      r = nodes[Int(r)].parent
    }
    return d
  }

  /// Whether every ancestor is expanded. - Complexity: O(depth).
  func isVisible(_ x: Handle) -> Bool {
    var r = nodes[Int(x)].parent
    while r >= 0 {
      if !nodes[Int(r)].expanded { return false }
      r = nodes[Int(r)].parent
    }
    return true
  }

  /// Whether `a` is `x` or one of its ancestors. - Complexity: O(depth).
  func isSelfOrAncestor(_ a: Handle, of x: Handle) -> Bool {
    var r = x
    while r >= 0 {
      if r == a { return true }
      r = nodes[Int(r)].parent
    }
    return false
  }

  /// The root block of the sibling list holding `x`.
  func listRoot(of x: Handle) -> Handle {
    let p = nodes[Int(x)].parent
    return p >= 0 ? nodes[Int(p)].children : sections[Int(nodes[Int(x)].section)].roots
  }

  /// Position of `x` among its siblings. - Complexity: O(log siblings × fan-out).
  func rank(_ x: Handle) -> Int { before(x, BlockLayout.size) }

  /// Sum of a field (`BlockLayout.size`, `.vis` or `.cnt`) over the siblings before `x`.
  private func before(_ x: Handle, _ field: Int) -> Int {
    var b = nodes[Int(x)].block
    var r = prefixSum(b, field, entryIndex(of: x, in: b))
    var p = blocks[Int(b)].parent
    while p >= 0 {
      r += prefixSum(p, field, entryIndex(of: b, in: p))
      b = p
      p = blocks[Int(b)].parent
    }
    return r
  }

  /// Index of a visible item among its section's visible rows, or nil when hidden.
  /// - Complexity: O(depth × log siblings × fan-out).
  func row(of x: Handle) -> Int? {
    isVisible(x) ? ancestorPathSum(x, BlockLayout.vis) : nil
  }

  /// Index of an item in its section's depth-first pre-order.
  /// - Complexity: O(depth × log siblings × fan-out).
  func preorderIndex(of x: Handle) -> Int { ancestorPathSum(x, BlockLayout.cnt) }

  /// What comes before `x` in its section (rows or items, by `field`): at every step up the
  /// ancestors, the siblings before it plus the parent's own row.
  private func ancestorPathSum(_ x: Handle, _ field: Int) -> Int {
    var total = 0
    var c = x
    while c >= 0 {
      total += before(c, field)
      let p = nodes[Int(c)].parent
      if p >= 0 { total += 1 }
      c = p
    }
    return total
  }

  /// Number of visible rows in a section. - Complexity: O(1).
  func visibleCount(inSection s: Handle) -> Int { Int(visSum(sections[Int(s)].roots)) }

  /// Number of items in a section. - Complexity: O(1).
  func itemCount(inSection s: Handle) -> Int { Int(cntSum(sections[Int(s)].roots)) }

  /// Position of a live section in display order. - Complexity: O(log sections).
  func sectionPosition(_ s: Handle) -> Int? { sectionOrder.position(of: s) }

  /// The last element of a sibling list, nil when it is empty.
  /// - Complexity: O(log siblings × fan-out).
  func lastElement(of root: Handle) -> Handle? {
    root >= 0 ? element(at: Int(size(root)) &- 1, in: root) : nil
  }

  /// The last item of `x`'s subtree in pre-order (`x` when it has no children).
  /// - Complexity: O(depth × log siblings × fan-out).
  func lastDescendant(_ x: Handle) -> Handle {
    var x = x
    while let last = lastElement(of: nodes[Int(x)].children) { x = last }
    return x
  }

  /// The `k`-th element of a sibling list. - Complexity: O(log siblings × fan-out).
  func element(at k: Int, in root: Handle) -> Handle? {
    guard root >= 0, k >= 0, k < Int(size(root)) else { return nil }
    var b = root
    var k = Int32(k)
    while true {
      let block = blocks[Int(b)]
      if block.leaf { return entry(b, Int(k)) }
      var i = 0
      while i < Int(block.count) - 1 && k >= entryValue(b, BlockLayout.size, i, leaf: false) {
        k -= entryValue(b, BlockLayout.size, i, leaf: false)
        i += 1
      }
      b = entry(b, i)
    }
  }

  /// The item at visible row `row` of a section.
  /// - Complexity: O(depth × log siblings × fan-out).
  func visibleItem(at row: Int, inSection s: Handle) -> Handle? {
    var k = Int32(row)
    var b = sections[Int(s)].roots
    descend: while b >= 0 {
      let block = blocks[Int(b)]
      for i in 0..<Int(block.count) {
        let v = entryValue(b, BlockLayout.vis, i, leaf: block.leaf)
        if k < v {
          let h = entry(b, i)
          if !block.leaf {
            b = h
            continue descend
          }
          if k == 0 { return h }
          k -= 1
          b = nodes[Int(h)].children
          continue descend
        }
        k -= v
      }
      return nil
    }
    return nil
  }

  /// Calls `body` on each item of a sibling list in order.
  func forEachInList<E: Error>(_ root: Handle, _ body: (Handle) throws(E) -> Void) throws(E) {
    guard root >= 0 else { return }
    let top = blocks[Int(root)]
    if top.leaf {
      // A short list is a single leaf: no stack to allocate.
      for i in 0..<Int(top.count) { try body(entry(root, i)) }
      return
    }
    // Explicit stack of (block, next entry): the height is small, but never recurse.
    var stack: [(Handle, Int)] = [(root, 0)]
    while let (b, i) = stack.last {
      let block = blocks[Int(b)]
      if i == Int(block.count) {
        stack.removeLast()
        continue
      }
      stack[stack.count - 1].1 = i + 1
      let h = entry(b, i)
      if block.leaf {
        try body(h)
      } else {
        stack.append((h, 0))
      }
    }
  }

  /// Calls `body` on every block of a sibling list's B-tree (not the items' own lists).
  func forEachBlock(_ root: Handle, _ body: (Handle) -> Void) {
    guard root >= 0 else { return }
    var stack: [Handle] = [root]
    while let b = stack.popLast() {
      body(b)
      let block = blocks[Int(b)]
      if !block.leaf {
        for i in 0..<Int(block.count) { stack.append(entry(b, i)) }
      }
    }
  }

  /// Siblings of a list in order. - Complexity: O(siblings).
  func list(_ root: Handle) -> [Handle] {
    var out: [Handle] = []
    out.reserveCapacity(Int(size(root)))
    forEachInList(root) { out.append($0) }
    return out
  }

  /// Calls `body(handle, level)` on every item under `root` in depth-first pre-order,
  /// skipping the children of collapsed items when `visibleOnly`.
  func walk<E: Error>(
    list root: Handle, level: Int = 0, visibleOnly: Bool,
    _ body: (Handle, Int) throws(E) -> Void
  ) throws(E) {
    // An empty list (most sections of a list with many) allocates nothing.
    guard root >= 0 else { return }
    // Explicit stack of B-tree cursors (block, next entry, its items' level), so deep
    // outlines never overflow the call stack and no sibling list is copied out first.
    var stack: [(block: Handle, next: Int32, level: Int)] = [(root, 0, level)]
    try nodes.withUnsafeBufferPointer { nodes throws(E) in
      try slots.withUnsafeBufferPointer { slots throws(E) in
        while let top = stack.last {
          let b = blocks[Int(top.block)]
          var i = top.next
          let base = Int(top.block) &* BlockLayout.stride
          if !b.leaf {
            if i == b.count {
              stack.removeLast()
            } else {
              stack[stack.count &- 1].next = i &+ 1
              stack.append((slots[base &+ Int(i)], 0, top.level))
            }
            continue
          }
          // A leaf: its items in order, until one has children to go into; the nodes of
          // items a few ahead are asked for (a folded state's handles are scattered).
          var into: Handle = -1
          while i < b.count {
            if i &+ Self.walkDistance < b.count {
              prefetchLine(nodes, Int(slots[base &+ Int(i &+ Self.walkDistance)]))
            }
            let x = slots[base &+ Int(i)]
            i &+= 1
            try body(x, top.level)
            let n = nodes[Int(x)]
            if n.children >= 0 && (!visibleOnly || n.expanded) {
              into = n.children
              break
            }
          }
          if i == b.count && into < 0 {
            stack.removeLast()
          } else {
            stack[stack.count &- 1].next = i
          }
          if into >= 0 { stack.append((into, 0, top.level &+ 1)) }
        }
      }
    }
  }

  /// Items ahead in a leaf whose node `walk` asks for.
  static let walkDistance: Int32 = 8

  /// Every item of a section in depth-first pre-order.
  func items(inSection s: Handle, visibleOnly: Bool) -> [Handle] {
    var out: [Handle] = []
    out.reserveCapacity(visibleOnly ? visibleCount(inSection: s) : itemCount(inSection: s))
    walk(list: sections[Int(s)].roots, visibleOnly: visibleOnly) { x, _ in out.append(x) }
    return out
  }

  /// The items of a sibling list and their subtrees as nodes, flags and content included.
  /// - Complexity: O(items), without recursion.
  func outline(list root: Handle) -> [OutlineNode] {
    var tops: [OutlineNode] = []
    // The open path: each node with the children gathered so far.
    var open: [(node: OutlineNode, children: [OutlineNode])] = []
    func closeLast() {
      let (closed, children) = open.removeLast()
      var node = closed
      node.children = children
      if open.isEmpty { tops.append(node) } else { open[open.count - 1].children.append(node) }
    }
    walk(list: root, visibleOnly: false) { x, level in
      while open.count > level { closeLast() }
      let (title, fields) = withContent(x) { ItemText.decode($0) }
      open.append(
        (
          OutlineNode(id(of: x), title: title, fields: fields, expanded: nodes[Int(x)].expanded),
          []
        ))
    }
    while !open.isEmpty { closeLast() }
    return tops
  }

  /// Every item under `x` (not `x` itself), depth-first pre-order.
  func descendants(of x: Handle) -> [Handle] {
    var out: [Handle] = []
    walk(list: nodes[Int(x)].children, visibleOnly: false) { d, _ in out.append(d) }
    return out
  }
}
