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
  /// The item was expanded.
  case expanded
  /// The item was collapsed.
  case collapsed
  /// Its title changed (nil: none).
  case title(from: String?, to: String?)
  /// Its fields changed (nil: none).
  case fields(from: [String: String]?, to: [String: String]?)
}

/// One item of the new state, in display order, with what changed about it (nothing for
/// an unchanged item); or a run of unchanged items counted rather than listed.
public struct DiffRow: Equatable, Sendable {
  /// The section it is in.
  public var section: String
  /// The item; empty for a run.
  public var id: String
  /// Its depth, 0 for a root item (and for a run).
  public var level: Int
  /// What changed about it, in the order a diff lists them.
  public var changes: [ItemChange]
  /// For a run of unchanged items left unlisted, how many; 0 for an item.
  public var unchangedRun = 0

  /// An item and what changed about it.
  init(section: String, id: String, level: Int, changes: [ItemChange]) {
    self.section = section
    self.id = id
    self.level = level
    self.changes = changes
  }

  /// A run of `count` unchanged items of `section`, counted rather than listed.
  init(section: String, unchangedRun count: Int) {
    self.init(section: section, id: "", level: 0, changes: [])
    unchangedRun = count
  }
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
  /// Selected ids before, in display order, when the selection changed; empty when not (and
  /// when a diff built for the page's words alone left out a selection of more than
  /// `listedSelection` items).
  public var selectionBefore: [String] {
    get { selectedBefore.strings }
    set { selectedBefore = IDList(newValue) }
  }
  /// Selected ids after, in display order, as `selectionBefore`.
  public var selectionAfter: [String] {
    get { selectedAfter.strings }
    set { selectedAfter = IDList(newValue) }
  }
  /// `selectionBefore` and `selectionAfter` as they are held: a selection of thousands of
  /// items costs no `String` each (JSON writes them from these bytes).
  package var selectedBefore = IDList()
  package var selectedAfter = IDList()
  /// Ids selected only after, in display order; empty when the selection did not change.
  public var selectionAdded: [String] = []
  /// Ids selected only before, in display order; empty when the selection did not change.
  public var selectionRemoved: [String] = []
  /// How many items were selected before, when the selection changed (else 0).
  public var selectedCountBefore = 0
  /// How many items are selected after, when the selection changed (else 0).
  public var selectedCountAfter = 0
  /// Whether multiple selection was allowed before and after (a `configure` event).
  public var multipleSelectionBefore = false
  /// Whether multiple selection is allowed after.
  public var multipleSelectionAfter = false
  /// Items present in both states with nothing changed.
  public var unchanged = 0
  /// The new state's items in display order, each with its changes: what a renderer walks
  /// to show the changes in context. Runs of unchanged items may be one counted row each
  /// (`foldingUnchanged(longerThan:)`, and diffs built from events).
  public var rows: [DiffRow] = []

  /// Whether the set of selected items differs.
  public var selectionChanged: Bool { !selectionAdded.isEmpty || !selectionRemoved.isEmpty }

  /// Up to this many selected items before and after together, a diff lists both whole
  /// selections in its words; past it, what was added and removed (the whole lists stay
  /// in the JSON).
  public static let listedSelection = 16

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

  /// This diff with every run of more than `context` unchanged rows in a section replaced
  /// by one row counting them (`DiffRow.unchangedRun`): what a renderer shows, and what
  /// `Differ.diff(_:_:touched:context:)` builds directly. A run that holds a counted row
  /// stays counted, whatever its length.
  public func foldingUnchanged(longerThan context: Int) -> StateDiff {
    var folded = self
    folded.rows = []
    folded.rows.reserveCapacity(min(rows.count, 1_024))
    var run: [DiffRow] = []
    var runCount = 0
    func flush() {
      guard let first = run.first else { return }
      if runCount > context || run.contains(where: { $0.unchangedRun > 0 }) {
        folded.rows.append(DiffRow(section: first.section, unchangedRun: runCount))
      } else {
        folded.rows.append(contentsOf: run)
      }
      run.removeAll()
      runCount = 0
    }
    for row in rows {
      if let first = run.first, first.section != row.section { flush() }
      guard row.changes.isEmpty else {
        flush()
        folded.rows.append(row)
        continue
      }
      runCount += max(1, row.unchangedRun)
      // Past `context`, the run is counted whatever follows: keep one row, not them all.
      if runCount > context {
        run = [DiffRow(section: row.section, unchangedRun: runCount)]
      } else {
        run.append(row)
      }
    }
    flush()
    return folded
  }
}

extension StateDiff: Equatable {
  /// Whether two diffs report the same changes, in the same order, with the same rows.
  public static func == (a: StateDiff, b: StateDiff) -> Bool {
    func same(_ x: [(id: String, place: ItemPlace)], _ y: [(id: String, place: ItemPlace)])
      -> Bool
    {
      x.count == y.count && zip(x, y).allSatisfy { $0.id == $1.id && $0.place == $1.place }
    }
    return a.sectionsInserted == b.sectionsInserted && a.sectionsDeleted == b.sectionsDeleted
      && a.sectionsMoved == b.sectionsMoved && same(a.inserted, b.inserted)
      && same(a.deleted, b.deleted)
      && a.moved.count == b.moved.count
      && zip(a.moved, b.moved).allSatisfy { $0.id == $1.id && $0.from == $1.from && $0.to == $1.to }
      && a.expanded == b.expanded && a.collapsed == b.collapsed
      && a.titles.count == b.titles.count
      && zip(a.titles, b.titles).allSatisfy {
        $0.id == $1.id && $0.from == $1.from && $0.to == $1.to
      }
      && a.fields.count == b.fields.count
      && zip(a.fields, b.fields).allSatisfy {
        $0.id == $1.id && $0.from == $1.from && $0.to == $1.to
      }
      && a.selectedBefore == b.selectedBefore && a.selectedAfter == b.selectedAfter
      && a.selectionAdded == b.selectionAdded && a.selectionRemoved == b.selectionRemoved
      && a.selectedCountBefore == b.selectedCountBefore
      && a.selectedCountAfter == b.selectedCountAfter
      && a.multipleSelectionBefore == b.multipleSelectionBefore
      && a.multipleSelectionAfter == b.multipleSelectionAfter && a.unchanged == b.unchanged
      && a.rows == b.rows
  }
}

/// Computes `StateDiff`s: identity-based, with Apple-like move detection (items whose
/// parent changed, plus the fewest siblings that must move to reach the new order).
public enum Differ {
  /// What changed from `a` to `b`, every row listed. - Complexity: O(n log n) for n items.
  package static func diff(_ a: ListState, _ b: ListState) -> StateDiff {
    var d = StateDiff()
    compareSections(a, b, into: &d)

    // Every item of each state with its place, in pre-order; each id's position there.
    struct Info {
      var section: String
      var row: OutlineRow
      var place: ItemPlace
    }
    func index(_ s: ListState) -> (rows: [IdentifierKey: Int], order: [Info]) {
      // Sized once, the table holding positions rather than rows: growing by doubling held
      // the old and the new tables at once, and rows inline made each bucket ~150 bytes.
      var rows: [IdentifierKey: Int] = Dictionary(minimumCapacity: s.numberOfAllItems)
      var order: [Info] = []
      order.reserveCapacity(s.numberOfAllItems)
      for ref in s.sections {
        let section = s.id(of: ref)
        var lastAtLevel: [String?] = []
        for row in s.rows(in: ref) {
          if lastAtLevel.count > row.level + 1 { lastAtLevel.removeSubrange((row.level + 1)...) }
          while lastAtLevel.count < row.level + 1 { lastAtLevel.append(nil) }
          let place = ItemPlace(section: section, parent: row.parent, after: lastAtLevel[row.level])
          lastAtLevel[row.level] = row.id
          rows[IdentifierKey(row.id)] = order.count
          order.append(Info(section: section, row: row, place: place))
        }
      }
      return (rows, order)
    }
    let (aRows, aOrder) = index(a)
    let (bRows, bOrder) = index(b)
    func inA(_ id: String) -> Info? { aRows[IdentifierKey(id)].map { aOrder[$0] } }
    func inB(_ id: String) -> Info? { bRows[IdentifierKey(id)].map { bOrder[$0] } }

    for info in aOrder where bRows[IdentifierKey(info.row.id)] == nil {
      d.deleted.append((info.row.id, info.place))
    }
    // Siblings that kept their parent: the fewest of them that must move (not in the LIS).
    var siblingsA: [IdentifierKey: [String]] = [:]
    var siblingsB: [IdentifierKey: [String]] = [:]
    for info in aOrder {
      guard let other = inB(info.row.id), key(info.place) == key(other.place) else { continue }
      siblingsA[key(info.place), default: []].append(info.row.id)
    }
    for info in bOrder {
      guard let other = inA(info.row.id), key(info.place) == key(other.place) else { continue }
      siblingsB[key(info.place), default: []].append(info.row.id)
    }
    var movedIDs = Set<IdentifierKey>()
    for (k, list) in siblingsB {
      movedIDs.formUnion(
        Reordering.moved(from: siblingsA[k] ?? [], to: list).map(IdentifierKey.init))
    }

    d.rows.reserveCapacity(bOrder.count)
    for info in bOrder {
      let row = info.row
      var changes: [ItemChange] = []
      if let old = inA(row.id) {
        let moved = key(old.place) != key(info.place) || movedIDs.contains(IdentifierKey(row.id))
        changes = d.recordKept(
          row.id, moved: moved,
          from: (old.place, old.row.expanded, old.row.title, old.row.fields),
          to: (info.place, row.expanded, row.title, row.fields))
        if changes.isEmpty { d.unchanged += 1 }
      } else {
        d.inserted.append((row.id, info.place))
        changes.append(.inserted(at: info.place))
      }
      d.rows.append(DiffRow(section: info.section, id: row.id, level: row.level, changes: changes))
    }
    compareSelection(a, b, into: &d)
    return d
  }

  /// The sibling group an item belongs to for move detection: its parent, or its section
  /// (where in the group, `after`, is not part of it).
  static func key(_ p: ItemPlace) -> IdentifierKey {
    IdentifierKey(p.parent.map { "i:" + $0 } ?? "s:" + p.section)
  }

  /// Sections inserted, deleted and moved (the fewest that must move).
  /// - Complexity: O(sections).
  static func compareSections(_ a: ListState, _ b: ListState, into d: inout StateDiff) {
    compareSections(a.sectionIdentifiers, b.sectionIdentifiers, into: &d)
  }

  /// `compareSections(_:_:into:)` of the two states' section identifiers.
  static func compareSections(
    _ aSections: [String], _ bSections: [String], into d: inout StateDiff
  ) {
    // Identifiers compare by code points (IdentifierKey), as the model does.
    let aSet = Set(aSections.map(IdentifierKey.init))
    let bSet = Set(bSections.map(IdentifierKey.init))
    d.sectionsInserted = bSections.filter { !aSet.contains(IdentifierKey($0)) }
    d.sectionsDeleted = aSections.filter { !bSet.contains(IdentifierKey($0)) }
    d.sectionsMoved = Reordering.moved(
      from: aSections.filter { bSet.contains(IdentifierKey($0)) },
      to: bSections.filter { aSet.contains(IdentifierKey($0)) })
  }

  /// The selection mode before and after, and the selected items in display order when the
  /// set of them changed. - Complexity: O(selected × depth × log siblings).
  static func compareSelection(_ a: ListState, _ b: ListState, into d: inout StateDiff) {
    d.multipleSelectionBefore = a.allowsMultipleSelection
    d.multipleSelectionAfter = b.allowsMultipleSelection
    let before = a.selectedItems
    let after = b.selectedItems
    let was = Set(before.map(IdentifierKey.init))
    let now = Set(after.map(IdentifierKey.init))
    guard was != now else { return }
    d.selectionBefore = before
    d.selectionAfter = after
    d.selectionRemoved = before.filter { !now.contains(IdentifierKey($0)) }
    d.selectionAdded = after.filter { !was.contains(IdentifierKey($0)) }
    d.selectedCountBefore = before.count
    d.selectedCountAfter = after.count
  }
}

/// What a diff compares of an item present in both states.
typealias ItemFacts = (
  place: ItemPlace, expanded: Bool, title: String?, fields: [String: String]?
)

extension StateDiff {
  /// Records the changes of an item present in both states, in the order a diff lists
  /// them; returns them (empty when unchanged).
  mutating func recordKept(_ id: String, moved: Bool, from old: ItemFacts, to new: ItemFacts)
    -> [ItemChange]
  {
    var changes: [ItemChange] = []
    if moved {
      self.moved.append((id, old.place, new.place))
      changes.append(.moved(from: old.place, to: new.place))
    }
    if old.expanded != new.expanded {
      if new.expanded {
        expanded.append(id)
      } else {
        collapsed.append(id)
      }
      changes.append(new.expanded ? .expanded : .collapsed)
    }
    if old.title != new.title {
      titles.append((id, old.title, new.title))
      changes.append(.title(from: old.title, to: new.title))
    }
    if old.fields != new.fields {
      fields.append((id, old.fields, new.fields))
      changes.append(.fields(from: old.fields, to: new.fields))
    }
    return changes
  }
}
