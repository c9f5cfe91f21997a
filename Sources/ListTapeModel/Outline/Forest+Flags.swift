/// The two flags whose changes the totals carry up: expanded and selected.
extension Forest {
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
    selectedCount &+= value ? 1 : -1
    if nodes[Int(x)].live { propagate(from: x, refreshTotals(x)) }
  }

  /// Selected items in a list and below it, found through the selected counts of entries
  /// (only blocks and items whose subtree holds a selection are visited).
  /// - Complexity: O(selected × depth × log siblings × fan-out). Inlined: called from a
  /// mutating method, an outlined call would copy the forest first.
  @inline(__always) func selectedItems(inList root: Handle) -> [Handle] {
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

  /// Every selected item, section after section, in display order.
  /// - Complexity: O(selected × depth × log siblings × fan-out + sections).
  func selectedItems() -> [Handle] {
    guard selectedCount > 0 else { return [] }
    var found: [Handle] = []
    for s in sectionOrder {
      let root = sections[Int(s)].roots
      guard root >= 0, blocks[Int(root)].sel > 0 else { continue }
      found.append(contentsOf: selectedItemsInOrder(inList: root))
      if found.count == selectedCount { break }
    }
    return found
  }

  /// The selected items in a list and below it, in display order (pre-order).
  func selectedItemsInOrder(inList root: Handle) -> [Handle] {
    var found: [Handle] = []
    // Explicit stack of (block, next entry), visiting only entries that hold a selection.
    var stack: [(Handle, Int)] = [(root, 0)]
    while let (b, i) = stack.last {
      let block = blocks[Int(b)]
      if i == Int(block.count) {
        stack.removeLast()
        continue
      }
      stack[stack.count &- 1].1 = i &+ 1
      let h = entry(b, i)
      if !block.leaf {
        if blocks[Int(h)].sel > 0 { stack.append((h, 0)) }
        continue
      }
      let n = nodes[Int(h)]
      if n.sel == 0 { continue }
      if n.selected { found.append(h) }
      if n.children >= 0 && blocks[Int(n.children)].sel > 0 { stack.append((n.children, 0)) }
    }
    return found
  }

  /// Deselects every selected item below `x` (and `x` itself when `includingSelf`).
  /// - Complexity: O(deselected × depth × log siblings × fan-out).
  mutating func deselectSubtree(of x: Handle, includingSelf: Bool) {
    let n = nodes[Int(x)]
    let own: Int32 = n.selected ? 1 : 0
    if n.sel > own {
      for y in selectedItems(inList: n.children) { setSelected(y, false) }
    }
    if includingSelf && n.selected { setSelected(x, false) }
  }

}
