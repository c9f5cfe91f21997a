import ListTapeModel

/// The calls an app makes, named as on Apple's snapshots, each one event. Every call applies
/// at once and returns the fault when it faulted (the state is then unchanged, and the event
/// is recorded anyway: the log is the evidence of what would have crashed UIKit).
extension ListStore {
  // MARK: Sections

  /// Appends sections after the last one.
  @discardableResult
  public func appendSections(_ ids: [String]) -> ListFault? { send(.appendSections(ids)) }

  /// Inserts sections before the anchor section.
  @discardableResult
  public func insertSections(_ ids: [String], beforeSection: String) -> ListFault? {
    send(.insertSections(ids, .before(beforeSection)))
  }

  /// Inserts sections after the anchor section.
  @discardableResult
  public func insertSections(_ ids: [String], afterSection: String) -> ListFault? {
    send(.insertSections(ids, .after(afterSection)))
  }

  /// Removes sections with their items; absent ids are ignored.
  @discardableResult
  public func deleteSections(_ ids: [String]) -> ListFault? { send(.deleteSections(ids)) }

  /// Moves a section before the anchor section.
  @discardableResult
  public func moveSection(_ id: String, beforeSection: String) -> ListFault? {
    send(.moveSection(id, .before(beforeSection)))
  }

  /// Moves a section after the anchor section.
  @discardableResult
  public func moveSection(_ id: String, afterSection: String) -> ListFault? {
    send(.moveSection(id, .after(afterSection)))
  }

  /// Records that sections were reloaded (their content is the app's).
  @discardableResult
  public func reloadSections(_ ids: [String]) -> ListFault? { send(.reloadSections(ids)) }

  // MARK: Items

  /// Appends items (with their subtrees) as last roots of a section (the last when nil).
  @discardableResult
  public func appendItems(_ items: [OutlineNode], toSection section: String? = nil) -> ListFault? {
    send(.appendItems(items, section: section, parent: nil))
  }

  /// Appends bare items as last roots of a section (the last when nil).
  @discardableResult
  public func appendItems(_ ids: [String], toSection section: String? = nil) -> ListFault? {
    appendItems(ids.map { OutlineNode($0) }, toSection: section)
  }

  /// Appends items as last children of `parent` (Apple's `append(_:to:)` on a section
  /// snapshot).
  @discardableResult
  public func appendItems(_ items: [OutlineNode], toParent parent: String) -> ListFault? {
    send(.appendItems(items, section: nil, parent: parent))
  }

  /// Inserts items (with their subtrees) as siblings right before the anchor.
  @discardableResult
  public func insertItems(_ items: [OutlineNode], beforeItem: String) -> ListFault? {
    send(.insertItems(items, .before(beforeItem)))
  }

  /// Inserts items as siblings right after the anchor's whole subtree.
  @discardableResult
  public func insertItems(_ items: [OutlineNode], afterItem: String) -> ListFault? {
    send(.insertItems(items, .after(afterItem)))
  }

  /// Removes items with their descendants (swipe-to-delete); absent ids are ignored.
  @discardableResult
  public func deleteItems(_ ids: [String]) -> ListFault? { send(.deleteItems(ids)) }

  /// Removes every item; the sections stay.
  @discardableResult
  public func deleteAllItems() -> ListFault? { send(.deleteAllItems) }

  /// Moves an item with its subtree to right before the anchor, as its sibling.
  @discardableResult
  public func moveItem(_ id: String, beforeItem: String) -> ListFault? {
    send(.moveItem(id, .before(beforeItem)))
  }

  /// Moves an item to right after the anchor's whole subtree, as its next sibling.
  @discardableResult
  public func moveItem(_ id: String, afterItem: String) -> ListFault? {
    send(.moveItem(id, .after(afterItem)))
  }

  /// Drops every descendant of `parent`, then attaches `items` as its children.
  @discardableResult
  public func replaceChildren(of parent: String, with items: [OutlineNode]) -> ListFault? {
    send(.replaceChildren(parent: parent, items: items))
  }

  /// Records that items were reloaded (their content is the app's).
  @discardableResult
  public func reloadItems(_ ids: [String]) -> ListFault? { send(.reloadItems(ids)) }

  /// Records that items were reconfigured in place.
  @discardableResult
  public func reconfigureItems(_ ids: [String]) -> ListFault? { send(.reconfigureItems(ids)) }

  /// Sets an item's title (when given) and merges `fields` key by key.
  @discardableResult
  public func updateItem(_ id: String, title: String? = nil, fields: [String: String]? = nil)
    -> ListFault?
  {
    send(.update(item: id, title: title, fields: fields))
  }

  // MARK: Outline and selection

  /// Expands items (`sectionSnapshotHandlers.willExpandItem`).
  @discardableResult
  public func expand(_ ids: [String]) -> ListFault? { send(.expand(ids)) }

  /// Collapses items (`willCollapseItem`); items it hides leave the selection.
  @discardableResult
  public func collapse(_ ids: [String]) -> ListFault? { send(.collapse(ids)) }

  /// Selects visible items (`didSelectItemAt`); in single mode replaces the selection.
  @discardableResult
  public func select(_ ids: [String]) -> ListFault? { send(.select(ids)) }

  /// Deselects these items (`didDeselectItemAt`), or everything when nil.
  @discardableResult
  public func deselect(_ ids: [String]? = nil) -> ListFault? { send(.deselect(ids)) }

  /// Sets the selection mode (`allowsMultipleSelection`); single clears the selection.
  @discardableResult
  public func setAllowsMultipleSelection(_ value: Bool) -> ListFault? {
    send(.configure(multipleSelection: value))
  }

  /// Records a bookmark (a screen shown, a test step) that `show --at mark:LABEL` finds.
  @discardableResult
  public func mark(_ label: String) -> ListFault? { send(.mark(label)) }
}
