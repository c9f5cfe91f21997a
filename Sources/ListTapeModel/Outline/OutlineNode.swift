/// An item to insert, with its display content and optional subtree: the protocol's NODE.
public struct OutlineNode: Equatable, Hashable, Sendable {
  public var id: String
  public var title: String?
  public var fields: [String: String]?
  /// New items start collapsed unless this is true.
  public var expanded: Bool
  public var children: [OutlineNode]

  public init(
    _ id: String, title: String? = nil, fields: [String: String]? = nil, expanded: Bool = false,
    children: [OutlineNode] = []
  ) {
    self.id = id
    self.title = title
    self.fields = fields
    self.expanded = expanded
    self.children = children
  }

  /// Whether the node is a bare identifier (encodes as a JSON string).
  package var isBare: Bool { title == nil && fields == nil && !expanded && children.isEmpty }

  /// Calls `body` on this node and every node below it, pre-order.
  package func forEachID(_ body: (String) throws -> Void) rethrows {
    var stack: [OutlineNode] = [self]
    while let n = stack.popLast() {
      try body(n.id)
      stack.append(contentsOf: n.children.reversed())
    }
  }
}

extension OutlineNode: ExpressibleByStringLiteral {
  public init(stringLiteral value: String) { self.init(value) }
}
