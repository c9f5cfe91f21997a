import Foundation
import ListTapeModel

/// A recording store keyed by the app's own identifier types, as
/// `UICollectionViewDiffableDataSource<Section, Item>` is: UUIDs, integers, enums, or any
/// `Hashable` type with a codec. Every call is the `ListStore` call of the same name with
/// the identifiers spelled by `sections` and `items`; the log holds those spellings.
///
/// Lifecycle (`sync`, `close`), counters and the string-keyed state are the `base` store's.
public struct TypedListStore<Section: Hashable, Item: Hashable>: Sendable {
  /// The store that records; it sees the identifiers as the log spells them.
  public let base: ListStore
  /// How section identifiers are spelled in the log.
  public let sections: IdentifierCodec<Section>
  /// How item identifiers are spelled in the log.
  public let items: IdentifierCodec<Item>

  /// Opens LOG for recording (creating it if absent), spelling identifiers with these
  /// codecs; see `ListStore.init(path:options:)`.
  public init(
    path: String, options: ListStore.Options = ListStore.Options(),
    sections: IdentifierCodec<Section>, items: IdentifierCodec<Item>
  ) throws(StoreError) {
    self.init(
      wrapping: try ListStore(path: path, options: options), sections: sections, items: items)
  }

  /// Keys an open store by these identifier types.
  public init(
    wrapping base: ListStore, sections: IdentifierCodec<Section>, items: IdentifierCodec<Item>
  ) {
    self.base = base
    self.sections = sections
    self.items = items
  }
}

extension TypedListStore where Section: ListIdentifier, Item: ListIdentifier {
  /// Opens LOG for recording, spelling identifiers their own way (`listIdentifier`).
  public init(path: String, options: ListStore.Options = ListStore.Options()) throws(StoreError) {
    try self.init(path: path, options: options, sections: .standard, items: .standard)
  }
}

// MARK: - Snapshots

extension TypedListStore {
  /// The sections and outlines, to change and `apply` (the data source's `snapshot()`).
  public func snapshot() -> ListSnapshot<Section, Item> {
    base.withState { ListSnapshot(copy $0, sections: sections, items: items) }
  }

  /// One section's outline, nil when absent (the data source's `snapshot(for:)`).
  public func snapshot(for section: Section) -> ListSectionSnapshot<Item>? {
    base.sectionSnapshot(for: sections.encode(section)).map {
      ListSectionSnapshot(outline: $0, items: items)
    }
  }

  /// Makes the sections and outlines those of `snapshot`, recording the fewest events; see
  /// `ListStore.apply(_:)`.
  @discardableResult
  public func apply(_ snapshot: ListSnapshot<Section, Item>) -> [ListOperation] {
    base.apply { snapshot.target(from: $0) }
  }

  /// Replaces one section's outline, recording the fewest events; see
  /// `ListStore.apply(_:to:)`.
  @discardableResult
  public func apply(_ snapshot: ListSectionSnapshot<Item>, to section: Section) -> ListFault? {
    base.apply(snapshot.outline, to: sections.encode(section))
  }
}

// MARK: - Reading

extension TypedListStore {
  /// Sections in order.
  public var sectionIdentifiers: [Section] { sections.decodeAll(base.sectionIdentifiers) }

  /// Visible items of a section (empty when absent).
  public func itemIdentifiers(inSection section: Section) -> [Item] {
    items.decodeAll(base.itemIdentifiers(inSection: sections.encode(section)) ?? [])
  }

  /// The visible item at `indexPath` (section, item), nil when out of range.
  public func itemIdentifier(for indexPath: IndexPath) -> Item? {
    guard indexPath.count == 2 else { return nil }
    return base.withState { $0.itemIdentifier(at: (indexPath[0], indexPath[1])) }.flatMap(
      items.decode)
  }

  /// Where a visible item shows, nil when hidden or absent.
  public func indexPath(for item: Item) -> IndexPath? {
    base.withState { $0.indexPath(for: items.encode(item)) }.map {
      IndexPath(indexes: [$0.section, $0.item])
    }
  }

  /// The section at a position, nil when out of range.
  public func sectionIdentifier(for index: Int) -> Section? {
    let ids = base.sectionIdentifiers
    return ids.indices.contains(index) ? sections.decode(ids[index]) : nil
  }

  /// The position of a section, nil when absent.
  public func index(for section: Section) -> Int? {
    base.withState { $0.indexOfSection(sections.encode(section)) }
  }

  /// Selected items in display order.
  public var selectedItems: [Item] { items.decodeAll(base.selectedItems) }
}

// MARK: - Edits

/// Each is one event, named as on Apple's snapshots; each returns the `ListFault` when it
/// faulted (the state is then unchanged, and the event is recorded anyway).
extension TypedListStore {
  /// Appends sections after the last one.
  @discardableResult
  public func appendSections(_ ids: [Section]) -> ListFault? {
    base.appendSections(sections.encodeAll(ids))
  }

  /// Inserts sections before the anchor section.
  @discardableResult
  public func insertSections(_ ids: [Section], beforeSection anchor: Section) -> ListFault? {
    base.insertSections(sections.encodeAll(ids), beforeSection: sections.encode(anchor))
  }

  /// Inserts sections after the anchor section.
  @discardableResult
  public func insertSections(_ ids: [Section], afterSection anchor: Section) -> ListFault? {
    base.insertSections(sections.encodeAll(ids), afterSection: sections.encode(anchor))
  }

  /// Removes sections with their items; absent ones are ignored.
  @discardableResult
  public func deleteSections(_ ids: [Section]) -> ListFault? {
    base.deleteSections(sections.encodeAll(ids))
  }

  /// Moves a section before the anchor section.
  @discardableResult
  public func moveSection(_ id: Section, beforeSection anchor: Section) -> ListFault? {
    base.moveSection(sections.encode(id), beforeSection: sections.encode(anchor))
  }

  /// Moves a section after the anchor section.
  @discardableResult
  public func moveSection(_ id: Section, afterSection anchor: Section) -> ListFault? {
    base.moveSection(sections.encode(id), afterSection: sections.encode(anchor))
  }

  /// Records that sections were reloaded (their content is the app's).
  @discardableResult
  public func reloadSections(_ ids: [Section]) -> ListFault? {
    base.reloadSections(sections.encodeAll(ids))
  }

  /// Appends items as last roots of a section (the last section when nil).
  @discardableResult
  public func appendItems(_ ids: [Item], toSection section: Section? = nil) -> ListFault? {
    base.appendItems(items.encodeAll(ids), toSection: section.map(sections.encode))
  }

  /// Appends items as last children of `parent` (a section snapshot's `append(_:to:)`).
  @discardableResult
  public func appendItems(_ ids: [Item], toParent parent: Item) -> ListFault? {
    base.appendItems(items.encodeAll(ids).map { OutlineNode($0) }, toParent: items.encode(parent))
  }

  /// Inserts items as siblings right before the anchor.
  @discardableResult
  public func insertItems(_ ids: [Item], beforeItem anchor: Item) -> ListFault? {
    base.insertItems(items.encodeAll(ids).map { OutlineNode($0) }, beforeItem: items.encode(anchor))
  }

  /// Inserts items as siblings right after the anchor's whole subtree.
  @discardableResult
  public func insertItems(_ ids: [Item], afterItem anchor: Item) -> ListFault? {
    base.insertItems(items.encodeAll(ids).map { OutlineNode($0) }, afterItem: items.encode(anchor))
  }

  /// Removes items with their descendants; absent ones are ignored.
  @discardableResult
  public func deleteItems(_ ids: [Item]) -> ListFault? { base.deleteItems(items.encodeAll(ids)) }

  /// Removes every item; the sections stay.
  @discardableResult
  public func deleteAllItems() -> ListFault? { base.deleteAllItems() }

  /// Moves an item with its subtree to right before the anchor, as its sibling.
  @discardableResult
  public func moveItem(_ id: Item, beforeItem anchor: Item) -> ListFault? {
    base.moveItem(items.encode(id), beforeItem: items.encode(anchor))
  }

  /// Moves an item with its subtree to right after the anchor's whole subtree.
  @discardableResult
  public func moveItem(_ id: Item, afterItem anchor: Item) -> ListFault? {
    base.moveItem(items.encode(id), afterItem: items.encode(anchor))
  }

  /// Records that items were reloaded (their content is the app's).
  @discardableResult
  public func reloadItems(_ ids: [Item]) -> ListFault? { base.reloadItems(items.encodeAll(ids)) }

  /// Records that items were reconfigured in place.
  @discardableResult
  public func reconfigureItems(_ ids: [Item]) -> ListFault? {
    base.reconfigureItems(items.encodeAll(ids))
  }

  /// Sets an item's title (when given) and merges `fields` key by key: what a row shows,
  /// recorded for people reading the log.
  @discardableResult
  public func updateItem(_ id: Item, title: String? = nil, fields: [String: String]? = nil)
    -> ListFault?
  {
    base.updateItem(items.encode(id), title: title, fields: fields)
  }

  /// Expands items (`sectionSnapshotHandlers.willExpandItem`).
  @discardableResult
  public func expand(_ ids: [Item]) -> ListFault? { base.expand(items.encodeAll(ids)) }

  /// Collapses items (`willCollapseItem`); items it hides leave the selection.
  @discardableResult
  public func collapse(_ ids: [Item]) -> ListFault? { base.collapse(items.encodeAll(ids)) }

  /// Selects visible items (`didSelectItemAt`); in single mode replaces the selection.
  @discardableResult
  public func select(_ ids: [Item]) -> ListFault? { base.select(items.encodeAll(ids)) }

  /// Deselects these items (`didDeselectItemAt`), or everything when nil.
  @discardableResult
  public func deselect(_ ids: [Item]? = nil) -> ListFault? {
    base.deselect(ids.map(items.encodeAll))
  }

  /// Sets the selection mode (`allowsMultipleSelection`); single clears the selection.
  @discardableResult
  public func setAllowsMultipleSelection(_ value: Bool) -> ListFault? {
    base.setAllowsMultipleSelection(value)
  }

  /// Records a bookmark (a screen shown, a test step) that `show --at mark:LABEL` finds.
  @discardableResult
  public func mark(_ label: String) -> ListFault? { base.mark(label) }
}
