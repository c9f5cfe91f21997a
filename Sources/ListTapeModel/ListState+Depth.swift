extension ListState {
  /// The deepest level any item is at (0 when every item is a root), nil without items:
  /// the greatest height among each section's roots, which their blocks already keep.
  /// - Complexity: O(sections).
  package var deepestLevel: Int? {
    guard numberOfAllItems > 0 else { return nil }
    var deepest: UInt8 = 0
    for section in forest.sections where section.live && section.roots >= 0 {
      deepest = max(deepest, forest.blocks[Int(section.roots)].height)
    }
    return Int(deepest)
  }
}

/// The list's counts after an event, read in one call (a table of states: `export`'s
/// columns).
package struct ListCounts: Sendable, Equatable {
  package var sections: Int
  package var items: Int
  package var visible: Int
  package var selected: Int
  /// `deepestLevel`, read only when asked for (nil otherwise, and without items).
  package var deepest: Int?
  /// The ids' numbering (`idsLineage`).
  package var lineage: UInt64
}

extension ListState {
  /// The counts, the deepest level when `depth`, and the ids' numbering. `mutating` though
  /// it changes nothing: a caller in another module holding the state `inout` (a fold's
  /// callback) then passes it in place, where a getter would copy the whole state first.
  package mutating func counts(depth: Bool) -> ListCounts {
    ListCounts(
      sections: numberOfSections, items: numberOfAllItems, visible: numberOfItems,
      selected: numberOfSelectedItems, deepest: depth ? deepestLevel : nil,
      lineage: idsLineage)
  }
}
