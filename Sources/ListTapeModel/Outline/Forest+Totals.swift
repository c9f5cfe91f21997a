/// A change of an item's own totals (rows shown, items, selected items), carried upwards.
struct Totals {
  var vis: Int32
  var cnt: Int32
  var sel: Int32

  var isZero: Bool { vis == 0 && cnt == 0 && sel == 0 }
}

/// The totals every item and block keeps (rows, items, selected items), carried up the
/// B-tree and the ancestors after each change.
extension Forest {
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
  mutating func addToBlocks(from b: Handle, size dn: Int32, _ d: Totals) {
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
}
