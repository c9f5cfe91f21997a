/// The whole state of an expandable list: Apple's data-source snapshot (ordered sections),
/// a section snapshot (an outline) inside every section, and the selection.
///
/// Mirrors `NSDiffableDataSourceSnapshot` and `NSDiffableDataSourceSectionSnapshot`, with
/// `String` identifiers unique across the list. Misuse throws `ListFault` instead of
/// trapping and leaves the state unchanged. Queries about one item never scan the list.
package struct ListState: Sendable {
  var forest = Forest()
  /// Whether several items may be selected at once (single selection until configured).
  package internal(set) var allowsMultipleSelection = false

  /// An empty list: no sections, single selection.
  package init() {}

  /// About how many bytes the state holds: what a copy kept beside a fold costs once the
  /// fold has written to it (a budget for states saved along the way).
  package var heldBytes: Int { forest.heldBytes }
}

// MARK: - Data-source snapshot: sections

extension ListState {
  /// Section identifiers in display order.
  package var sectionIdentifiers: [String] {
    forest.sectionOrder.map { forest.sectionID($0) }
  }

  package var numberOfSections: Int { forest.sectionOrder.count }

  /// Position of a section, or nil when absent. - Complexity: O(log sections).
  package func indexOfSection(_ id: String) -> Int? {
    forest.handle(ofSection: id).flatMap { forest.sectionPosition($0) }
  }

  package func containsSection(_ id: String) -> Bool { forest.handle(ofSection: id) != nil }

  package mutating func appendSections(_ ids: [String]) throws(ListFault) {
    try apply(Event(.appendSections(ids)))
  }

  package mutating func insertSections(_ ids: [String], beforeSection: String) throws(ListFault) {
    try apply(Event(.insertSections(ids, .before(beforeSection))))
  }

  package mutating func insertSections(_ ids: [String], afterSection: String) throws(ListFault) {
    try apply(Event(.insertSections(ids, .after(afterSection))))
  }

  /// Removes sections with all their items; absent ids are ignored.
  package mutating func deleteSections(_ ids: [String]) {
    try? apply(Event(.deleteSections(ids)))
  }

  package mutating func moveSection(_ id: String, beforeSection: String) throws(ListFault) {
    try apply(Event(.moveSection(id, .before(beforeSection))))
  }

  package mutating func moveSection(_ id: String, afterSection: String) throws(ListFault) {
    try apply(Event(.moveSection(id, .after(afterSection))))
  }

  /// No structural change; every section must exist.
  package func reloadSections(_ ids: [String]) throws(ListFault) {
    for id in ids where !containsSection(id) { throw .missingSection(id) }
  }
}

// MARK: - Data-source snapshot: items

extension ListState {
  /// Every visible item, section after section, in display order.
  package var itemIdentifiers: [String] {
    forest.sectionOrder.flatMap { s in
      forest.items(inSection: s, visibleOnly: true).map { forest.id(of: $0) }
    }
  }

  /// Visible items of a section (what the collection view shows), or nil when absent.
  package func itemIdentifiers(inSection id: String) -> [String]? {
    guard let s = section(id) else { return nil }
    return forest.items(inSection: s.handle, visibleOnly: true).map { forest.id(of: $0) }
  }

  /// Visible rows in the whole list. - Complexity: O(1).
  package var numberOfItems: Int { forest.visibleRows }

  /// Visible rows of a section, or nil when absent. - Complexity: O(1).
  package func numberOfItems(inSection id: String) -> Int? {
    section(id).map { numberOfItems(in: $0) }
  }

  /// Every item of the list, visible or not. - Complexity: O(1).
  package var numberOfAllItems: Int { forest.itemCount }

  package func sectionIdentifier(containingItem id: String) -> String? {
    forest.handle(ofItem: id).map { forest.sectionID(forest.section(of: $0)) }
  }

  /// Index of a visible item among all visible items of the list, nil when hidden or absent.
  /// - Complexity: O(sections + depth × log siblings).
  package func indexOfItem(_ id: String) -> Int? {
    guard let x = forest.handle(ofItem: id), let row = forest.row(of: x) else { return nil }
    let s = forest.section(of: x)
    var offset = 0
    for t in forest.sectionOrder {
      if t == s { break }
      offset += forest.visibleCount(inSection: t)
    }
    return offset + row
  }

  /// Appends items as the last root items of a section (the last section when nil).
  package mutating func appendItems(_ items: [OutlineNode], toSection: String? = nil)
    throws(ListFault)
  {
    try apply(Event(.appendItems(items, section: toSection, parent: nil)))
  }

  /// Appends bare items as the last root items of a section (the last section when nil).
  package mutating func appendItems(_ ids: [String], toSection: String? = nil) throws(ListFault) {
    try appendItems(ids.map { OutlineNode($0) }, toSection: toSection)
  }

  /// Appends items as the last children of `parent`; with `inSection`, the parent must lie
  /// in that section.
  package mutating func appendItems(
    _ items: [OutlineNode], toParent parent: String, inSection: String? = nil
  ) throws(ListFault) {
    try apply(Event(.appendItems(items, section: inSection, parent: parent)))
  }

  package mutating func insertItems(_ items: [OutlineNode], beforeItem: String) throws(ListFault) {
    try apply(Event(.insertItems(items, .before(beforeItem))))
  }

  /// Inserts items as siblings after the anchor's whole subtree.
  package mutating func insertItems(_ items: [OutlineNode], afterItem: String) throws(ListFault) {
    try apply(Event(.insertItems(items, .after(afterItem))))
  }

  /// Removes items and all their descendants; absent ids are ignored.
  package mutating func deleteItems(_ ids: [String]) {
    try? apply(Event(.deleteItems(ids)))
  }

  /// Removes every item; sections stay.
  package mutating func deleteAllItems() {
    try? apply(Event(.deleteAllItems))
  }

  package mutating func moveItem(_ id: String, beforeItem: String) throws(ListFault) {
    try apply(Event(.moveItem(id, .before(beforeItem))))
  }

  /// Moves an item to right after the anchor's whole subtree, as its next sibling.
  package mutating func moveItem(_ id: String, afterItem: String) throws(ListFault) {
    try apply(Event(.moveItem(id, .after(afterItem))))
  }

  /// No structural change; every item must exist.
  package func reloadItems(_ ids: [String]) throws(ListFault) {
    for id in ids where !contains(id) { throw .missingItem(id) }
  }

  /// No structural change; every item must exist.
  package func reconfigureItems(_ ids: [String]) throws(ListFault) { try reloadItems(ids) }

  /// Replaces an item's title (when given) and merges `fields` key by key.
  package mutating func updateItem(_ id: String, title: String?, fields: [String: String]?)
    throws(ListFault)
  {
    try apply(Event(.update(item: id, title: title, fields: fields)))
  }
}

// MARK: - Section snapshots (outlines)

extension ListState {
  /// The outline of a section, or nil when absent. - Complexity: O(items in the section).
  package func sectionSnapshot(for section: String) -> SectionSnapshot? {
    guard let s = forest.handle(ofSection: section) else { return nil }
    return SectionSnapshot(nodes: forest.outline(list: forest.sections[Int(s)].roots))
  }

  /// Replaces the whole content of an existing section (Apple's `apply(_:to:)`).
  package mutating func apply(_ snapshot: SectionSnapshot, to section: String) throws(ListFault) {
    try applyItems(snapshot.nodes, to: section)
  }

  /// Replaces the whole content of an existing section with `items`.
  package mutating func applyItems(_ items: [OutlineNode], to section: String) throws(ListFault) {
    try apply(Event(.applySectionSnapshot(section: section, items: items)))
  }

  /// Drops every descendant of `parent`, then attaches `items` as its children.
  package mutating func replaceChildren(of parent: String, with items: [OutlineNode])
    throws(ListFault)
  {
    try apply(Event(.replaceChildren(parent: parent, items: items)))
  }

  package mutating func expand(_ ids: [String]) throws(ListFault) {
    try apply(Event(.expand(ids)))
  }

  /// Collapses items; their descendants keep their own flags, and hidden items leave the
  /// selection.
  package mutating func collapse(_ ids: [String]) throws(ListFault) {
    try apply(Event(.collapse(ids)))
  }

  package func contains(_ id: String) -> Bool { item(id) != nil }

  /// Whether the item is expanded; false when absent.
  package func isExpanded(_ id: String) -> Bool {
    item(id).map(isExpanded) ?? false
  }

  /// Whether every ancestor is expanded; false when absent. - Complexity: O(depth).
  package func isVisible(_ id: String) -> Bool {
    item(id).map(isVisible) ?? false
  }

  /// Depth of an item (0 for roots), nil when absent. - Complexity: O(depth).
  package func level(of id: String) -> Int? {
    item(id).map { level(of: $0) }
  }

  /// The parent of an item, nil for a root or an absent item (as on a section snapshot).
  package func parent(of id: String) -> String? {
    item(id).flatMap { parent(of: $0) }
  }

  /// Where a visible item shows: its section's position and its row among the section's
  /// visible items (the data source's `indexPath(for:)`); nil when hidden or absent.
  /// - Complexity: O(log sections + depth × log siblings).
  package func indexPath(for id: String) -> (section: Int, item: Int)? {
    guard let x = forest.handle(ofItem: id), let row = forest.row(of: x),
      let section = forest.sectionPosition(forest.section(of: x))
    else { return nil }
    return (section, row)
  }

  /// The visible item at `indexPath` (the data source's `itemIdentifier(for:)`); nil when
  /// out of range. - Complexity: O((log sections + depth × log siblings) × fan-out).
  package func itemIdentifier(at indexPath: (section: Int, item: Int)) -> String? {
    guard indexPath.section >= 0, indexPath.section < forest.sectionOrder.count,
      indexPath.item >= 0,
      let x = forest.visibleItem(
        at: indexPath.item, inSection: forest.sectionOrder[indexPath.section])
    else { return nil }
    return forest.id(of: x)
  }

  /// Every item of a section in depth-first pre-order, or nil when absent.
  package func allItems(inSection id: String) -> [String]? {
    section(id).map { allItems(in: $0) }
  }

  /// Root items of a section in order, or nil when absent.
  package func rootItems(inSection id: String) -> [String]? {
    section(id).map { rootItems(in: $0) }
  }

  /// Direct children of an item in order, or nil when absent.
  package func children(of id: String) -> [String]? {
    guard let x = forest.handle(ofItem: id) else { return nil }
    return forest.list(forest.nodes[Int(x)].children).map { forest.id(of: $0) }
  }

  package func title(of id: String) -> String? {
    item(id).flatMap { title(of: $0) }
  }

  package func fields(of id: String) -> [String: String]? {
    item(id).flatMap { fields(of: $0) }
  }
}

// MARK: - Selection

extension ListState {
  /// Selected items in display order.
  /// - Complexity: O(selected × (log sections + depth × log siblings)).
  package var selectedItems: [String] {
    forest.selectedItems().map { forest.id(of: $0) }
  }

  /// `selectedItems` spelled into one buffer (no `String` per item).
  package var selectedIDs: IDList {
    var list = IDList()
    for x in forest.selectedItems() { forest.withID(of: x) { list.append(utf8: $0) } }
    return list
  }

  package func isSelected(_ id: String) -> Bool {
    item(id).map(isSelected) ?? false
  }

  /// The selected items at or below `id` (none when absent), in no particular order.
  /// - Complexity: O(those × depth × fan-out): subtrees without a selected item are skipped.
  package func selectedItems(atOrBelow id: String) -> [String] {
    guard let x = item(id)?.handle else { return [] }
    let node = forest.nodes[Int(x)]
    var found: [Handle] = node.selected ? [x] : []
    if node.sel > (node.selected ? 1 : 0) {
      found.append(contentsOf: forest.selectedItems(inList: node.children))
    }
    return found.map { forest.id(of: $0) }
  }

  /// Selects visible items; in single-selection mode replaces the selection and takes at
  /// most one item (an empty list then clears it).
  package mutating func select(_ ids: [String]) throws(ListFault) {
    try apply(Event(.select(ids)))
  }

  /// Deselects these items (absent or unselected ids do nothing), or everything when nil.
  /// `select` of the one item `x`.
  mutating func select(_ x: Handle) throws(ListFault) {
    guard forest.isVisible(x) else { throw .hiddenItem(forest.id(of: x)) }
    if !allowsMultipleSelection && forest.selectedCount > 0 {
      for y in forest.selectedItems() where y != x { forest.setSelected(y, false) }
    }
    forest.setSelected(x, true)
  }

  package mutating func deselect(_ ids: [String]?) {
    guard let ids else {
      for x in forest.selectedItems() { forest.setSelected(x, false) }
      return
    }
    try? apply(Event(.deselect(ids)))
  }

  /// Sets the selection mode; switching to single selection clears the selection.
  package mutating func setAllowsMultipleSelection(_ value: Bool) {
    guard value != allowsMultipleSelection else { return }
    allowsMultipleSelection = value
    if !value { deselect(nil) }
  }
}
