/// Handle of a node or section slot inside a `Forest`; `-1` means none.
typealias Handle = Int32

/// An item's identity and display content, kept apart from `Node` so the hot outline
/// fields are plain values: walking and rebalancing never touch reference counts.
struct ItemContent {
  var id: String
  var title: String?
  var fields: [String: String]?
}

/// One item's place in the outline: its links, flags and the treap that orders it among
/// its siblings (its content lives at the same handle in `Forest.content`).
struct Node {
  /// Parent item, or -1 for a root item.
  var parent: Handle = -1
  /// Section slot; meaningful for root items only (others find it through their root).
  var section: Handle = -1
  /// Root of the treap holding this item's children in order.
  var children: Handle = -1
  var left: Handle = -1
  var right: Handle = -1
  /// Treap parent (-1 at the root of a sibling treap).
  var up: Handle = -1
  var priority: UInt32
  var expanded: Bool = false
  var selected: Bool = false
  var live: Bool = true
  /// Rows this item's subtree shows when the item itself is visible.
  var vis: Int32 = 1
  /// Items in this item's subtree, the item included.
  var cnt: Int32 = 1
  /// Siblings in this treap subtree.
  var size: Int32 = 1
  /// Sum of `vis` over this treap subtree.
  var visSum: Int32 = 1
  /// Sum of `cnt` over this treap subtree.
  var cntSum: Int32 = 1
  /// Selected items in this item's subtree, the item included.
  var sel: Int32 = 0
  /// Sum of `sel` over this treap subtree.
  var selSum: Int32 = 0

  init(priority: UInt32) {
    self.priority = priority
  }
}

/// A section: its identity and the treap of its root items.
struct SectionSlot {
  var id: String
  var roots: Handle = -1
  var live: Bool = true
}

/// The outline engine shared by `ListState` and `SectionSnapshot`: every section's items
/// as a tree, with each sibling list kept in an implicit treap augmented with visible-row
/// and item counts, so that visibility, rows and counts never scan the list.
///
/// Positions are ranks in sibling treaps; a row is the sum, along the ancestor path, of
/// the visible rows before each step. A batch is made atomic by a journal of the slots it
/// overwrote, replayed backwards on rollback.
struct Forest {
  var nodes: [Node] = []
  /// Identity and display content of each node, by handle.
  var content: [ItemContent] = []
  var freeNodes: [Handle] = []
  var sections: [SectionSlot] = []
  var freeSections: [Handle] = []
  /// Live sections in display order.
  var sectionOrder: [Handle] = []
  var itemIndex = IdentifierIndex()
  var sectionIndex = IdentifierIndex()
  /// Handles of selected items (order is not meaningful; output sorts by display order).
  var selection: Set<Handle> = []
  /// Seed of the next treap priority, random per state: a log's author must not be able to
  /// choose insert positions that line priorities up into a degenerate (deep) treap, which
  /// would make the recursive split and merge exhaust the stack. Nothing observable depends
  /// on the tree shape (equality, JSON and encodings follow the logical order).
  var priorities = SplitMix64(seed: UInt64.random(in: 0...UInt64.max))

  var journal: Journal?

  // MARK: Lookups

  @inline(__always) func visSum(_ t: Handle) -> Int32 { t < 0 ? 0 : nodes[Int(t)].visSum }
  @inline(__always) func cntSum(_ t: Handle) -> Int32 { t < 0 ? 0 : nodes[Int(t)].cntSum }
  @inline(__always) func size(_ t: Handle) -> Int32 { t < 0 ? 0 : nodes[Int(t)].size }
  @inline(__always) func selSum(_ t: Handle) -> Int32 { t < 0 ? 0 : nodes[Int(t)].selSum }

  func handle(ofItem id: String) -> Handle? { itemIndex[id] }
  func handle(ofSection id: String) -> Handle? { sectionIndex[id] }

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

  /// The treap root of the sibling list holding `x`.
  func listRoot(of x: Handle) -> Handle {
    let p = nodes[Int(x)].parent
    return p >= 0 ? nodes[Int(p)].children : sections[Int(nodes[Int(x)].section)].roots
  }

  /// Position of `x` among its siblings. - Complexity: O(log siblings).
  func rank(_ x: Handle) -> Int {
    var r = Int(size(nodes[Int(x)].left))
    var c = x
    var u = nodes[Int(x)].up
    while u >= 0 {
      if nodes[Int(u)].right == c { r += Int(size(nodes[Int(u)].left)) + 1 }
      c = u
      u = nodes[Int(u)].up
    }
    return r
  }

  /// Sum of `keyPath` over the siblings before `x`. - Complexity: O(log siblings).
  private func before(_ x: Handle, _ sum: (Handle) -> Int32, _ own: (Handle) -> Int32) -> Int {
    var r = Int(sum(nodes[Int(x)].left))
    var c = x
    var u = nodes[Int(x)].up
    while u >= 0 {
      if nodes[Int(u)].right == c { r += Int(sum(nodes[Int(u)].left)) + Int(own(u)) }
      c = u
      u = nodes[Int(u)].up
    }
    return r
  }

  /// Index of a visible item among its section's visible rows, or nil when hidden.
  /// - Complexity: O(depth × log siblings).
  func row(of x: Handle) -> Int? {
    guard isVisible(x) else { return nil }
    var total = 0
    var c = x
    while c >= 0 {
      total += before(c, { visSum($0) }, { nodes[Int($0)].vis })
      let p = nodes[Int(c)].parent
      if p >= 0 { total += 1 }
      c = p
    }
    return total
  }

  /// Index of an item in its section's depth-first pre-order.
  /// - Complexity: O(depth × log siblings).
  func preorderIndex(of x: Handle) -> Int {
    var total = 0
    var c = x
    while c >= 0 {
      total += before(c, { cntSum($0) }, { nodes[Int($0)].cnt })
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

  /// Position of a live section in display order. - Complexity: O(sections).
  func sectionPosition(_ s: Handle) -> Int? { sectionOrder.firstIndex(of: s) }

  /// The `k`-th element of a sibling treap. - Complexity: O(log siblings).
  func element(at k: Int, in root: Handle) -> Handle? {
    var t = root
    var k = Int32(k)
    while t >= 0 {
      let ls = size(nodes[Int(t)].left)
      if k < ls {
        t = nodes[Int(t)].left
      } else if k == ls {
        return t
      } else {
        k -= ls + 1
        t = nodes[Int(t)].right
      }
    }
    return nil
  }

  /// The item at visible row `row` of a section. - Complexity: O(depth × log siblings).
  func visibleItem(at row: Int, inSection s: Handle) -> Handle? {
    var k = Int32(row)
    var t = sections[Int(s)].roots
    while t >= 0 {
      let n = nodes[Int(t)]
      let lv = visSum(n.left)
      if k < lv {
        t = n.left
      } else if k < lv + n.vis {
        k -= lv
        if k == 0 { return t }
        k -= 1
        t = n.children
      } else {
        k -= lv + n.vis
        t = n.right
      }
    }
    return nil
  }

  /// Calls `body` on each sibling of a treap in order.
  func forEachInList(_ root: Handle, _ body: (Handle) throws -> Void) rethrows {
    // Iterative in-order walk: hostile or deep treaps never grow the call stack.
    var stack: [Handle] = []
    var t = root
    while t >= 0 || !stack.isEmpty {
      while t >= 0 {
        stack.append(t)
        t = nodes[Int(t)].left
      }
      let x = stack.removeLast()
      try body(x)
      t = nodes[Int(x)].right
    }
  }

  /// Siblings of a treap in order. - Complexity: O(siblings).
  func list(_ root: Handle) -> [Handle] {
    var out: [Handle] = []
    out.reserveCapacity(Int(size(root)))
    forEachInList(root) { out.append($0) }
    return out
  }

  /// Calls `body(handle, level)` on every item under `root` in depth-first pre-order,
  /// skipping the children of collapsed items when `visibleOnly`.
  func walk(
    list root: Handle, level: Int = 0, visibleOnly: Bool,
    _ body: (Handle, Int) throws -> Void
  ) rethrows {
    // Explicit stack of sibling cursors so deep outlines never overflow the call stack.
    var frames: [(items: [Handle], next: Int, level: Int)] = [(list(root), 0, level)]
    while !frames.isEmpty {
      let top = frames.count - 1
      if frames[top].next == frames[top].items.count {
        frames.removeLast()
        continue
      }
      let x = frames[top].items[frames[top].next]
      let lvl = frames[top].level
      frames[top].next += 1
      try body(x, lvl)
      let n = nodes[Int(x)]
      if n.children >= 0 && (!visibleOnly || n.expanded) {
        frames.append((list(n.children), 0, lvl + 1))
      }
    }
  }

  /// Every item of a section in depth-first pre-order.
  func items(inSection s: Handle, visibleOnly: Bool) -> [Handle] {
    var out: [Handle] = []
    out.reserveCapacity(visibleOnly ? visibleCount(inSection: s) : itemCount(inSection: s))
    walk(list: sections[Int(s)].roots, visibleOnly: visibleOnly) { x, _ in out.append(x) }
    return out
  }

  /// Every item under `x` (not `x` itself), depth-first pre-order.
  func descendants(of x: Handle) -> [Handle] {
    var out: [Handle] = []
    walk(list: nodes[Int(x)].children, visibleOnly: false) { d, _ in out.append(d) }
    return out
  }
}
