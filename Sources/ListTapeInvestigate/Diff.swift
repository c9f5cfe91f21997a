import ListTapeModel
import ListTapeStore

/// Where an item sits: section, parent (nil for a root) and previous sibling (nil if first).
public struct ItemPlace: Equatable, Sendable {
  /// The section it is in.
  public var section: String
  /// Its parent, nil for a root item.
  public var parent: String?
  /// The sibling right before it, nil when it is the first.
  public var after: String?

  /// A place: section, parent (nil for a root) and previous sibling (nil if first).
  public init(section: String, parent: String?, after: String?) {
    self.section = section
    self.parent = parent
    self.after = after
  }
}

/// What changed about one item of the new state.
public enum ItemChange: Equatable, Sendable {
  /// It is new, at this place.
  case inserted(at: ItemPlace)
  /// It moved: to another parent or section, or among its siblings.
  case moved(from: ItemPlace, to: ItemPlace)
  case expanded
  case collapsed
  /// Its title changed (nil: none).
  case title(from: String?, to: String?)
  /// Its fields changed (nil: none).
  case fields(from: [String: String]?, to: [String: String]?)
}

/// One item of the new state, in display order, with what changed about it (nothing for
/// an unchanged item).
public struct DiffRow: Equatable, Sendable {
  /// The section it is in.
  public var section: String
  /// The item.
  public var id: String
  /// Its depth, 0 for a root item.
  public var level: Int
  /// What changed about it, in the order a diff lists them.
  public var changes: [ItemChange]
}

/// What changed between two states, by item identity.
public struct StateDiff: Sendable {
  /// Sections only the new state has, in its order.
  public var sectionsInserted: [String] = []
  /// Sections only the old state has, in its order.
  public var sectionsDeleted: [String] = []
  /// Sections both have, outside a longest run kept in order: the fewest that moved.
  public var sectionsMoved: [String] = []
  /// Items only the new state has, where they are.
  public var inserted: [(id: String, place: ItemPlace)] = []
  /// Items only the old state has, where they were.
  public var deleted: [(id: String, place: ItemPlace)] = []
  /// Items that changed parent or section, or the fewest that moved among their siblings.
  public var moved: [(id: String, from: ItemPlace, to: ItemPlace)] = []
  /// Items that both states have, expanded only in the new one.
  public var expanded: [String] = []
  /// Items that both states have, collapsed only in the new one.
  public var collapsed: [String] = []
  /// Title changes of items both states have.
  public var titles: [(id: String, from: String?, to: String?)] = []
  /// Field changes of items both states have.
  public var fields: [(id: String, from: [String: String]?, to: [String: String]?)] = []
  /// Selected ids before and after, in display order; equal sets mean no change.
  public var selectionBefore: [String] = []
  /// Selected ids after, in display order.
  public var selectionAfter: [String] = []
  /// Whether multiple selection was allowed before and after (a `configure` event).
  public var multipleSelectionBefore = false
  /// Whether multiple selection is allowed after.
  public var multipleSelectionAfter = false
  /// Items present in both states with nothing changed.
  public var unchanged = 0
  /// The new state's items in display order, each with its changes: what a renderer walks
  /// to show the changes in context.
  public var rows: [DiffRow] = []

  /// Whether the set of selected items differs.
  public var selectionChanged: Bool {
    Set(selectionBefore.map(IdentifierKey.init)) != Set(selectionAfter.map(IdentifierKey.init))
  }

  /// Whether the selection mode differs.
  public var selectionModeChanged: Bool { multipleSelectionBefore != multipleSelectionAfter }

  /// Whether the two states are identical.
  public var isEmpty: Bool {
    sectionsInserted.isEmpty && sectionsDeleted.isEmpty && sectionsMoved.isEmpty
      && inserted.isEmpty && deleted.isEmpty && moved.isEmpty && expanded.isEmpty
      && collapsed.isEmpty && titles.isEmpty && fields.isEmpty && !selectionChanged
      && !selectionModeChanged
  }

  /// Number of changes of every kind.
  public var changeCount: Int {
    sectionsInserted.count + sectionsDeleted.count + sectionsMoved.count + inserted.count
      + deleted.count + moved.count + expanded.count + collapsed.count + titles.count
      + fields.count + (selectionChanged ? 1 : 0) + (selectionModeChanged ? 1 : 0)
  }
}

/// Computes `StateDiff`s: identity-based, with Apple-like move detection (items whose
/// parent changed, plus the fewest siblings that must move to reach the new order).
public enum Differ {
  /// What changed from `a` to `b`. - Complexity: O(n log n) for n items.
  public static func diff(_ a: ListState, _ b: ListState) -> StateDiff {
    var d = StateDiff()
    let aSections = a.sectionIdentifiers
    let bSections = b.sectionIdentifiers
    // Identifiers compare by code points (IdentifierKey), as the model does.
    let aSet = Set(aSections.map(IdentifierKey.init))
    let bSet = Set(bSections.map(IdentifierKey.init))
    d.sectionsInserted = bSections.filter { !aSet.contains(IdentifierKey($0)) }
    d.sectionsDeleted = aSections.filter { !bSet.contains(IdentifierKey($0)) }
    d.sectionsMoved = Reordering.moved(
      from: aSections.filter { bSet.contains(IdentifierKey($0)) },
      to: bSections.filter { aSet.contains(IdentifierKey($0)) })

    // Every item of each state with its place; children lists per parent for move detection.
    struct Info {
      var row: OutlineRow
      var place: ItemPlace
    }
    func index(_ s: ListState) -> (rows: [IdentifierKey: Info], order: [(String, OutlineRow)]) {
      var rows: [IdentifierKey: Info] = [:]
      var order: [(String, OutlineRow)] = []
      for section in s.sectionIdentifiers {
        var lastAtLevel: [String?] = []
        for row in s.rows(inSection: section) ?? [] {
          if lastAtLevel.count > row.level + 1 { lastAtLevel.removeSubrange((row.level + 1)...) }
          while lastAtLevel.count < row.level + 1 { lastAtLevel.append(nil) }
          let place = ItemPlace(section: section, parent: row.parent, after: lastAtLevel[row.level])
          lastAtLevel[row.level] = row.id
          rows[IdentifierKey(row.id)] = Info(row: row, place: place)
          order.append((section, row))
        }
      }
      return (rows, order)
    }
    let (aRows, aOrder) = index(a)
    let (bRows, bOrder) = index(b)

    for (_, row) in aOrder where bRows[IdentifierKey(row.id)] == nil {
      if let info = aRows[IdentifierKey(row.id)] { d.deleted.append((row.id, info.place)) }
    }
    // Siblings that kept their parent: the fewest of them that must move (not in the LIS).
    var siblingsA: [IdentifierKey: [String]] = [:]
    var siblingsB: [IdentifierKey: [String]] = [:]
    func key(_ p: ItemPlace) -> IdentifierKey {
      IdentifierKey(p.parent.map { "i:" + $0 } ?? "s:" + p.section)
    }
    for (_, row) in aOrder {
      guard let info = aRows[IdentifierKey(row.id)], let other = bRows[IdentifierKey(row.id)],
        key(info.place) == key(other.place)
      else { continue }
      siblingsA[key(info.place), default: []].append(row.id)
    }
    for (_, row) in bOrder {
      guard let info = bRows[IdentifierKey(row.id)], let other = aRows[IdentifierKey(row.id)],
        key(info.place) == key(other.place)
      else { continue }
      siblingsB[key(info.place), default: []].append(row.id)
    }
    var movedIDs = Set<IdentifierKey>()
    for (k, list) in siblingsB {
      movedIDs.formUnion(
        Reordering.moved(from: siblingsA[k] ?? [], to: list).map(IdentifierKey.init))
    }

    for (section, row) in bOrder {
      var changes: [ItemChange] = []
      guard let info = bRows[IdentifierKey(row.id)] else { continue }
      if let old = aRows[IdentifierKey(row.id)] {
        if key(old.place) != key(info.place) || movedIDs.contains(IdentifierKey(row.id)) {
          d.moved.append((row.id, old.place, info.place))
          changes.append(.moved(from: old.place, to: info.place))
        }
        if old.row.expanded != row.expanded {
          if row.expanded {
            d.expanded.append(row.id)
          } else {
            d.collapsed.append(row.id)
          }
          changes.append(row.expanded ? .expanded : .collapsed)
        }
        if old.row.title != row.title {
          d.titles.append((row.id, old.row.title, row.title))
          changes.append(.title(from: old.row.title, to: row.title))
        }
        if old.row.fields != row.fields {
          d.fields.append((row.id, old.row.fields, row.fields))
          changes.append(.fields(from: old.row.fields, to: row.fields))
        }
        if changes.isEmpty { d.unchanged += 1 }
      } else {
        d.inserted.append((row.id, info.place))
        changes.append(.inserted(at: info.place))
      }
      d.rows.append(DiffRow(section: section, id: row.id, level: row.level, changes: changes))
    }
    d.selectionBefore = a.selectedItems
    d.selectionAfter = b.selectedItems
    d.multipleSelectionBefore = a.allowsMultipleSelection
    d.multipleSelectionAfter = b.allowsMultipleSelection
    return d
  }
}
