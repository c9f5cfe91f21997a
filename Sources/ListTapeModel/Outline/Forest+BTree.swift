/// The B-tree of a sibling list: entries written, blocks split, emptied and built in
/// bulk, and where a position falls.
extension Forest {
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
  mutating func writeEntry(_ b: Handle, _ i: Int, _ h: Handle, leaf: Bool) {
    setSlot(slot(b, i), h)
    if leaf {
      if nodes[Int(h)].block != b { edit(h) { $0.block = b } }
    } else if blocks[Int(h)].parent != b {
      editBlock(h) { $0.parent = b }
    }
  }

  /// Recomputes a block's sums from what its entries hold.
  mutating func resum(_ b: Handle) {
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

  /// Shifts entries `i..<count` of block `b` one place right (into a free slot).
  mutating func openGap(_ b: Handle, at i: Int) {
    var k = Int(blocks[Int(b)].count)
    while k > i {
      setSlot(slot(b, k), entry(b, k - 1))
      k -= 1
    }
    editBlock(b) { $0.count += 1 }
  }

  /// Inserts `h` (an item in a leaf, a block in an inner block) as entry `i` of block `b`,
  /// adds its totals to every block above, and splits blocks that fill up.
  mutating func insertEntry(
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
  mutating func split(_ b: Handle, parent p: Handle, section s: Handle) {
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
  mutating func removeEntry(
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
  mutating func buildBlock(_ entries: UnsafeBufferPointer<Handle>, leaf: Bool) -> Handle {
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

  /// The leaf and entry index where an item at position `k` (0...count) of a list goes.
  func leafSlot(forPosition k: Int, in root: Handle) -> (Handle, Int) {
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
}
