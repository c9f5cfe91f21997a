import ListTapeModel

@testable import ListTapeStore

/// The log's events as calls on the store's core, one event each, returning the fault: the
/// tests of the store's mechanics (buffer, gaps, threads, lifecycle) send many events, and
/// read better as calls. Apps edit through `ListStore.perform`, where the verbs live.
extension StoreCore {
  // MARK: Sections

  /// Appends sections after the last one.
  @discardableResult
  func appendSections(_ ids: [String]) -> ListFault? { send(.appendSections(ids)) }

  /// Inserts sections before the anchor section.
  @discardableResult
  func insertSections(_ ids: [String], beforeSection: String) -> ListFault? {
    send(.insertSections(ids, .before(beforeSection)))
  }

  /// Inserts sections after the anchor section.
  @discardableResult
  func insertSections(_ ids: [String], afterSection: String) -> ListFault? {
    send(.insertSections(ids, .after(afterSection)))
  }

  /// Removes sections with their items; absent ids are ignored.
  @discardableResult
  func deleteSections(_ ids: [String]) -> ListFault? { send(.deleteSections(ids)) }

  /// Moves a section before the anchor section.
  @discardableResult
  func moveSection(_ id: String, beforeSection: String) -> ListFault? {
    send(.moveSection(id, .before(beforeSection)))
  }

  /// Moves a section after the anchor section.
  @discardableResult
  func moveSection(_ id: String, afterSection: String) -> ListFault? {
    send(.moveSection(id, .after(afterSection)))
  }

  /// Records that sections were reloaded (their content is the app's).
  @discardableResult
  func reloadSections(_ ids: [String]) -> ListFault? { send(.reloadSections(ids)) }

  // MARK: Items

  /// Appends items (with their subtrees) as last roots of a section (the last when nil).
  @discardableResult
  func appendItems(_ items: [OutlineNode], toSection section: String? = nil) -> ListFault? {
    send(.appendItems(items, section: section, parent: nil))
  }

  /// Appends bare items as last roots of a section (the last when nil).
  @discardableResult
  func appendItems(_ ids: [String], toSection section: String? = nil) -> ListFault? {
    appendItems(ids.map { OutlineNode($0) }, toSection: section)
  }

  /// Appends items as last children of `parent` (Apple's `append(_:to:)` on a section
  /// snapshot).
  @discardableResult
  func appendItems(_ items: [OutlineNode], toParent parent: String) -> ListFault? {
    send(.appendItems(items, section: nil, parent: parent))
  }

  /// Inserts items (with their subtrees) as siblings right before the anchor.
  @discardableResult
  func insertItems(_ items: [OutlineNode], beforeItem: String) -> ListFault? {
    send(.insertItems(items, .before(beforeItem)))
  }

  /// Inserts items as siblings right after the anchor's whole subtree.
  @discardableResult
  func insertItems(_ items: [OutlineNode], afterItem: String) -> ListFault? {
    send(.insertItems(items, .after(afterItem)))
  }

  /// Removes items with their descendants (swipe-to-delete); absent ids are ignored.
  @discardableResult
  func deleteItems(_ ids: [String]) -> ListFault? { send(.deleteItems(ids)) }

  /// Removes every item; the sections stay.
  @discardableResult
  func deleteAllItems() -> ListFault? { send(.deleteAllItems) }

  /// Moves an item with its subtree to right before the anchor, as its sibling.
  @discardableResult
  func moveItem(_ id: String, beforeItem: String) -> ListFault? {
    send(.moveItem(id, .before(beforeItem)))
  }

  /// Moves an item to right after the anchor's whole subtree, as its next sibling.
  @discardableResult
  func moveItem(_ id: String, afterItem: String) -> ListFault? {
    send(.moveItem(id, .after(afterItem)))
  }

  /// Drops every descendant of `parent`, then attaches `items` as its children.
  @discardableResult
  func replaceChildren(of parent: String, with items: [OutlineNode]) -> ListFault? {
    send(.replaceChildren(parent: parent, items: items))
  }

  /// Records that items were reloaded (their content is the app's).
  @discardableResult
  func reloadItems(_ ids: [String]) -> ListFault? { send(.reloadItems(ids)) }

  /// Records that items were reconfigured in place.
  @discardableResult
  func reconfigureItems(_ ids: [String]) -> ListFault? { send(.reconfigureItems(ids)) }

  /// Sets an item's title (when given) and merges `fields` key by key.
  @discardableResult
  func updateItem(_ id: String, title: String? = nil, fields: [String: String]? = nil)
    -> ListFault?
  {
    send(.update(item: id, title: title, fields: fields))
  }

  // MARK: Outline and selection

  /// Expands items (`sectionSnapshotHandlers.willExpandItem`).
  @discardableResult
  func expand(_ ids: [String]) -> ListFault? { send(.expand(ids)) }

  /// Collapses items (`willCollapseItem`); items it hides leave the selection.
  @discardableResult
  func collapse(_ ids: [String]) -> ListFault? { send(.collapse(ids)) }

  /// Selects visible items (`didSelectItemAt`); in single mode replaces the selection.
  @discardableResult
  func select(_ ids: [String]) -> ListFault? { send(.select(ids)) }

  /// Deselects these items (`didDeselectItemAt`), or everything when nil.
  @discardableResult
  func deselect(_ ids: [String]? = nil) -> ListFault? { send(.deselect(ids)) }

  /// Sets the selection mode (`allowsMultipleSelection`); single clears the selection.
  @discardableResult
  func setAllowsMultipleSelection(_ value: Bool) -> ListFault? {
    send(.configure(multipleSelection: value))
  }

  /// Records a bookmark (a screen shown, a test step) that `show --at mark:LABEL` finds.
  @discardableResult
  func mark(_ label: String) -> ListFault? { send(.mark(label)) }
}
