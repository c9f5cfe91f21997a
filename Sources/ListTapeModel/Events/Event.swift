/// Where an insertion or move lands: next to an existing section or item.
public enum Anchor: Equatable, Hashable, Sendable {
  /// Right before this section or item.
  case before(String)
  /// Right after this section, or after this item's whole subtree.
  case after(String)

  /// The anchor's identifier.
  public var id: String {
    switch self {
    case .before(let id), .after(let id): return id
    }
  }

  /// Whether the anchor is `after`.
  public var isAfter: Bool {
    if case .after = self { return true }
    return false
  }
}

/// One recorded edit of the list: an operation, the wall-clock time it happened, and the
/// code that made it.
public struct Event: Equatable, Hashable, Sendable {
  /// What the event does.
  public var operation: ListOperation
  /// Milliseconds since the Unix epoch; the recorder stamps events that have none.
  public var time: Int64?
  /// The code that made the event (`"File.swift:142"`, optionally followed by a space and
  /// the function); never changes a state. Non-empty when present.
  public var site: String?

  /// An event, stamped with `time` or left for the recorder to stamp, made at `site`.
  public init(_ operation: ListOperation, time: Int64? = nil, site: String? = nil) {
    self.operation = operation
    self.time = time
    self.site = site
  }

  /// The protocol's `op` name.
  public var op: String { operation.name }
}

/// Every operation of protocol section 1.
public enum ListOperation: Equatable, Hashable, Sendable {
  /// Sections added at the end, in order.
  case appendSections([String])
  /// Sections added next to an existing one.
  case insertSections([String], Anchor)
  /// Sections removed with their items; absent ids are ignored.
  case deleteSections([String])
  /// A section moved, with its items, next to another.
  case moveSection(String, Anchor)
  /// No structural change; every section must exist.
  case reloadSections([String])
  /// With a parent: as its last children; else as last roots of the section (or the last).
  case appendItems([OutlineNode], section: String?, parent: String?)
  /// Items inserted as siblings of the anchor (`after`: after its whole subtree).
  case insertItems([OutlineNode], Anchor)
  /// Items removed with their descendants; absent ids are ignored.
  case deleteItems([String])
  /// Every item removed; the sections stay.
  case deleteAllItems
  /// An item moved with its subtree next to the anchor, taking its parent and section.
  case moveItem(String, Anchor)
  /// Every descendant of `parent` dropped, then `items` attached as its children.
  case replaceChildren(parent: String, items: [OutlineNode])
  /// The whole content of an existing section replaced (Apple's `apply(_:to:)`).
  case applySectionSnapshot(section: String, items: [OutlineNode])
  /// No structural change; every item must exist.
  case reloadItems([String])
  /// No structural change; every item must exist.
  case reconfigureItems([String])
  /// An item's title replaced (when given) and its fields merged key by key.
  case update(item: String, title: String?, fields: [String: String]?)
  /// Items' expanded flags set.
  case expand([String])
  /// Items' expanded flags cleared; hidden items leave the selection.
  case collapse([String])
  /// Visible items selected; in single mode the selection becomes these (at most one).
  case select([String])
  /// Deselect these items, or everything when nil.
  case deselect([String]?)
  /// The selection mode; switching to single clears the selection.
  case configure(multipleSelection: Bool)
  /// A bookmark with a label; no state change.
  case mark(String)
  /// Events applied atomically: all of them, or none when one faults.
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
    var labels: [String] = []
    forEachOperation { op in
      if case .mark(let label) = op { labels.append(label) }
      return true
    }
    return labels
  }

  /// Calls `body` on this operation and, for a batch, on every operation inside it (nested
  /// batches included) in order, until `body` returns false. - Complexity: O(operations),
  /// without recursion.
  func forEachOperation(_ body: (ListOperation) -> Bool) {
    guard case .batch(let events) = self else {
      _ = body(self)
      return
    }
    guard body(self) else { return }
    var stack: [(events: [Event], next: Int)] = [(events, 0)]
    while let top = stack.last {
      if top.next == top.events.count {
        stack.removeLast()
        continue
      }
      let op = top.events[top.next].operation
      stack[stack.count - 1].next += 1
      guard body(op) else { return }
      if case .batch(let inner) = op { stack.append((inner, 0)) }
    }
  }

  /// Whether the event names item `id` (one of `itemIDs`), comparing identifiers exactly as
  /// the model does (by Unicode scalars), without collecting them.
  package func names(item id: String) -> Bool {
    var found = false
    forEachOperation { op in
      op.forEachItemID { if sameIdentifier($0, id) { found = true } }
      return !found
    }
    return found
  }

  /// Every item identifier the event names (inserted, anchored, or targeted), for
  /// searching a log for the events that touch an item.
  package var itemIDs: [String] {
    var out: [String] = []
    forEachOperation { op in
      op.forEachItemID { out.append($0) }
      return true
    }
    return out
  }

  /// How many identifiers `itemIDs` lists, counted without collecting them (what holding
  /// the event costs, roughly: a `String` each).
  package var itemIDCount: Int {
    var count = 0
    forEachOperation { op in
      op.forEachItemID { _ in count += 1 }
      return true
    }
    return count
  }

  /// UTF-8 bytes of the identifiers `itemIDs` lists, counted without collecting them (what
  /// the event's JSON must at least hold).
  package var itemIDBytes: Int {
    var bytes = 0
    forEachOperation { op in
      op.forEachItemID { bytes += $0.utf8.count }
      return true
    }
    return bytes
  }

  /// Calls `body` with each item identifier this operation names itself (not those inside a
  /// batch): inserted nodes in pre-order, then the parent or anchor, as `itemIDs` lists them.
  private func forEachItemID(_ body: (String) -> Void) {
    func nodes(_ list: [OutlineNode]) {
      for n in list { n.forEachID(body) }
    }
    switch self {
    case .appendItems(let items, _, let parent):
      nodes(items)
      if let parent { body(parent) }
    case .insertItems(let items, let anchor):
      nodes(items)
      body(anchor.id)
    case .deleteItems(let ids), .reloadItems(let ids), .reconfigureItems(let ids),
      .expand(let ids), .collapse(let ids), .select(let ids):
      ids.forEach(body)
    case .deselect(let ids): ids?.forEach(body)
    case .moveItem(let id, let anchor):
      body(id)
      body(anchor.id)
    case .replaceChildren(let parent, let items):
      body(parent)
      nodes(items)
    case .applySectionSnapshot(_, let items): nodes(items)
    case .update(let item, _, _): body(item)
    default: break
    }
  }
}
