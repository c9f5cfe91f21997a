import ListTapeModel

/// An item to insert with what its row shows and, optionally, its subtree: a title and
/// fields recorded with the insertion itself, so that a row costs one event, not two.
public struct OutlineItem<ID: Hashable>: Hashable {
  /// The item's identifier.
  public var id: ID
  /// The row's title, recorded for people reading the log.
  public var title: String?
  /// Other things the row shows (`"email": "ann@example.com"`).
  public var fields: [String: String]?
  /// Whether the item starts expanded (new items start collapsed).
  public var expanded: Bool
  /// The items below this one, in order.
  public var children: [OutlineItem]

  /// An item with its content and subtree.
  public init(
    _ id: ID, title: String? = nil, fields: [String: String]? = nil, expanded: Bool = false,
    children: [OutlineItem] = []
  ) {
    self.id = id
    self.title = title
    self.fields = fields
    self.expanded = expanded
    self.children = children
  }
}

extension OutlineItem: Sendable where ID: Sendable {}

extension IdentifierCodec {
  /// The log's node for `item`, its subtree spelled with this codec.
  func node(_ item: OutlineItem<Value>) -> OutlineNode {
    OutlineNode(
      spell(item.id), title: item.title, fields: item.fields, expanded: item.expanded,
      children: item.children.map(node))
  }

  /// Bare nodes for `values`.
  func nodes(_ values: [Value]) -> [OutlineNode] { values.map { OutlineNode(spell($0)) } }
}
