/// Items into and out of sibling lists: insertions at a position or next to a sibling,
/// detaching, and freeing a detached subtree.
extension Forest {
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
}
