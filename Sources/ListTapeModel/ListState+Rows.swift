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
    section(id).map { rows(in: $0, visibleOnly: visibleOnly) }
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
