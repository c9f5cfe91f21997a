import ListTapeModel

/// What an app applies to its data source: sections in order, each with its outline, keyed
/// by the app's own identifier types (Apple's `NSDiffableDataSourceSnapshot<Section, Item>`
/// together with one `NSDiffableDataSourceSectionSnapshot<Item>` per section). Selection is
/// not part of a snapshot, as it is not part of Apple's. Take one from the store
/// (`snapshot()`), change it, and `apply` it: the store records the fewest events.
///
/// Edits are checked as the reducer checks events: one that would crash UIKit throws its
/// `ListFault` and leaves the snapshot unchanged. Item contents (titles, fields) already in
/// the snapshot are kept; set new ones with the store's `updateItem`.
public struct ListSnapshot<Section: Hashable, Item: Hashable>: Sendable {
  /// The sections and outlines (its selection is always empty).
  package var state: ListState
  let sections: IdentifierCodec<Section>
  let items: IdentifierCodec<Item>

  /// An empty snapshot that spells identifiers with these codecs.
  public init(sections: IdentifierCodec<Section>, items: IdentifierCodec<Item>) {
    self.init(ListState(), sections: sections, items: items)
  }

  /// The sections and outlines of `state`, without its selection.
  package init(_ state: ListState, sections: IdentifierCodec<Section>, items: IdentifierCodec<Item>)
  {
    var outline = state
    outline.deselect(nil)
    outline.setAllowsMultipleSelection(false)
    self.state = outline
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
}

extension ListSnapshot where Section: ListIdentifier, Item: ListIdentifier {
  /// An empty snapshot.
  public init() { self.init(sections: .standard, items: .standard) }
}

extension ListSnapshot: Equatable {
  /// Whether the sections and outlines are the same.
  public static func == (a: Self, b: Self) -> Bool { a.state == b.state }
}

// MARK: - Reading

extension ListSnapshot {
  /// Sections in order.
  public var sectionIdentifiers: [Section] { sections.decodeAll(state.sectionIdentifiers) }

  /// How many sections there are.
  public var numberOfSections: Int { state.numberOfSections }

  /// Visible items of every section, in order.
  public var itemIdentifiers: [Item] { items.decodeAll(state.itemIdentifiers) }

  /// Visible items of every section.
  public var numberOfItems: Int { state.numberOfItems }

  /// Visible items of a section (empty when absent).
  public func itemIdentifiers(inSection section: Section) -> [Item] {
    items.decodeAll(state.itemIdentifiers(inSection: sections.encode(section)) ?? [])
  }

  /// Visible items of a section (0 when absent).
  public func numberOfItems(inSection section: Section) -> Int {
    state.numberOfItems(inSection: sections.encode(section)) ?? 0
  }

  /// Position of a section, nil when absent.
  public func indexOfSection(_ section: Section) -> Int? {
    state.indexOfSection(sections.encode(section))
  }

  /// Position of a visible item among `itemIdentifiers`.
  public func indexOfItem(_ item: Item) -> Int? { state.indexOfItem(items.encode(item)) }

  /// The section holding an item, nil when absent.
  public func sectionIdentifier(containingItem item: Item) -> Section? {
    state.sectionIdentifier(containingItem: items.encode(item)).flatMap(sections.decode)
  }

  /// The outline of one section, nil when absent.
  public func sectionSnapshot(for section: Section) -> ListSectionSnapshot<Item>? {
    state.sectionSnapshot(for: sections.encode(section)).map {
      ListSectionSnapshot(outline: $0, items: items)
    }
  }
}

// MARK: - Editing

extension ListSnapshot {
  /// Appends sections after the last one.
  public mutating func appendSections(_ ids: [Section]) throws(ListFault) {
    try state.appendSections(sections.encodeAll(ids))
  }

  /// Inserts sections before `anchor`.
  public mutating func insertSections(_ ids: [Section], beforeSection anchor: Section)
    throws(ListFault)
  {
    try state.insertSections(sections.encodeAll(ids), beforeSection: sections.encode(anchor))
  }

  /// Inserts sections after `anchor`.
  public mutating func insertSections(_ ids: [Section], afterSection anchor: Section)
    throws(ListFault)
  {
    try state.insertSections(sections.encodeAll(ids), afterSection: sections.encode(anchor))
  }

  /// Removes sections with their items; absent ones are ignored.
  public mutating func deleteSections(_ ids: [Section]) {
    state.deleteSections(sections.encodeAll(ids))
  }

  /// Moves a section before `anchor`.
  public mutating func moveSection(_ id: Section, beforeSection anchor: Section)
    throws(ListFault)
  {
    try state.moveSection(sections.encode(id), beforeSection: sections.encode(anchor))
  }

  /// Moves a section after `anchor`.
  public mutating func moveSection(_ id: Section, afterSection anchor: Section)
    throws(ListFault)
  {
    try state.moveSection(sections.encode(id), afterSection: sections.encode(anchor))
  }

  /// Appends items as last roots of a section (the last section when nil).
  public mutating func appendItems(_ ids: [Item], toSection section: Section? = nil)
    throws(ListFault)
  {
    try state.appendItems(items.encodeAll(ids), toSection: section.map(sections.encode))
  }

  /// Inserts items as siblings right before the anchor.
  public mutating func insertItems(_ ids: [Item], beforeItem anchor: Item) throws(ListFault) {
    try state.insertItems(
      items.encodeAll(ids).map { OutlineNode($0) }, beforeItem: items.encode(anchor))
  }

  /// Inserts items as siblings right after the anchor's whole subtree.
  public mutating func insertItems(_ ids: [Item], afterItem anchor: Item) throws(ListFault) {
    try state.insertItems(
      items.encodeAll(ids).map { OutlineNode($0) }, afterItem: items.encode(anchor))
  }

  /// Removes items with their descendants; absent ones are ignored.
  public mutating func deleteItems(_ ids: [Item]) { state.deleteItems(items.encodeAll(ids)) }

  /// Removes every item; the sections stay.
  public mutating func deleteAllItems() { state.deleteAllItems() }

  /// Moves an item with its subtree to right before the anchor, as its sibling.
  public mutating func moveItem(_ id: Item, beforeItem anchor: Item) throws(ListFault) {
    try state.moveItem(items.encode(id), beforeItem: items.encode(anchor))
  }

  /// Moves an item with its subtree to right after the anchor's whole subtree.
  public mutating func moveItem(_ id: Item, afterItem anchor: Item) throws(ListFault) {
    try state.moveItem(items.encode(id), afterItem: items.encode(anchor))
  }

  /// Replaces one section's outline (the data source's `apply(_:to:)`).
  public mutating func apply(_ snapshot: ListSectionSnapshot<Item>, to section: Section)
    throws(ListFault)
  {
    try state.apply(snapshot.outline, to: sections.encode(section))
  }
}

/// One section's outline keyed by the app's item type (Apple's
/// `NSDiffableDataSourceSectionSnapshot<Item>`): items, their parents and which are expanded.
public struct ListSectionSnapshot<Item: Hashable>: Sendable {
  package var outline: SectionSnapshot
  let items: IdentifierCodec<Item>

  /// An empty outline that spells identifiers with `items`.
  public init(items: IdentifierCodec<Item>) { self.init(outline: SectionSnapshot(), items: items) }

  package init(outline: SectionSnapshot, items: IdentifierCodec<Item>) {
    self.outline = outline
    self.items = items
  }
}

extension ListSectionSnapshot where Item: ListIdentifier {
  /// An empty outline.
  public init() { self.init(items: .standard) }
}

extension ListSectionSnapshot: Equatable {
  /// Whether the outlines are the same.
  public static func == (a: Self, b: Self) -> Bool { a.outline == b.outline }
}

extension ListSectionSnapshot {
  /// Every item in depth-first order.
  public var allItems: [Item] { items.decodeAll(outline.items) }

  /// Items without a parent, in order.
  public var rootItems: [Item] { items.decodeAll(outline.rootItems) }

  /// Items whose ancestors are all expanded, in order.
  public var visibleItems: [Item] { items.decodeAll(outline.visibleItems) }

  /// Whether the outline holds the item.
  public func contains(_ item: Item) -> Bool { outline.contains(items.encode(item)) }

  /// Whether the item is expanded; false when absent.
  public func isExpanded(_ item: Item) -> Bool { outline.isExpanded(items.encode(item)) }

  /// Whether every ancestor of the item is expanded; false when absent.
  public func isVisible(_ item: Item) -> Bool { outline.isVisible(items.encode(item)) }

  /// Depth of an item (0 for roots), nil when absent.
  public func level(of item: Item) -> Int? { outline.level(of: items.encode(item)) }

  /// The parent of an item, nil for a root or an absent item.
  public func parent(of item: Item) -> Item? {
    outline.parent(of: items.encode(item)).flatMap(items.decode)
  }

  /// Position of an item in `allItems`.
  public func index(of item: Item) -> Int? { outline.index(of: items.encode(item)) }

  /// The subtree under `parent`, with `parent` as its root when `includingParent`.
  public func snapshot(of parent: Item, includingParent: Bool = false) throws(ListFault) -> Self {
    Self(
      outline: try outline.snapshot(of: items.encode(parent), includingParent: includingParent),
      items: items)
  }

  /// Appends items as last children of `parent`, or as last roots when nil.
  public mutating func append(_ ids: [Item], to parent: Item? = nil) throws(ListFault) {
    try outline.append(items.encodeAll(ids), to: parent.map(items.encode))
  }

  /// Inserts items as siblings right before the anchor.
  public mutating func insert(_ ids: [Item], before anchor: Item) throws(ListFault) {
    try outline.insert(items.encodeAll(ids).map { OutlineNode($0) }, before: items.encode(anchor))
  }

  /// Inserts items as siblings after the anchor's whole subtree.
  public mutating func insert(_ ids: [Item], after anchor: Item) throws(ListFault) {
    try outline.insert(items.encodeAll(ids).map { OutlineNode($0) }, after: items.encode(anchor))
  }

  /// Removes items with their descendants; absent ones are ignored.
  public mutating func delete(_ ids: [Item]) { outline.delete(items.encodeAll(ids)) }

  /// Removes every item.
  public mutating func deleteAll() { outline.deleteAll() }

  /// Expands items: their children show when they do.
  public mutating func expand(_ ids: [Item]) throws(ListFault) {
    try outline.expand(items.encodeAll(ids))
  }

  /// Collapses items: their descendants are hidden.
  public mutating func collapse(_ ids: [Item]) throws(ListFault) {
    try outline.collapse(items.encodeAll(ids))
  }
}
