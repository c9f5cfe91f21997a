/// Where an insertion or move lands: next to an existing section or item.
public enum Anchor: Equatable, Hashable, Sendable {
  case before(String)
  case after(String)

  /// The anchor's identifier.
  public var id: String {
    switch self {
    case .before(let id), .after(let id): return id
    }
  }

  public var isAfter: Bool {
    if case .after = self { return true }
    return false
  }
}

/// One recorded edit of the list: an operation and the wall-clock time it happened.
public struct Event: Equatable, Hashable, Sendable {
  public var operation: ListOperation
  /// Milliseconds since the Unix epoch; the recorder stamps events that have none.
  public var time: Int64?

  public init(_ operation: ListOperation, time: Int64? = nil) {
    self.operation = operation
    self.time = time
  }

  /// The protocol's `op` name.
  public var op: String { operation.name }
}

/// Every operation of protocol section 1.
public enum ListOperation: Equatable, Hashable, Sendable {
  case appendSections([String])
  case insertSections([String], Anchor)
  case deleteSections([String])
  case moveSection(String, Anchor)
  case reloadSections([String])
  /// With a parent: as its last children; else as last roots of the section (or the last).
  case appendItems([OutlineNode], section: String?, parent: String?)
  case insertItems([OutlineNode], Anchor)
  case deleteItems([String])
  case deleteAllItems
  case moveItem(String, Anchor)
  case replaceChildren(parent: String, items: [OutlineNode])
  case applySectionSnapshot(section: String, items: [OutlineNode])
  case reloadItems([String])
  case reconfigureItems([String])
  case update(item: String, title: String?, fields: [String: String]?)
  case expand([String])
  case collapse([String])
  case select([String])
  /// Deselect these items, or everything when nil.
  case deselect([String]?)
  case configure(multipleSelection: Bool)
  case mark(String)
  case batch([Event])

  /// The protocol's `op` name.
  public var name: String {
    switch self {
    case .appendSections: return "appendSections"
    case .insertSections: return "insertSections"
    case .deleteSections: return "deleteSections"
    case .moveSection: return "moveSection"
    case .reloadSections: return "reloadSections"
    case .appendItems: return "appendItems"
    case .insertItems: return "insertItems"
    case .deleteItems: return "deleteItems"
    case .deleteAllItems: return "deleteAllItems"
    case .moveItem: return "moveItem"
    case .replaceChildren: return "replaceChildren"
    case .applySectionSnapshot: return "applySectionSnapshot"
    case .reloadItems: return "reloadItems"
    case .reconfigureItems: return "reconfigureItems"
    case .update: return "update"
    case .expand: return "expand"
    case .collapse: return "collapse"
    case .select: return "select"
    case .deselect: return "deselect"
    case .configure: return "configure"
    case .mark: return "mark"
    case .batch: return "batch"
    }
  }

  /// Every op name, in the protocol's order.
  package static let allNames = [
    "appendSections", "insertSections", "deleteSections", "moveSection", "reloadSections",
    "appendItems", "insertItems", "deleteItems", "deleteAllItems", "moveItem", "replaceChildren",
    "applySectionSnapshot", "reloadItems", "reconfigureItems", "update", "expand", "collapse",
    "select", "deselect", "configure", "mark", "batch",
  ]

  /// Labels of the marks this event sets (a batch's nested marks included), in order.
  package var markLabels: [String] {
    switch self {
    case .mark(let label): return [label]
    case .batch(let events): return events.flatMap { $0.operation.markLabels }
    default: return []
    }
  }

  /// Whether the event names item `id` (one of `itemIDs`), comparing identifiers exactly as
  /// the model does (by Unicode scalars), without collecting them.
  package func names(item id: String) -> Bool {
    func any(_ nodes: [OutlineNode]) -> Bool {
      var found = false
      for n in nodes where !found { n.forEachID { if sameIdentifier($0, id) { found = true } } }
      return found
    }
    func any(_ ids: [String]) -> Bool { ids.contains { sameIdentifier($0, id) } }
    switch self {
    case .appendItems(let items, _, let parent):
      return parent.map { sameIdentifier($0, id) } == true || any(items)
    case .insertItems(let items, let anchor): return sameIdentifier(anchor.id, id) || any(items)
    case .deleteItems(let ids), .reloadItems(let ids), .reconfigureItems(let ids),
      .expand(let ids), .collapse(let ids), .select(let ids):
      return any(ids)
    case .deselect(let ids): return any(ids ?? [])
    case .moveItem(let item, let anchor):
      return sameIdentifier(item, id) || sameIdentifier(anchor.id, id)
    case .replaceChildren(let parent, let items): return sameIdentifier(parent, id) || any(items)
    case .applySectionSnapshot(_, let items): return any(items)
    case .update(let item, _, _): return sameIdentifier(item, id)
    case .batch(let events): return events.contains { $0.operation.names(item: id) }
    default: return false
    }
  }

  /// Every item identifier the event names (inserted, anchored, or targeted), for
  /// searching a log for the events that touch an item.
  package var itemIDs: [String] {
    func nodeIDs(_ nodes: [OutlineNode]) -> [String] {
      var out: [String] = []
      for n in nodes { n.forEachID { out.append($0) } }
      return out
    }
    switch self {
    case .appendItems(let items, _, let parent): return nodeIDs(items) + (parent.map { [$0] } ?? [])
    case .insertItems(let items, let anchor): return nodeIDs(items) + [anchor.id]
    case .deleteItems(let ids), .reloadItems(let ids), .reconfigureItems(let ids),
      .expand(let ids), .collapse(let ids), .select(let ids):
      return ids
    case .deselect(let ids): return ids ?? []
    case .moveItem(let id, let anchor): return [id, anchor.id]
    case .replaceChildren(let parent, let items): return [parent] + nodeIDs(items)
    case .applySectionSnapshot(_, let items): return nodeIDs(items)
    case .update(let item, _, _): return [item]
    case .batch(let events): return events.flatMap { $0.operation.itemIDs }
    default: return []
    }
  }
}
