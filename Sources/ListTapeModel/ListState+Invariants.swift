/// The model's invariant checker: every broken internal invariant of a state, as readable
/// strings. Property tests call it after every event; a build with
/// `-Xswiftc -DLISTTAPE_INTERNAL_CHECKS` also checks after every fold step and traps on the
/// first violation (swift-collections' `_invariantCheck` in spirit: compiled out otherwise).
extension ListState {
  /// Every broken internal invariant (empty when sound): B-tree entries and sums, block and
  /// parent links, equal leaf depths, subtree totals and heights, the nesting limit, the id
  /// indexes, and the selection rules. - Complexity: O(items + blocks), recursing once per
  /// level of the outline and of its B-trees (both bounded: 256 levels, log₈ of a list).
  package func invariantViolations() -> [String] {
    var checker = InvariantChecker(forest: forest)
    checker.run(multiple: allowsMultipleSelection)
    return checker.problems
  }

  /// Traps when an invariant is broken, in builds with `LISTTAPE_INTERNAL_CHECKS`; nothing
  /// otherwise.
  @inline(__always) func checkInvariants() {
    #if LISTTAPE_INTERNAL_CHECKS
    let problems = invariantViolations()
    precondition(problems.isEmpty, "broken invariants: " + problems.joined(separator: "; "))
    #endif
  }
}

/// Walks a forest checking what `invariantViolations` lists.
struct InvariantChecker {
  let forest: Forest
  var problems: [String] = []
  var reached = 0
  var selectedReached = 0
  var seen = Set<Handle>()
  var blocksSeen = Set<Handle>()

  init(forest: Forest) { self.forest = forest }

  mutating func fail(_ message: String) {
    if problems.count < 20 { problems.append(message) }
  }

  mutating func run(multiple: Bool) {
    let f = forest
    if f.journal != nil { fail("a batch journal is still open") }
    let mappedSections = f.sectionOf.reduce(0) { $0 + ($1 >= 0 ? 1 : 0) }
    if mappedSections != f.sectionOrder.count {
      fail("sectionOf maps \(mappedSections) entries, sectionOrder holds \(f.sectionOrder.count)")
    }
    let mappedItems = f.handleOf.reduce(0) { $0 + ($1 >= 0 ? 1 : 0) }
    if mappedItems != f.itemCount {
      fail("handleOf maps \(mappedItems) entries, itemCount is \(f.itemCount)")
    }
    if f.handleOf.count > f.ids.count || f.sectionOf.count > f.ids.count {
      fail("entry maps longer than the \(f.ids.count) ids")
    }
    if f.entryOf.count != f.nodes.count || f.content.count != f.nodes.count {
      fail(
        "per-node arrays of \(f.entryOf.count) and \(f.content.count) for \(f.nodes.count) nodes")
    }
    var sectionsSeen = Set<Handle>()
    let rows = f.sectionOrder.reduce(0) { $0 + f.visibleCount(inSection: $1) }
    if rows != f.visibleRows { fail("visibleRows is \(f.visibleRows), the sections show \(rows)") }
    for (k, s) in f.sectionOrder.enumerated() {
      if f.sectionOrder.position(of: s) != k {
        fail("section slot \(s) is at \(k), not \(f.sectionOrder.position(of: s) ?? -1)")
      }
      if f.sectionOrder[k] != s { fail("sectionOrder[\(k)] is not \(s)") }
      if !sectionsSeen.insert(s).inserted { fail("section slot \(s) listed twice") }
      let slot = f.sections[Int(s)]
      if !slot.live { fail("section \(f.sectionID(s)) in order but not live") }
      if f.section(entry: slot.entry) != s { fail("sectionOf[\(slot.entry)] != \(s)") }
      _ = list(slot.roots, parent: -1, section: s, visible: true)
    }
    for s in f.freeSections where f.sections[Int(s)].live { fail("free section \(s) is live") }
    for x in f.freeNodes where f.nodes[Int(x)].live { fail("free node \(x) is live") }
    if reached != f.itemCount {
      fail("reached \(reached) items, itemCount is \(f.itemCount)")
    }
    if selectedReached != f.selectedCount {
      fail("\(selectedReached) nodes flagged selected, selectedCount is \(f.selectedCount)")
    }
    if !multiple && f.selectedCount > 1 {
      fail("\(f.selectedCount) selected in single mode")
    }
    for x in f.nodes.indices where f.nodes[x].live {
      let e = f.entryOf[x]
      if e < 0 || Int(e) >= f.ids.count { fail("node \(x) has entry \(e) of \(f.ids.count)") }
    }
  }

  /// Checks one sibling list's B-tree and everything under it; returns (vis, cnt) sums.
  mutating func list(
    _ root: Handle, parent: Handle, section: Handle, visible: Bool
  ) -> (vis: Int32, cnt: Int32, height: Int) {
    guard root >= 0 else { return (0, 0, -1) }
    if forest.blocks[Int(root)].parent != -1 { fail("root block \(root) has a parent") }
    var leafDepths = Set<Int>()
    let t = block(
      root, depth: 0, leafDepths: &leafDepths, parent: parent, section: section,
      visible: visible)
    if leafDepths.count > 1 {
      let depths = leafDepths.sorted().map { "\($0)" }.joined(separator: ", ")
      fail("list \(root): leaves at depths \(depths)")
    }
    return (t.vis, t.cnt, t.height)
  }

  /// Checks a block, its entries against what they hold, and its sums; returns its sums.
  mutating func block(
    _ b: Handle, depth: Int, leafDepths: inout Set<Int>, parent: Handle, section: Handle,
    visible: Bool
  ) -> (size: Int32, vis: Int32, cnt: Int32, sel: Int32, height: Int) {
    let f = forest
    guard blocksSeen.insert(b).inserted else {
      fail("block \(b) reached twice")
      return (0, 0, 0, 0, 0)
    }
    let info = f.blocks[Int(b)]
    if !info.live { fail("block \(b) reachable but not live") }
    if info.count < 1 || Int(info.count) >= BlockLayout.fanout {
      fail("block \(b) holds \(info.count) entries")
    }
    if info.leaf { leafDepths.insert(depth) }
    var sums: (size: Int32, vis: Int32, cnt: Int32, sel: Int32) = (0, 0, 0, 0)
    var height = 0
    for i in 0..<Int(info.count) {
      let h = f.entry(b, i)
      let actual: (Int32, Int32, Int32, Int32)
      if info.leaf {
        let (v, c, s, t) = item(h, block: b, parent: parent, section: section, visible: visible)
        actual = (1, v, c, s)
        height = max(height, t)
      } else {
        if f.blocks[Int(h)].parent != b { fail("block \(h): parent is not \(b)") }
        let t = block(
          h, depth: depth + 1, leafDepths: &leafDepths, parent: parent, section: section,
          visible: visible)
        actual = (t.size, t.vis, t.cnt, t.sel)
        height = max(height, t.height)
      }
      sums.size += actual.0
      sums.vis += actual.1
      sums.cnt += actual.2
      sums.sel += actual.3
    }
    if (info.size, info.vis, info.cnt, info.sel) != sums {
      fail(
        "block \(b) sums \(info.size) \(info.vis) \(info.cnt) \(info.sel), expected "
          + "\(sums.size) \(sums.vis) \(sums.cnt) \(sums.sel)")
    }
    if Int(info.height) != height { fail("block \(b) height \(info.height), expected \(height)") }
    return (sums.size, sums.vis, sums.cnt, sums.sel, height)
  }

  /// Checks one item and its children; returns its own (vis, cnt, sel, height).
  mutating func item(
    _ t: Handle, block: Handle, parent: Handle, section: Handle, visible: Bool
  ) -> (Int32, Int32, Int32, Int) {
    let f = forest
    let n = f.nodes[Int(t)]
    let id = f.id(of: t)
    guard seen.insert(t).inserted else {
      fail("node \(t) (\(id)) reached twice")
      return (0, 0, 0, 0)
    }
    reached += 1
    if !n.live { fail("\(id): reachable but not live") }
    if f.item(entry: f.entryOf[Int(t)]) != t { fail("handleOf[\(f.entryOf[Int(t)])] != \(t)") }
    if n.block != block { fail("\(id): block \(n.block), expected \(block)") }
    if n.parent != parent { fail("\(id): parent \(n.parent), expected \(parent)") }
    let expectedSection = parent >= 0 ? -1 : section
    if n.section != expectedSection { fail("\(id): section \(n.section)") }
    if n.selected {
      selectedReached += 1
      if !visible { fail("\(id): selected but hidden") }
    }
    let before = selectedReached
    let (cv, cc, ch) = list(
      n.children, parent: t, section: section, visible: visible && n.expanded)
    let vis = 1 + (n.expanded ? cv : 0)
    let cnt = 1 + cc
    let sel = Int32(selectedReached - before) + (n.selected ? 1 : 0)
    let height = ch + 1
    if n.vis != vis { fail("\(id): vis \(n.vis), expected \(vis)") }
    if n.cnt != cnt { fail("\(id): cnt \(n.cnt), expected \(cnt)") }
    if n.sel != sel { fail("\(id): sel \(n.sel), expected \(sel)") }
    if Int(n.height) != height { fail("\(id): height \(n.height), expected \(height)") }
    if parent < 0 && height > Forest.deepestLevel { fail("\(id): an item below level 255") }
    return (vis, cnt, sel, height)
  }
}
