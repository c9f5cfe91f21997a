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

/// A row of a section as its bytes, for a renderer that writes bytes (no `String` per row);
/// the buffers are valid only during the call that hands the row over.
package struct RowText {
  package var level: Int
  package var expanded: Bool
  package var hasChildren: Bool
  package var isVisible: Bool
  package var isSelected: Bool
  /// The item's id (UTF-8).
  package var id: UnsafeBufferPointer<UInt8>
  /// The title, when the item has one (possibly empty).
  package var title: UnsafeBufferPointer<UInt8>?
  /// The fields as key and value, in `String` order of their keys; empty when none.
  package var fields: [(key: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>)]
}

extension ListState {
  /// Calls `body` with each row of the section in depth-first pre-order (or only the
  /// visible ones): `rows(in:visibleOnly:)` read in place. - Complexity: O(items in the
  /// section), without recursion.
  package func forEachRowText(
    in s: SectionRef, visibleOnly: Bool, _ body: (RowText) -> Void
  ) {
    let f = forest
    // shown[l]: whether the open item at level l is visible and expanded.
    var shown: [Bool] = []
    var fields: [(key: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>)] = []
    f.walk(list: f.sections[Int(s.handle)].roots, visibleOnly: visibleOnly) { x, level in
      let n = f.nodes[Int(x)]
      shown.removeSubrange(level...)
      let visible = level == 0 || shown[level - 1]
      shown.append(visible && n.expanded)
      f.withID(of: x) { id in
        f.withContent(x) { blob in
          var title: UnsafeBufferPointer<UInt8>?
          fields.removeAll(keepingCapacity: true)
          if !blob.isEmpty {
            let parts = ItemText.parts(blob)
            title = parts.title?.assumingMemoryBound(to: UInt8.self)
            ItemText.forEachField(parts) { k, v in
              fields.append(
                (k.assumingMemoryBound(to: UInt8.self), v.assumingMemoryBound(to: UInt8.self)))
            }
            Self.sortByKey(&fields)
          }
          body(
            RowText(
              level: level, expanded: n.expanded, hasChildren: n.children >= 0,
              isVisible: visible, isSelected: n.selected, id: id, title: title, fields: fields))
        }
      }
    }
  }

  /// Sorts fields as `String`s sort their keys: by bytes when every key is ASCII (the same
  /// order), else through `String` (canonical order).
  private static func sortByKey(
    _ fields: inout [(key: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>)]
  ) {
    guard fields.count > 1 else { return }
    if fields.allSatisfy({ $0.key.allSatisfy { $0 < 0x80 } }) {
      fields.sort { $0.key.lexicographicallyPrecedes($1.key) }
    } else {
      fields.sort {
        String(decoding: $0.key, as: UTF8.self) < String(decoding: $1.key, as: UTF8.self)
      }
    }
  }
}
