import ListTapeModel

/// One section's outline keyed by the app's item type: Apple's
/// `NSDiffableDataSourceSectionSnapshot<Item>`. Items have parents, children and an
/// expanded flag; what the section shows is ``visibleItems``. Take one from the store
/// (`snapshot(for:)`), change it, and apply it (`apply(_:to:)`); an edit that would crash
/// UIKit throws its `ListFault` and changes nothing.
public struct ListSectionSnapshot<Item: Hashable>: Sendable {
  package var outline: SectionSnapshot
  let codec: IdentifierCodec<Item>

  /// An empty outline that spells identifiers with `items`.
  public init(items: IdentifierCodec<Item>) { self.init(outline: SectionSnapshot(), items: items) }

  package init(outline: SectionSnapshot, items: IdentifierCodec<Item>) {
    self.outline = outline
    codec = items
  }
}

extension ListSectionSnapshot where Item: ListIdentifier {
  /// An empty outline.
  public init() { self.init(items: .standard) }
}

extension ListSectionSnapshot: Equatable {
  /// Whether the outlines, flags and contents are the same.
  public static func == (a: Self, b: Self) -> Bool { a.outline == b.outline }
}

// MARK: - Reading

extension ListSectionSnapshot {
  /// Every item in depth-first order.
  public var items: [Item] { codec.readAll(outline.items) }

  /// Items without a parent, in order.
  public var rootItems: [Item] { codec.readAll(outline.rootItems) }

  /// Items whose ancestors are all expanded, in order: the rows the section shows.
  public var visibleItems: [Item] { codec.readAll(outline.visibleItems) }

  /// Whether the outline holds the item.
  public func contains(_ item: Item) -> Bool { outline.contains(codec.spell(item)) }

  /// Whether the item is expanded; false when absent.
  public func isExpanded(_ item: Item) -> Bool { outline.isExpanded(codec.spell(item)) }

  /// Whether every ancestor of the item is expanded; false when absent.
  public func isVisible(_ item: Item) -> Bool { outline.isVisible(codec.spell(item)) }

  /// Depth of an item (0 for roots), nil when absent.
  public func level(of item: Item) -> Int? { outline.level(of: codec.spell(item)) }

  /// The parent of an item, nil for a root or an absent item.
  public func parent(of item: Item) -> Item? {
    outline.parent(of: codec.spell(item)).map(codec.read)
  }

  /// Position of an item in ``items``, nil when absent.
  public func index(of item: Item) -> Int? { outline.index(of: codec.spell(item)) }

  /// The subtree under `parent`, with `parent` as its root when `includingParent`.
  public func snapshot(of parent: Item, includingParent: Bool = false) throws(ListFault) -> Self {
    Self(
      outline: try outline.snapshot(of: codec.spell(parent), includingParent: includingParent),
      items: codec)
  }
}

// MARK: - Editing

extension ListSectionSnapshot {
  /// Appends items as last children of `parent`, or as last roots when nil.
  public mutating func append(_ ids: [Item], to parent: Item? = nil) throws(ListFault) {
    try outline.append(codec.nodes(ids), to: parent.map(codec.spell))
  }

  /// Appends items with their titles, fields and subtrees as last children of `parent`, or
  /// as last roots when nil.
  public mutating func append(_ items: [OutlineItem<Item>], to parent: Item? = nil)
    throws(ListFault)
  {
    try outline.append(items.map(codec.node), to: parent.map(codec.spell))
  }

  /// Inserts items as siblings right before the anchor.
  public mutating func insert(_ ids: [Item], before anchor: Item) throws(ListFault) {
    try outline.insert(codec.nodes(ids), before: codec.spell(anchor))
  }

  /// Inserts items as siblings after the anchor's whole subtree.
  public mutating func insert(_ ids: [Item], after anchor: Item) throws(ListFault) {
    try outline.insert(codec.nodes(ids), after: codec.spell(anchor))
  }

  /// Removes items with their descendants; absent ones are ignored.
  public mutating func delete(_ ids: [Item]) { outline.delete(codec.spellAll(ids)) }

  /// Removes every item.
  public mutating func deleteAll() { outline.deleteAll() }

  /// Expands items: their children show when they do.
  public mutating func expand(_ ids: [Item]) throws(ListFault) {
    try outline.expand(codec.spellAll(ids))
  }

  /// Collapses items: their descendants are hidden and keep their own flags.
  public mutating func collapse(_ ids: [Item]) throws(ListFault) {
    try outline.collapse(codec.spellAll(ids))
  }

  /// Replaces every descendant of `parent` with the items of `snapshot`.
  public mutating func replace(childrenOf parent: Item, using snapshot: Self) throws(ListFault) {
    try outline.replace(childrenOf: codec.spell(parent), using: snapshot.outline)
  }
}
