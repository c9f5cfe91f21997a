/// What a batch overwrote, so that a fault can put everything back.
struct Journal {
  var nodeCount: Int
  var sectionCount: Int
  var nodes: [(Handle, Node)] = []
  var content: [(Handle, ItemContent)] = []
  var sections: [(Handle, SectionSlot)] = []
  var itemIndex: [(String, Handle?)] = []
  var sectionIndex: [(String, Handle?)] = []
  var sectionOrder: [Handle]?
  var selection: Set<Handle>
  var priorities: SplitMix64
  /// Slots freed during the batch; recycled only once it commits.
  var pendingFreeNodes: [Handle] = []
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
      nodeCount: nodes.count, sectionCount: sections.count, selection: selection,
      priorities: priorities)
  }

  /// Keeps every change since `begin()`.
  mutating func commit() {
    guard let j = journal else { return }
    journal = nil
    freeNodes.append(contentsOf: j.pendingFreeNodes)
    freeSections.append(contentsOf: j.pendingFreeSections)
  }

  /// Undoes every change since `begin()`.
  mutating func rollback() {
    guard let j = journal else { return }
    journal = nil
    for (x, n) in j.nodes.reversed() { nodes[Int(x)] = n }
    for (x, c) in j.content.reversed() { content[Int(x)] = c }
    for (s, v) in j.sections.reversed() { sections[Int(s)] = v }
    for (k, v) in j.itemIndex.reversed() { itemIndex[k] = v }
    for (k, v) in j.sectionIndex.reversed() { sectionIndex[k] = v }
    if let order = j.sectionOrder { sectionOrder = order }
    nodes.removeSubrange(j.nodeCount...)
    content.removeSubrange(j.nodeCount...)
    sections.removeSubrange(j.sectionCount...)
    selection = j.selection
    priorities = j.priorities
  }

  // MARK: Allocation

  mutating func nextPriority() -> UInt32 {
    UInt32(truncatingIfNeeded: priorities.next())
  }

  /// A fresh, detached node registered under `id`.
  mutating func allocate(_ id: String) -> Handle {
    let node = Node(priority: nextPriority())
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

  // MARK: Treap primitives

  /// Recomputes the treap aggregates of `t` from its own values and its treap children;
  /// returns whether anything changed.
  @discardableResult
  @inline(__always) mutating func pull(_ t: Handle) -> Bool {
    let n = nodes[Int(t)]
    let sz = 1 + size(n.left) + size(n.right)
    let vs = n.vis + visSum(n.left) + visSum(n.right)
    let cs = n.cnt + cntSum(n.left) + cntSum(n.right)
    let ss = n.sel + selSum(n.left) + selSum(n.right)
    if n.size != sz || n.visSum != vs || n.cntSum != cs || n.selSum != ss {
      edit(t) {
        $0.size = sz
        $0.visSum = vs
        $0.cntSum = cs
        $0.selSum = ss
      }
      return true
    }
    return false
  }

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

  /// Carries a change of `x`'s own totals up to its section's root list: into the sums of
  /// `x` and its treap ancestors, then into the parent's own totals (rows only when the
  /// parent is expanded), and so on. Adds deltas along the path instead of recomputing
  /// sums, so it never reads a sibling off the path (on big lists each would be a cache
  /// miss); stops once nothing changes. - Complexity: O(depth × log siblings).
  mutating func propagate(from x: Handle, _ change: Totals) {
    var c = x
    var d = change
    while !d.isZero {
      var t = c
      while t >= 0 {
        edit(t) {
          $0.visSum &+= d.vis
          $0.cntSum &+= d.cnt
          $0.selSum &+= d.sel
        }
        t = nodes[Int(t)].up
      }
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

  @inline(__always) mutating func setUp(_ t: Handle, _ u: Handle) {
    if t >= 0 && nodes[Int(t)].up != u { edit(t) { $0.up = u } }
  }

  /// Joins two treaps, every element of `a` before every element of `b`.
  mutating func merge(_ a: Handle, _ b: Handle) -> Handle {
    if a < 0 { return b }
    if b < 0 { return a }
    if nodes[Int(a)].priority >= nodes[Int(b)].priority {
      let r = merge(nodes[Int(a)].right, b)
      edit(a) { $0.right = r }
      setUp(r, a)
      pull(a)
      return a
    } else {
      let l = merge(a, nodes[Int(b)].left)
      edit(b) { $0.left = l }
      setUp(l, b)
      pull(b)
      return b
    }
  }

  /// Splits a treap into its first `k` elements and the rest.
  mutating func split(_ t: Handle, _ k: Int32) -> (Handle, Handle) {
    if t < 0 { return (-1, -1) }
    let ls = size(nodes[Int(t)].left)
    if k <= ls {
      let (a, b) = split(nodes[Int(t)].left, k)
      edit(t) { $0.left = b }
      setUp(b, t)
      setUp(a, -1)
      pull(t)
      return (a, t)
    } else {
      let (a, b) = split(nodes[Int(t)].right, k - ls - 1)
      edit(t) { $0.right = a }
      setUp(a, t)
      setUp(b, -1)
      pull(t)
      return (t, b)
    }
  }

  /// Sets the root of the sibling list owned by item `p` (or by section `s` when p < 0).
  mutating func setListRoot(parent p: Handle, section s: Handle, _ root: Handle) {
    setUp(root, -1)
    if p >= 0 {
      if nodes[Int(p)].children != root { edit(p) { $0.children = root } }
    } else if sections[Int(s)].roots != root {
      editSection(s) { $0.roots = root }
    }
  }

  /// Builds a treap over `items` in order in O(n) (Cartesian tree on priorities).
  mutating func buildList(_ items: [Handle]) -> Handle {
    if items.count == 1 {
      let x = items[0]
      edit(x) {
        $0.left = -1
        $0.right = -1
        $0.up = -1
      }
      pull(x)
      return x
    }
    var stack: [Handle] = []
    for x in items {
      var last: Handle = -1
      while let top = stack.last, nodes[Int(top)].priority < nodes[Int(x)].priority {
        last = stack.removeLast()
      }
      edit(x) {
        $0.left = last
        $0.right = -1
        $0.up = -1
      }
      if last >= 0 { edit(last) { $0.up = x } }
      if let top = stack.last {
        edit(top) { $0.right = x }
        edit(x) { $0.up = top }
      }
      stack.append(x)
    }
    guard let root = stack.first else { return -1 }
    pullSubtree(root)
    return root
  }

  /// Recomputes aggregates bottom-up over a whole treap (post-order, iterative).
  private mutating func pullSubtree(_ root: Handle) {
    var order: [Handle] = []
    var stack: [Handle] = [root]
    while let t = stack.popLast() {
      order.append(t)
      let n = nodes[Int(t)]
      if n.left >= 0 { stack.append(n.left) }
      if n.right >= 0 { stack.append(n.right) }
    }
    for t in order.reversed() { pull(t) }
  }

  // MARK: List edits

  /// Inserts detached items (each with its subtree) at position `pos` of the list owned by
  /// `parent` (or the root list of `section`; at the end when `pos` is nil), then fixes
  /// every aggregate above them. - Complexity: O(k + depth × log siblings).
  mutating func insertList(_ xs: [Handle], parent p: Handle, section s: Handle, at pos: Int?) {
    guard !xs.isEmpty else { return }
    for x in xs {
      edit(x) {
        $0.parent = p
        $0.section = p >= 0 ? -1 : s
      }
    }
    let built = buildList(xs)
    let root = p >= 0 ? nodes[Int(p)].children : sections[Int(s)].roots
    let merged: Handle
    if let pos {
      let (a, b) = split(root, Int32(pos))
      merged = merge(merge(a, built), b)
    } else {
      merged = merge(root, built)
    }
    setListRoot(parent: p, section: s, merged)
    if p >= 0 { propagate(from: p, refreshTotals(p)) }
  }

  /// Inserts detached item `x` (with its subtree) right before or after its sibling-to-be
  /// `a`: as a treap leaf beside `a`, counted into the sums on its path, then rotated up to
  /// its priority. Touches about one treap path, where finding a rank, splitting and
  /// merging would read a sibling beside each step. - Complexity: O(depth × log siblings).
  mutating func insert(_ x: Handle, nextTo a: Handle, after: Bool) {
    let p = nodes[Int(a)].parent
    let s = p >= 0 ? -1 : nodes[Int(a)].section
    edit(x) {
      $0.parent = p
      $0.section = p >= 0 ? -1 : s
      $0.left = -1
      $0.right = -1
      $0.up = -1
    }
    pull(x)
    // The leaf slot next to `a` in order: `a` itself, or the nearest end of its subtree.
    var u = a
    var asRight = after
    if after, nodes[Int(a)].right >= 0 {
      u = nodes[Int(a)].right
      while nodes[Int(u)].left >= 0 { u = nodes[Int(u)].left }
      asRight = false
    } else if !after, nodes[Int(a)].left >= 0 {
      u = nodes[Int(a)].left
      while nodes[Int(u)].right >= 0 { u = nodes[Int(u)].right }
      asRight = true
    }
    edit(u) {
      if asRight { $0.right = x } else { $0.left = x }
    }
    edit(x) { $0.up = u }
    let n = nodes[Int(x)]
    var t = u
    while t >= 0 {
      edit(t) {
        $0.size &+= 1
        $0.visSum &+= n.vis
        $0.cntSum &+= n.cnt
        $0.selSum &+= n.sel
      }
      t = nodes[Int(t)].up
    }
    while true {
      let up = nodes[Int(x)].up
      guard up >= 0, nodes[Int(up)].priority < n.priority else { break }
      rotateUp(x)
    }
    if nodes[Int(x)].up < 0 { setListRoot(parent: p, section: s, x) }
    if p >= 0 { propagate(from: p, refreshTotals(p)) }
  }

  /// Rotates `x` above its treap parent, keeping the order and every aggregate.
  private mutating func rotateUp(_ x: Handle) {
    let u = nodes[Int(x)].up
    let g = nodes[Int(u)].up
    if nodes[Int(u)].left == x {
      let b = nodes[Int(x)].right
      edit(u) { $0.left = b }
      setUp(b, u)
      edit(x) { $0.right = u }
    } else {
      let b = nodes[Int(x)].left
      edit(u) { $0.right = b }
      setUp(b, u)
      edit(x) { $0.left = u }
    }
    edit(u) { $0.up = x }
    edit(x) { $0.up = g }
    if g >= 0 {
      edit(g) {
        if $0.left == u { $0.left = x } else { $0.right = x }
      }
    }
    pull(u)
    pull(x)
  }

  /// Removes `x` (keeping its subtree under it) from its sibling list and fixes aggregates.
  mutating func detach(_ x: Handle) {
    let n = nodes[Int(x)]
    let m = merge(n.left, n.right)
    let u = n.up
    if u >= 0 {
      if nodes[Int(u)].left == x {
        edit(u) { $0.left = m }
      } else {
        edit(u) { $0.right = m }
      }
      setUp(m, u)
      // `u` and its treap ancestors lose exactly `x` (its treap children live on in `m`).
      var t = u
      while t >= 0 {
        edit(t) {
          $0.size &-= 1
          $0.visSum &-= n.vis
          $0.cntSum &-= n.cnt
          $0.selSum &-= n.sel
        }
        t = nodes[Int(t)].up
      }
    } else {
      setListRoot(parent: n.parent, section: n.section, m)
    }
    edit(x) {
      $0.left = -1
      $0.right = -1
      $0.up = -1
    }
    if n.parent >= 0 { propagate(from: n.parent, refreshTotals(n.parent)) }
    edit(x) {
      $0.parent = -1
      $0.section = -1
    }
  }

  /// Frees every node of the subtree rooted at detached `x`, `x` included.
  mutating func releaseSubtree(_ x: Handle) {
    var stack: [Handle] = [x]
    while let t = stack.popLast() {
      forEachInList(nodes[Int(t)].children) { stack.append($0) }
      release(t)
    }
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

  /// Deselects every selected item below `x` (and `x` itself when `includingSelf`),
  /// visiting only treap nodes whose subtree holds a selection.
  /// - Complexity: O(deselected × depth × log siblings).
  mutating func deselectSubtree(of x: Handle, includingSelf: Bool) {
    guard nodes[Int(x)].sel > 0 else { return }
    var found: [Handle] = []
    if includingSelf && nodes[Int(x)].selected { found.append(x) }
    var stack: [Handle] = [nodes[Int(x)].children]
    while let t = stack.popLast() {
      guard t >= 0, selSum(t) > 0 else { continue }
      let n = nodes[Int(t)]
      if n.selected { found.append(t) }
      stack.append(n.left)
      stack.append(n.right)
      if n.sel > (n.selected ? 1 : 0) { stack.append(n.children) }
    }
    for y in found { setSelected(y, false) }
  }
}
