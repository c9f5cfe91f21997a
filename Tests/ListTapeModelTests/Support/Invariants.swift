@testable import ListTapeModel

/// Every broken internal invariant of the state's forest, as readable strings (empty when
/// sound): treap aggregates, heap order, parent and treap links, subtree totals, the id
/// indexes, and the selection rules.
func invariantViolations(_ state: ListState) -> [String] {
  var checker = InvariantChecker(forest: state.forest)
  checker.run(multiple: state.allowsMultipleSelection)
  return checker.problems
}

private struct InvariantChecker {
  let forest: Forest
  var problems: [String] = []
  var reached = 0
  var selectedReached = 0
  var seen = Set<Handle>()

  init(forest: Forest) { self.forest = forest }

  mutating func fail(_ message: String) {
    if problems.count < 20 { problems.append(message) }
  }

  mutating func run(multiple: Bool) {
    let f = forest
    if f.journal != nil { fail("a batch journal is still open") }
    if f.sectionIndex.count != f.sectionOrder.count {
      fail("sectionIndex has \(f.sectionIndex.count) ids, sectionOrder \(f.sectionOrder.count)")
    }
    var sectionsSeen = Set<Handle>()
    for s in f.sectionOrder {
      if !sectionsSeen.insert(s).inserted { fail("section slot \(s) listed twice") }
      let slot = f.sections[Int(s)]
      if !slot.live { fail("section \(slot.id) in order but not live") }
      if f.sectionIndex[slot.id] != s { fail("sectionIndex[\(slot.id)] != \(s)") }
      _ = treap(slot.roots, up: -1, parent: -1, section: s, visible: true)
    }
    for s in f.freeSections where f.sections[Int(s)].live { fail("free section \(s) is live") }
    for x in f.freeNodes where f.nodes[Int(x)].live { fail("free node \(x) is live") }
    if reached != f.itemIndex.count {
      fail("reached \(reached) items, itemIndex holds \(f.itemIndex.count)")
    }
    if selectedReached != f.selection.count {
      fail("\(selectedReached) nodes flagged selected, selection holds \(f.selection.count)")
    }
    if !multiple && f.selection.count > 1 {
      fail("\(f.selection.count) selected in single mode")
    }
  }

  /// Checks one sibling treap and everything under it; returns (size, visSum, cntSum).
  mutating func treap(
    _ t: Handle, up: Handle, parent: Handle, section: Handle, visible: Bool
  ) -> (Int32, Int32, Int32) {
    guard t >= 0 else { return (0, 0, 0) }
    let f = forest
    let n = f.nodes[Int(t)]
    let id = f.content[Int(t)].id
    guard seen.insert(t).inserted else {
      fail("node \(t) (\(id)) reached twice")
      return (0, 0, 0)
    }
    reached += 1
    if !n.live { fail("\(id): reachable but not live") }
    if f.itemIndex[id] != t { fail("itemIndex[\(id)] != \(t)") }
    if n.up != up { fail("\(id): up \(n.up), expected \(up)") }
    if up >= 0 && f.nodes[Int(up)].priority < n.priority { fail("\(id): heap order broken") }
    if n.parent != parent { fail("\(id): parent \(n.parent), expected \(parent)") }
    let expectedSection = parent >= 0 ? -1 : section
    if n.section != expectedSection { fail("\(id): section \(n.section)") }
    if n.selected != f.selection.contains(t) { fail("\(id): selected flag disagrees") }
    if n.selected {
      selectedReached += 1
      if !visible { fail("\(id): selected but hidden") }
    }
    let (ls, lv, lc) = treap(n.left, up: t, parent: parent, section: section, visible: visible)
    let (rs, rv, rc) = treap(n.right, up: t, parent: parent, section: section, visible: visible)
    let (_, cv, cc) = treap(
      n.children, up: -1, parent: t, section: section, visible: visible && n.expanded)
    let vis = 1 + (n.expanded ? cv : 0)
    let cnt = 1 + cc
    if n.vis != vis { fail("\(id): vis \(n.vis), expected \(vis)") }
    if n.cnt != cnt { fail("\(id): cnt \(n.cnt), expected \(cnt)") }
    if n.size != 1 + ls + rs { fail("\(id): size \(n.size), expected \(1 + ls + rs)") }
    if n.visSum != vis + lv + rv { fail("\(id): visSum \(n.visSum)") }
    if n.cntSum != cnt + lc + rc { fail("\(id): cntSum \(n.cntSum)") }
    return (1 + ls + rs, vis + lv + rv, cnt + lc + rc)
  }
}
