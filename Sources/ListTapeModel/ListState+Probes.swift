/// A live item of one state, found once and then asked many questions (a history's look at
/// an item after each event): valid for that state until it changes.
package struct ItemRef: Equatable, Sendable {
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

  /// Visible items of the section `probe` names, nil when absent.
  package func numberOfItems(inSection probe: inout IdProbe) -> Int? {
    guard let e = forest.findEntry(&probe) else { return nil }
    let s = forest.section(entry: e)
    return s >= 0 ? forest.visibleCount(inSection: s) : nil
  }
}
