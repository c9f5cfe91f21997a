/// An item to insert, with its display content and optional subtree: the protocol's NODE.
///
/// Equality, hashing, and dropping a node walk its subtree with loops, never recursion, so
/// trees of any depth are safe on a thread with a small stack.
public struct OutlineNode: Sendable {
  /// The item's identifier.
  public var id: String
  /// The row's title.
  public var title: String?
  /// Other things the row shows.
  public var fields: [String: String]?
  /// New items start collapsed unless this is true.
  public var expanded: Bool
  /// The children, boxed (nil when there are none) so that dropping the last reference to
  /// a deep tree takes it apart in a loop.
  var box: Children?

  /// A node with its content and subtree.
  public init(
    _ id: String, title: String? = nil, fields: [String: String]? = nil, expanded: Bool = false,
    children: [OutlineNode] = []
  ) {
    self.id = id
    self.title = title
    self.fields = fields
    self.expanded = expanded
    box = children.isEmpty ? nil : Children(children)
  }

  /// The nodes below this one, in order.
  public var children: [OutlineNode] {
    get { box?.nodes ?? [] }
    set { box = newValue.isEmpty ? nil : Children(newValue) }
    _modify {
      // Move the array out of a box held only here, so that the caller's edit does not copy.
      var reused: Children?
      var nodes: [OutlineNode]
      if box != nil, isKnownUniquelyReferenced(&box) {
        reused = box
        nodes = box?.nodes ?? []
        box?.nodes = []
      } else {
        nodes = box?.nodes ?? []
      }
      box = nil
      defer {
        if nodes.isEmpty {
          box = nil
        } else if let reused {
          reused.nodes = nodes
          box = reused
        } else {
          box = Children(nodes)
        }
      }
      yield &nodes
    }
  }

  /// Whether the node is a bare identifier (encodes as a JSON string).
  package var isBare: Bool { title == nil && fields == nil && !expanded && box == nil }

  /// Calls `body` on this node and every node below it, pre-order.
  package func forEachID<E: Error>(_ body: (String) throws(E) -> Void) throws(E) {
    var stack: [OutlineNode] = [self]
    while let n = stack.popLast() {
      try body(n.id)
      stack.append(contentsOf: n.children.reversed())
    }
  }
}

/// The children of an `OutlineNode`. Only ever mutated while uniquely referenced (as an
/// array's buffer is), hence sendable.
final class Children: @unchecked Sendable {
  var nodes: [OutlineNode]

  init(_ nodes: [OutlineNode]) { self.nodes = nodes }

  /// Takes the subtree apart with an explicit stack: every grandchild list held only here is
  /// moved onto the stack before its node goes, so no release ever recurses.
  deinit {
    guard !nodes.isEmpty else { return }
    var stack = nodes
    nodes = []
    while var n = stack.popLast() {
      if n.box != nil, isKnownUniquelyReferenced(&n.box) {
        stack.append(contentsOf: n.box?.nodes ?? [])
        n.box?.nodes = []
      }
    }
  }
}

extension OutlineNode: Equatable {
  /// Same ids (by Unicode scalars, as the model compares them), content, flags and
  /// subtrees. - Complexity: O(nodes), without recursion.
  public static func == (lhs: OutlineNode, rhs: OutlineNode) -> Bool {
    var stack: [(OutlineNode, OutlineNode)] = [(lhs, rhs)]
    while let (a, b) = stack.popLast() {
      guard sameIdentifier(a.id, b.id), a.expanded == b.expanded, a.title == b.title,
        a.fields == b.fields
      else { return false }
      if a.box === b.box { continue }
      let (x, y) = (a.children, b.children)
      guard x.count == y.count else { return false }
      for i in x.indices { stack.append((x[i], y[i])) }
    }
    return true
  }
}

extension OutlineNode: Hashable {
  /// Hashes the subtree in pre-order. - Complexity: O(nodes), without recursion.
  public func hash(into hasher: inout Hasher) {
    var stack: [OutlineNode] = [self]
    while let n = stack.popLast() {
      var id = n.id
      id.withUTF8 {
        hasher.combine($0.count)
        hasher.combine(bytes: UnsafeRawBufferPointer($0))
      }
      hasher.combine(n.title)
      hasher.combine(n.fields)
      hasher.combine(n.expanded)
      let children = n.children
      hasher.combine(children.count)
      stack.append(contentsOf: children.reversed())
    }
  }
}

extension OutlineNode: ExpressibleByStringLiteral {
  /// A bare node: `"mic"`.
  public init(stringLiteral value: String) { self.init(value) }
}
