/// One item as a viewer or a diff sees it: identity, place in the outline, flags, content.
package struct OutlineRow: Equatable, Sendable {
  package var id: String
  package var parent: String?
  package var level: Int
  package var expanded: Bool
  package var hasChildren: Bool
  package var isVisible: Bool
  package var isSelected: Bool
  package var title: String?
  package var fields: [String: String]?
}

extension ListState {
  /// Every item of a section in depth-first pre-order (or only the visible ones), with what
  /// a renderer needs; nil when the section is absent. - Complexity: O(items in the section).
  package func rows(inSection id: String, visibleOnly: Bool = false) -> [OutlineRow]? {
    guard let s = forest.handle(ofSection: id) else { return nil }
    var out: [OutlineRow] = []
    // Visibility is inherited: track the expanded state of the open ancestors by depth.
    var shown: [Bool] = []
    forest.walk(list: forest.sections[Int(s)].roots, visibleOnly: visibleOnly) { x, level in
      let n = forest.nodes[Int(x)]
      let (title, fields) = forest.withContent(x) { ItemText.decode($0) }
      shown.removeSubrange(level...)
      let visible = shown.allSatisfy { $0 }
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

extension ListState {
  /// Number of selected items. - Complexity: O(1).
  package var numberOfSelectedItems: Int { forest.selectedCount }

  /// Where an item sits: its section, parent and previous sibling (nil when first); nil
  /// when absent. - Complexity: O(depth × log siblings).
  package func placement(of id: String) -> (section: String, parent: String?, after: String?)? {
    item(id).map { placement(of: $0) }
  }

  /// Index of an item in its section's depth-first pre-order, nil when absent (for diffs
  /// that read only around what changed). - Complexity: O(depth × log siblings).
  package func preorderIndex(of id: String) -> Int? {
    forest.handle(ofItem: id).map { forest.preorderIndex(of: $0) }
  }
}
