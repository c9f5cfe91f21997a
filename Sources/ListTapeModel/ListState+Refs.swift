/// A live item of one state, found once and then asked many questions (a history's look at
/// an item after each event): valid for that state until it changes.
package struct ItemRef: Equatable, Sendable {
  let handle: Handle
}

/// A live section of one state, as `sections` lists them: valid for that state until it
/// changes. Walking a state's own sections this way asks nothing by string.
package struct SectionRef: Equatable, Sendable {
  let handle: Handle
}

/// Questions about one item, asked by `ItemRef`: the by-id questions find the item first
/// (by string, or through an `IdProbe`, which a caller asking at every state of a fold
/// pays for once, not at each state).
extension ListState {
  /// The live item `id` names, nil when absent. - Complexity: O(entries) unless the ids
  /// have their string table; use a probe to ask often.
  package func item(_ id: String) -> ItemRef? {
    var probe = IdProbe(id)
    return item(&probe)
  }

  /// The live item `probe` names, nil when absent.
  package func item(_ probe: inout IdProbe) -> ItemRef? {
    guard let e = forest.findEntry(&probe) else { return nil }
    let x = forest.item(entry: e)
    return x >= 0 ? ItemRef(handle: x) : nil
  }

  /// The item's id.
  package func id(of x: ItemRef) -> String { forest.id(of: x.handle) }

  package func isExpanded(_ x: ItemRef) -> Bool { forest.nodes[Int(x.handle)].expanded }

  /// Whether every ancestor is expanded. - Complexity: O(depth).
  package func isVisible(_ x: ItemRef) -> Bool { forest.isVisible(x.handle) }

  package func isSelected(_ x: ItemRef) -> Bool { forest.nodes[Int(x.handle)].selected }

  /// Depth, 0 for roots. - Complexity: O(depth).
  package func level(of x: ItemRef) -> Int { forest.level(of: x.handle) }

  /// The parent's id, nil for a root.
  package func parent(of x: ItemRef) -> String? {
    let p = forest.nodes[Int(x.handle)].parent
    return p >= 0 ? forest.id(of: p) : nil
  }

  /// The row among its section's visible items, nil when hidden.
  /// - Complexity: O(depth × log siblings).
  package func row(of x: ItemRef) -> Int? { forest.row(of: x.handle) }

  /// Where the item sits: its section, its parent (nil for a root), and the sibling before
  /// it (nil when first). - Complexity: O(depth + log siblings).
  package func placement(of x: ItemRef) -> (section: String, parent: String?, after: String?) {
    let h = x.handle
    let n = forest.nodes[Int(h)]
    let section = forest.sectionID(forest.section(of: h))
    let r = forest.rank(h)
    let previous = r > 0 ? forest.element(at: r - 1, in: forest.listRoot(of: h)) : nil
    return (
      section, n.parent >= 0 ? forest.id(of: n.parent) : nil, previous.map { forest.id(of: $0) }
    )
  }

  package func title(of x: ItemRef) -> String? { forest.title(of: x.handle) }

  package func fields(of x: ItemRef) -> [String: String]? { forest.fields(of: x.handle) }

  /// The live section `probe` names, nil when absent.
  package func section(_ probe: inout IdProbe) -> SectionRef? {
    guard let e = forest.findEntry(&probe) else { return nil }
    let s = forest.section(entry: e)
    return s >= 0 ? SectionRef(handle: s) : nil
  }

  /// The sections in display order. - Complexity: O(sections).
  package var sections: [SectionRef] { forest.sectionOrder.map(SectionRef.init) }

  /// The live section `id` names, nil when absent (`item(_:)`'s cost).
  package func section(_ id: String) -> SectionRef? {
    guard let e = forest.findEntry(id) else { return nil }
    let s = forest.section(entry: e)
    return s >= 0 ? SectionRef(handle: s) : nil
  }

  /// The section's id.
  package func id(of s: SectionRef) -> String { forest.sectionID(s.handle) }

  /// Visible items of the section. - Complexity: O(1).
  package func numberOfItems(in s: SectionRef) -> Int { forest.visibleCount(inSection: s.handle) }

  /// Every item of the section, visible or not. - Complexity: O(1).
  package func numberOfAllItems(in s: SectionRef) -> Int { forest.itemCount(inSection: s.handle) }

  /// Every item of the section in depth-first pre-order.
  package func allItems(in s: SectionRef) -> [String] {
    forest.items(inSection: s.handle, visibleOnly: false).map { forest.id(of: $0) }
  }

  /// The section holding the item.
  package func section(of x: ItemRef) -> SectionRef {
    SectionRef(handle: forest.section(of: x.handle))
  }

  /// The item's index in its section's depth-first pre-order.
  /// - Complexity: O(depth × log siblings).
  package func preorderIndex(of x: ItemRef) -> Int { forest.preorderIndex(of: x.handle) }

  /// The last item of the section in pre-order, nil when it has none.
  /// - Complexity: O(depth × log siblings).
  package func lastItem(in s: SectionRef) -> ItemRef? {
    forest.lastElement(of: forest.sections[Int(s.handle)].roots).map {
      ItemRef(handle: forest.lastDescendant($0))
    }
  }

  /// The item just before `x` in its section's pre-order, nil when `x` is the first.
  /// - Complexity: O(depth × log siblings).
  package func predecessor(of x: ItemRef) -> ItemRef? {
    let h = x.handle
    let r = forest.rank(h)
    if r > 0, let previous = forest.element(at: r - 1, in: forest.listRoot(of: h)) {
      return ItemRef(handle: forest.lastDescendant(previous))
    }
    let p = forest.nodes[Int(h)].parent
    return p >= 0 ? ItemRef(handle: p) : nil
  }

  /// The ids of the sibling list holding `x` (`x` included), in order.
  /// - Complexity: O(siblings).
  package func siblings(of x: ItemRef) -> [String] {
    forest.list(forest.listRoot(of: x.handle)).map { forest.id(of: $0) }
  }

  /// The section's root items in order.
  package func rootItems(in s: SectionRef) -> [String] {
    forest.list(forest.sections[Int(s.handle)].roots).map { forest.id(of: $0) }
  }

  /// Every item of the section in depth-first pre-order (or only the visible ones), with what
  /// a renderer needs; the first `limit` of them (a viewer draws a screenful). - Complexity:
  /// O(items in the section), O(limit × depth) with a limit.
  package func rows(in s: SectionRef, visibleOnly: Bool = false, limit: Int = .max)
    -> [OutlineRow]
  {
    var out: [OutlineRow] = []
    guard limit > 0 else { return out }
    // shown[l]: whether the open item at level l is visible and expanded, so an item at
    // level l + 1 is visible exactly when shown[l] is.
    var shown: [Bool] = []
    try? forest.walk(list: forest.sections[Int(s.handle)].roots, visibleOnly: visibleOnly) {
      (x, level) throws(RowLimit) in
      guard out.count < limit else { throw RowLimit() }
      let n = forest.nodes[Int(x)]
      let (title, fields) = forest.withContent(x) { ItemText.decode($0) }
      shown.removeSubrange(level...)
      let visible = level == 0 || shown[level - 1]
      shown.append(visible && n.expanded)
      out.append(
        OutlineRow(
          id: forest.id(of: x), parent: n.parent >= 0 ? forest.id(of: n.parent) : nil, level: level,
          expanded: n.expanded, hasChildren: n.children >= 0, isVisible: visible,
          isSelected: n.selected, title: title, fields: fields))
    }
    return out
  }
}

/// Ends a walk of rows once a limit is reached.
private struct RowLimit: Error {}
