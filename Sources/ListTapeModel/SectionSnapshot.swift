/// A standalone outline: Apple's `NSDiffableDataSourceSectionSnapshot` with `String` ids.
///
/// Items have parents, children and an expanded flag; what a section shows is its visible
/// items. Misuse throws `ListFault` and leaves the snapshot unchanged.
package struct SectionSnapshot: Equatable, Sendable {
  /// The outline as the one section (id "") of a list, edited by the list's reducer.
  var state = ListState()
  var forest: Forest { state.forest }
  private var slot: Handle { 0 }

  /// An empty outline.
  package init() {
    try? state.appendSections([""])
  }

  /// An outline holding `nodes` as its root items. A fresh outline has no ids yet, so only
  /// repeats inside `nodes` and items below level 255 can fault; those are dropped (the
  /// first occurrence of an id wins, with its subtree), so this initializer never fails.
  package init(nodes: [OutlineNode]) {
    self.init()
    do {
      try state.apply(Event(.appendItems(nodes, section: "", parent: nil)))
    } catch {
      try? state.apply(Event(.appendItems(Self.sanitized(nodes), section: "", parent: nil)))
    }
  }

  /// `nodes` without repeated ids (and their subtrees) and without items below level 255.
  /// - Complexity: O(nodes), without recursion.
  private static func sanitized(_ nodes: [OutlineNode]) -> [OutlineNode] {
    var seen = Set<IdentifierKey>()
    var tops: [OutlineNode] = []
    // Pre-order over the input with the open path of kept nodes being rebuilt.
    var stack: [(siblings: [OutlineNode], next: Int)] = [(nodes, 0)]
    var open: [(node: OutlineNode, children: [OutlineNode])] = []
    while let top = stack.last {
      if top.next == top.siblings.count {
        stack.removeLast()
        // A finished list below the top closes the node that owns it.
        if !stack.isEmpty, let (closed, children) = open.popLast() {
          var node = closed
          node.children = children
          if open.isEmpty { tops.append(node) } else { open[open.count - 1].children.append(node) }
        }
        continue
      }
      var n = top.siblings[top.next]
      stack[stack.count - 1].next += 1
      guard seen.insert(IdentifierKey(n.id)).inserted else { continue }
      let children = n.children
      n.children = []
      if stack.count - 1 < Forest.deepestLevel && !children.isEmpty {
        open.append((n, []))
        stack.append((children, 0))
      } else if open.isEmpty {
        tops.append(n)
      } else {
        open[open.count - 1].children.append(n)
      }
    }
    return tops
  }

  package static func == (lhs: SectionSnapshot, rhs: SectionSnapshot) -> Bool {
    lhs.nodes == rhs.nodes
  }

  /// The root items with their subtrees, flags and content.
  package var nodes: [OutlineNode] { forest.outline(list: forest.sections[0].roots) }

  private func ids(_ handles: [Handle]) -> [String] { handles.map { forest.id(of: $0) } }

  // MARK: Queries

  /// Every item in depth-first pre-order.
  package var items: [String] { ids(forest.items(inSection: slot, visibleOnly: false)) }

  /// Items without a parent, in order.
  package var rootItems: [String] { ids(forest.list(forest.sections[0].roots)) }

  /// Items whose ancestors are all expanded, in display order.
  package var visibleItems: [String] { ids(forest.items(inSection: slot, visibleOnly: true)) }

  /// Number of visible items. - Complexity: O(1).
  package var visibleCount: Int { forest.visibleCount(inSection: slot) }

  package func contains(_ id: String) -> Bool { forest.handle(ofItem: id) != nil }

  package func isExpanded(_ id: String) -> Bool {
    forest.handle(ofItem: id).map { forest.nodes[Int($0)].expanded } ?? false
  }

  /// Whether every ancestor is expanded. - Complexity: O(depth).
  package func isVisible(_ id: String) -> Bool {
    forest.handle(ofItem: id).map { forest.isVisible($0) } ?? false
  }

  /// Depth of an item (0 for roots), nil when absent.
  package func level(of id: String) -> Int? {
    forest.handle(ofItem: id).map { forest.level(of: $0) }
  }

  /// The parent of an item, nil for a root or an absent item.
  package func parent(of id: String) -> String? {
    guard let x = forest.handle(ofItem: id), forest.nodes[Int(x)].parent >= 0 else { return nil }
    return forest.id(of: forest.nodes[Int(x)].parent)
  }

  /// Index of an item in `items` (pre-order). - Complexity: O(depth × log siblings).
  package func index(of id: String) -> Int? {
    forest.handle(ofItem: id).map { forest.preorderIndex(of: $0) }
  }

  /// Index of a visible item in `visibleItems`, nil when hidden or absent.
  package func visibleIndex(of id: String) -> Int? {
    forest.handle(ofItem: id).flatMap { forest.row(of: $0) }
  }

  /// The subtree under `parent` as a new outline, with `parent` as its root when
  /// `includingParent`.
  package func snapshot(of parent: String, includingParent: Bool = false) throws(ListFault)
    -> SectionSnapshot
  {
    guard let x = forest.handle(ofItem: parent) else { throw .missingItem(parent) }
    let kids = forest.outline(list: forest.nodes[Int(x)].children)
    if includingParent {
      let n = forest.nodes[Int(x)]
      let (title, fields) = forest.withContent(x) { ItemText.decode($0) }
      return SectionSnapshot(nodes: [
        OutlineNode(
          forest.id(of: x), title: title, fields: fields, expanded: n.expanded,
          children: kids)
      ])
    }
    return SectionSnapshot(nodes: kids)
  }

  // MARK: Edits

  /// Appends items as last children of `parent`, or as last root items when nil.
  package mutating func append(_ items: [OutlineNode], to parent: String? = nil) throws(ListFault) {
    try state.apply(Event(.appendItems(items, section: parent == nil ? "" : nil, parent: parent)))
  }

  /// Appends bare items as last children of `parent`, or as last root items when nil.
  package mutating func append(_ ids: [String], to parent: String? = nil) throws(ListFault) {
    try append(ids.map { OutlineNode($0) }, to: parent)
  }

  /// Appends a whole outline under `parent` (or at the root level when nil).
  package mutating func append(_ snapshot: SectionSnapshot, to parent: String? = nil)
    throws(ListFault)
  {
    try append(snapshot.nodes, to: parent)
  }

  package mutating func insert(_ items: [OutlineNode], before item: String) throws(ListFault) {
    try state.apply(Event(.insertItems(items, .before(item))))
  }

  /// Inserts items as siblings after the anchor's whole subtree.
  package mutating func insert(_ items: [OutlineNode], after item: String) throws(ListFault) {
    try state.apply(Event(.insertItems(items, .after(item))))
  }

  package mutating func insert(_ snapshot: SectionSnapshot, before item: String) throws(ListFault) {
    try insert(snapshot.nodes, before: item)
  }

  package mutating func insert(_ snapshot: SectionSnapshot, after item: String) throws(ListFault) {
    try insert(snapshot.nodes, after: item)
  }

  /// Removes items with their descendants; absent ids are ignored.
  package mutating func delete(_ ids: [String]) { state.deleteItems(ids) }

  package mutating func deleteAll() { state.deleteAllItems() }

  package mutating func expand(_ ids: [String]) throws(ListFault) {
    try state.expand(ids)
  }

  package mutating func collapse(_ ids: [String]) throws(ListFault) {
    try state.collapse(ids)
  }

  /// Replaces every descendant of `parent` with the root items of `snapshot`.
  package mutating func replace(childrenOf parent: String, using snapshot: SectionSnapshot)
    throws(ListFault)
  {
    try state.replaceChildren(of: parent, with: snapshot.nodes)
  }

  /// Moves an item with its subtree next to the anchor (Apple's position arithmetic).
  package mutating func move(_ id: String, before anchor: String) throws(ListFault) {
    try state.moveItem(id, beforeItem: anchor)
  }

  /// Moves an item with its subtree to right after the anchor's whole subtree.
  package mutating func move(_ id: String, after anchor: String) throws(ListFault) {
    try state.moveItem(id, afterItem: anchor)
  }
}
