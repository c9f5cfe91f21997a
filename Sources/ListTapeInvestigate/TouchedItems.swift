import ListTapeModel

/// The items a run of events may have changed: every item an event names, every item below
/// what it deletes or replaces (and, inside a batch, below what it moves), and every item
/// it may deselect without naming it, read from the state the event is applied to. An item
/// outside the set kept its existence, parent, section, flags, content, selection and
/// relative order among its siblings; sections and visible rows are compared separately
/// (`Differ.diff(_:_:touched:context:)`).
package struct TouchedItems: Sendable {
  var keys: Set<IdentifierKey> = []
  /// The ids in the order they were first noted (deterministic iteration).
  var ids: [String] = []
  /// The noted ids an event may have moved among their siblings (moved, inserted, deleted,
  /// replaced): only their sibling lists need comparing in order. An id noted only by
  /// events that change flags, content or selection (expand, select, update, …) kept its
  /// place among its siblings.
  var movers: Set<IdentifierKey> = []
  /// Past this many items the set stops growing and `overflowed` is set: comparing the
  /// whole states is then cheaper than following every item.
  package let limit: Int
  /// Whether more than `limit` items were noted (the set then stopped growing).
  package private(set) var overflowed = false

  /// An empty set that gives up after `limit` items.
  package init(limit: Int = .max) { self.limit = limit }

  /// How many items were noted.
  package var count: Int { ids.count }

  /// Notes what `event` may change; call it with the state the event is about to be
  /// applied to. - Complexity: O(ids named + items deleted or replaced).
  package mutating func note(_ event: Event, before state: ListState) {
    guard !overflowed else { return }
    note(event.operation, state, inBatch: false)
  }

  private mutating func note(_ op: ListOperation, _ s: ListState, inBatch: Bool) {
    let moves: Bool
    switch op {
    case .expand, .collapse, .select, .deselect, .configure, .mark, .update, .reloadItems,
      .reconfigureItems, .reloadSections:
      moves = false
    default:
      moves = true
    }
    switch op {
    case .batch(let events):
      // Inner events see states this one cannot: what they delete may have been moved
      // there earlier in the batch, so subtrees are taken from the state before it, and the
      // subtrees of moved items too.
      for e in events { note(e.operation, s, inBatch: true) }
      return
    case .deleteItems(let ids):
      for id in ids { addSubtree(id, s) }
    case .replaceChildren(let parent, _):
      addSubtree(parent, s)
    case .applySectionSnapshot(let section, _):
      addSection(section, s)
    case .deleteSections(let ids):
      for id in ids { addSection(id, s) }
    case .deleteAllItems:
      for ref in s.sections where !overflowed { for x in s.allItems(in: ref) { add(x) } }
    case .moveItem(let id, let anchor):
      // Moving next to a hidden item deselects the moved subtree.
      if inBatch {
        addSubtree(id, s)
      } else if !s.isVisible(anchor.id) {
        addSelected(under: id, s)
      }
    case .collapse(let ids):
      // Collapsing an expanded item deselects what it hides.
      for id in ids where inBatch || s.isExpanded(id) { addSelected(under: id, s) }
    case .select:
      // In single selection, selecting deselects what was selected.
      if !s.allowsMultipleSelection { addSelected(under: nil, s) }
    case .deselect(nil), .configure(multipleSelection: false):
      addSelected(under: nil, s)
    default:
      break
    }
    for id in op.itemIDs { add(id, moves: moves) }
  }

  mutating func add(_ id: String, moves: Bool = true) {
    guard !overflowed else { return }
    let key = IdentifierKey(id)
    if keys.insert(key).inserted {
      ids.append(id)
      if ids.count > limit { overflowed = true }
    }
    if moves { movers.insert(key) }
  }

  /// The item and everything below it in `s` (nothing when absent).
  private mutating func addSubtree(_ id: String, _ s: ListState) {
    guard s.contains(id) else { return }
    var stack = [id]
    while let x = stack.popLast(), !overflowed {
      add(x)
      stack.append(contentsOf: s.children(of: x) ?? [])
    }
  }

  /// The selected items at or below `id` (all of them when nil).
  /// - Complexity: O(those selected × depth), not the subtree's size nor the selection's.
  private mutating func addSelected(under id: String?, _ s: ListState) {
    guard s.numberOfSelectedItems > 0 else { return }
    for x in id.map(s.selectedItems(atOrBelow:)) ?? s.selectedItems { add(x, moves: false) }
  }

  private mutating func addSection(_ id: String, _ s: ListState) {
    for x in s.allItems(inSection: id) ?? [] { add(x) }
  }

  /// Whether `id` was noted.
  package func contains(_ id: String) -> Bool { keys.contains(IdentifierKey(id)) }

  /// Whether an event noted may have moved `id` among its siblings.
  package func mayMove(_ id: String) -> Bool { movers.contains(IdentifierKey(id)) }

  /// Adds every item of `other`.
  package mutating func formUnion(_ other: TouchedItems) {
    if other.overflowed { overflowed = true }
    for id in other.ids { add(id, moves: other.mayMove(id)) }
  }
}
