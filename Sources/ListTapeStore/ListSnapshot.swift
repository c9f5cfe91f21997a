import ListTapeModel

/// The list as an app edits it: sections in order, each with its outline, keyed by the
/// app's own identifier types. Apple's `NSDiffableDataSourceSnapshot<Section, Item>`, with
/// each section's `NSDiffableDataSourceSectionSnapshot<Item>` inside
/// (``sectionSnapshot(for:)``); `ListSnapshot<String, String>` is the log's own spelling.
///
/// This is the one place the list's edits are declared. Edit a snapshot taken from the
/// store (`snapshot()`) and `apply` it, or edit the store's list in place with
/// `store.perform { snapshot in … }`, which records each edit as the log's event of the
/// same name. An edit that would crash UIKit throws its `ListFault` and changes nothing.
/// Selection is the store's, as it is the collection view's and not the snapshot's.
public struct ListSnapshot<Section: Hashable, Item: Hashable>: Sendable {
  /// The sections and outlines, as the log spells them.
  package var state: ListState
  package let sections: IdentifierCodec<Section>
  package let items: IdentifierCodec<Item>
  /// While the store's `perform` runs: the operations applied so far, and the first fault.
  var journal: Journal?

  struct Journal: Sendable {
    var operations: [ListOperation] = []
    var fault: ListFault?
  }

  /// An empty snapshot that spells identifiers with these codecs.
  public init(sections: IdentifierCodec<Section>, items: IdentifierCodec<Item>) {
    self.init(live: ListState(), sections: sections, items: items)
  }

  /// The sections and outlines of `state`, without its selection.
  package init(_ state: ListState, sections: IdentifierCodec<Section>, items: IdentifierCodec<Item>)
  {
    var outline = state
    outline.deselect(nil)
    outline.setAllowsMultipleSelection(false)
    self.init(live: outline, sections: sections, items: items)
  }

  /// `state` as it is, selection included (the store's `perform` edits its own state).
  init(live state: ListState, sections: IdentifierCodec<Section>, items: IdentifierCodec<Item>) {
    self.state = state
    self.sections = sections
    self.items = items
  }

  /// The state this snapshot gives a store whose current state is `current`: these sections
  /// and outlines, with the current selection mode and the selected items still visible.
  func target(from current: ListState) -> ListState {
    var target = state
    target.setAllowsMultipleSelection(current.allowsMultipleSelection)
    let kept = current.selectedItems.filter { target.isVisible($0) }
    try? target.select(current.allowsMultipleSelection ? kept : Array(kept.prefix(1)))
    return target
  }

  /// Applies one operation, and notes it when a `perform` is recording. Once an edit has
  /// faulted inside a `perform`, later ones throw that fault and change nothing.
  package mutating func edit(_ operation: ListOperation) throws(ListFault) {
    guard journal != nil else { return try state.apply(Event(operation)) }
    if let fault = journal?.fault { throw fault }
    journal?.operations.append(operation)
    do {
      try state.apply(Event(operation))
    } catch {
      journal?.fault = error
      throw error
    }
  }
}

extension ListSnapshot where Section: ListIdentifier, Item: ListIdentifier {
  /// An empty snapshot.
  public init() { self.init(sections: .standard, items: .standard) }
}

extension ListSnapshot: Equatable {
  /// Whether the sections, outlines and contents are the same.
  public static func == (a: Self, b: Self) -> Bool { a.state == b.state }
}

// MARK: - Reading

extension ListSnapshot {
  /// Sections in order.
  public var sectionIdentifiers: [Section] { sections.readAll(state.sectionIdentifiers) }

  /// How many sections there are.
  public var numberOfSections: Int { state.numberOfSections }

  /// Visible items of every section, in order.
  public var itemIdentifiers: [Item] { items.readAll(state.itemIdentifiers) }

  /// Visible items of every section. - Complexity: O(1).
  public var numberOfItems: Int { state.numberOfItems }

  /// Visible items of a section, the rows it shows (empty when absent).
  public func itemIdentifiers(inSection section: Section) -> [Item] {
    items.readAll(state.itemIdentifiers(inSection: sections.spell(section)) ?? [])
  }

  /// Visible items of a section (0 when absent). - Complexity: O(1).
  public func numberOfItems(inSection section: Section) -> Int {
    state.numberOfItems(inSection: sections.spell(section)) ?? 0
  }

  /// Position of a section, nil when absent.
  public func indexOfSection(_ section: Section) -> Int? {
    state.indexOfSection(sections.spell(section))
  }

  /// Position of a visible item among ``itemIdentifiers``, nil when hidden or absent.
  public func indexOfItem(_ item: Item) -> Int? { state.indexOfItem(items.spell(item)) }

  /// The section holding an item, nil when absent.
  public func sectionIdentifier(containingItem item: Item) -> Section? {
    state.sectionIdentifier(containingItem: items.spell(item)).map(sections.read)
  }

  /// The outline of one section, nil when absent (the data source's `snapshot(for:)`).
  public func sectionSnapshot(for section: Section) -> ListSectionSnapshot<Item>? {
    state.sectionSnapshot(for: sections.spell(section)).map {
      ListSectionSnapshot(outline: $0, items: items)
    }
  }

  /// An item's title, nil when it has none or is absent.
  public func title(of item: Item) -> String? { state.title(of: items.spell(item)) }

  /// An item's fields, nil when it has none or is absent.
  public func fields(of item: Item) -> [String: String]? { state.fields(of: items.spell(item)) }
}

// MARK: - Sections

extension ListSnapshot {
  /// Appends sections after the last one.
  public mutating func appendSections(_ ids: [Section]) throws(ListFault) {
    try edit(.appendSections(sections.spellAll(ids)))
  }

  /// Inserts sections before `anchor`.
  public mutating func insertSections(_ ids: [Section], beforeSection anchor: Section)
    throws(ListFault)
  {
    try edit(.insertSections(sections.spellAll(ids), .before(sections.spell(anchor))))
  }

  /// Inserts sections after `anchor`.
  public mutating func insertSections(_ ids: [Section], afterSection anchor: Section)
    throws(ListFault)
  {
    try edit(.insertSections(sections.spellAll(ids), .after(sections.spell(anchor))))
  }

  /// Removes sections with their items; absent ones are ignored.
  public mutating func deleteSections(_ ids: [Section]) throws(ListFault) {
    try edit(.deleteSections(sections.spellAll(ids)))
  }

  /// Moves a section before `anchor`.
  public mutating func moveSection(_ id: Section, beforeSection anchor: Section)
    throws(ListFault)
  {
    try edit(.moveSection(sections.spell(id), .before(sections.spell(anchor))))
  }

  /// Moves a section after `anchor`.
  public mutating func moveSection(_ id: Section, afterSection anchor: Section)
    throws(ListFault)
  {
    try edit(.moveSection(sections.spell(id), .after(sections.spell(anchor))))
  }

  /// Marks sections as reloaded (their content is the app's); every one must exist.
  public mutating func reloadSections(_ ids: [Section]) throws(ListFault) {
    try edit(.reloadSections(sections.spellAll(ids)))
  }
}

// MARK: - Items

extension ListSnapshot {
  /// Appends items as last roots of a section (the last section when nil).
  public mutating func appendItems(_ ids: [Item], toSection section: Section? = nil)
    throws(ListFault)
  {
    try edit(.appendItems(items.nodes(ids), section: section.map(sections.spell), parent: nil))
  }

  /// Appends items with their titles, fields and subtrees as last roots of a section (the
  /// last section when nil), in one event.
  public mutating func appendItems(_ items: [OutlineItem<Item>], toSection section: Section? = nil)
    throws(ListFault)
  {
    try edit(
      .appendItems(items.map(self.items.node), section: section.map(sections.spell), parent: nil))
  }

  /// Inserts items as siblings right before the anchor.
  public mutating func insertItems(_ ids: [Item], beforeItem anchor: Item) throws(ListFault) {
    try edit(.insertItems(items.nodes(ids), .before(items.spell(anchor))))
  }

  /// Inserts items as siblings right after the anchor's whole subtree.
  public mutating func insertItems(_ ids: [Item], afterItem anchor: Item) throws(ListFault) {
    try edit(.insertItems(items.nodes(ids), .after(items.spell(anchor))))
  }

  /// Inserts items with their content and subtrees right before the anchor.
  public mutating func insertItems(_ items: [OutlineItem<Item>], beforeItem anchor: Item)
    throws(ListFault)
  {
    try edit(.insertItems(items.map(self.items.node), .before(self.items.spell(anchor))))
  }

  /// Inserts items with their content and subtrees right after the anchor's whole subtree.
  public mutating func insertItems(_ items: [OutlineItem<Item>], afterItem anchor: Item)
    throws(ListFault)
  {
    try edit(.insertItems(items.map(self.items.node), .after(self.items.spell(anchor))))
  }

  /// Removes items with their descendants; absent ones are ignored.
  public mutating func deleteItems(_ ids: [Item]) throws(ListFault) {
    try edit(.deleteItems(items.spellAll(ids)))
  }

  /// Removes every item; the sections stay.
  public mutating func deleteAllItems() throws(ListFault) { try edit(.deleteAllItems) }

  /// Moves an item with its subtree to right before the anchor, as its sibling.
  public mutating func moveItem(_ id: Item, beforeItem anchor: Item) throws(ListFault) {
    try edit(.moveItem(items.spell(id), .before(items.spell(anchor))))
  }

  /// Moves an item with its subtree to right after the anchor's whole subtree.
  public mutating func moveItem(_ id: Item, afterItem anchor: Item) throws(ListFault) {
    try edit(.moveItem(items.spell(id), .after(items.spell(anchor))))
  }

  /// Marks items as reloaded (their content is the app's); every one must exist.
  public mutating func reloadItems(_ ids: [Item]) throws(ListFault) {
    try edit(.reloadItems(items.spellAll(ids)))
  }

  /// Marks items as reconfigured in place; every one must exist.
  public mutating func reconfigureItems(_ ids: [Item]) throws(ListFault) {
    try edit(.reconfigureItems(items.spellAll(ids)))
  }

  /// Sets an item's title (when given) and merges `fields` key by key: what its row shows.
  public mutating func updateItem(
    _ id: Item, title: String? = nil, fields: [String: String]? = nil
  ) throws(ListFault) {
    try edit(.update(item: items.spell(id), title: title, fields: fields))
  }

  /// Expands items wherever they are (`sectionSnapshotHandlers.willExpandItem`).
  public mutating func expand(_ ids: [Item]) throws(ListFault) {
    try edit(.expand(items.spellAll(ids)))
  }

  /// Collapses items wherever they are (`willCollapseItem`); the rows they hide leave the
  /// selection.
  public mutating func collapse(_ ids: [Item]) throws(ListFault) {
    try edit(.collapse(items.spellAll(ids)))
  }

  /// Replaces one section's outline (the data source's `apply(_:to:)`).
  public mutating func apply(_ snapshot: ListSectionSnapshot<Item>, to section: Section)
    throws(ListFault)
  {
    try edit(.applySectionSnapshot(section: sections.spell(section), items: snapshot.outline.nodes))
  }
}
