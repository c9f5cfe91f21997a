import ListTapeModel
import ListTapeStore

extension Differ {
  /// What `events` change when folded onto `state` (faults change nothing), compared only
  /// where they touched, with runs of more than `context` unchanged rows counted.
  /// - Complexity: O(events × log n) plus the items they touch.
  package static func diff(_ state: ListState, applying events: [Event], context: Int = 2)
    -> StateDiff
  {
    var b = state
    var touched = TouchedItems(limit: max(1_024, state.numberOfAllItems / 4))
    for event in events {
      touched.note(event, before: b)
      try? b.apply(event)
    }
    return diff(state, b, touched: touched, context: context)
  }

  /// `diff(a, b).foldingUnchanged(longerThan: context)` when every item whose existence,
  /// place, flags, content or selection differs between `a` and `b` is in `touched`
  /// (`TouchedItems` of the events that lead from one to the other). Reads only the touched
  /// items, the sibling lists whose order they may have changed, the few rows shown around
  /// each change, and each section's ends.
  /// - Complexity: O(touched × depth × log n + siblings of reordered lists + sections);
  ///   O(n) when `touched` overflowed (then both states are compared whole).
  /// With `selectionLists` false, a changed selection of more than
  /// `StateDiff.listedSelection` items is told by what was added and removed only (what
  /// the words show), without walking every selected item.
  package static func diff(
    _ a: ListState, _ b: ListState, touched: TouchedItems, context: Int = 2,
    selectionLists: Bool = true
  ) -> StateDiff {
    incremental(a, b, touched: touched, context: context, selectionLists: selectionLists).diff
  }

  /// `diff(_:_:touched:context:)` and how many items it read (tests check it stays small).
  package static func incremental(
    _ a: ListState, _ b: ListState, touched: TouchedItems, context: Int,
    selectionLists: Bool = true
  ) -> (diff: StateDiff, examined: Int) {
    guard !touched.overflowed else {
      return (
        diff(a, b).foldingUnchanged(longerThan: context), a.numberOfAllItems + b.numberOfAllItems
      )
    }
    var old = Navigator(a)
    // A navigator over the whole old state answers everything.
    guard
      let result = incremental(
        &old, b, touched: touched, context: context, selectionLists: selectionLists)
    else { preconditionFailure("the old state itself answers every question") }
    return result
  }

  /// `diff(_:_:touched:context:selectionLists:)` with the state before one event read ahead
  /// of it (`DiffBefore`), the event then applied in place to give `b`: no copy of the state.
  /// Nil when what was read ahead cannot answer (the caller compares the states instead).
  package static func diff(
    _ before: DiffBefore, _ b: ListState, touched: TouchedItems, context: Int = 2,
    selectionLists: Bool = true
  ) -> StateDiff? {
    guard !touched.overflowed else { return nil }
    var old = before
    return incremental(&old, b, touched: touched, context: context, selectionLists: selectionLists)?
      .diff
  }

  /// The incremental diff reading the old state through `old`; nil when `old` could not
  /// answer a question (a `DiffBefore` without the selection or a sibling list asked for).
  private static func incremental<Old: OldSide>(
    _ old: inout Old, _ b: ListState, touched: TouchedItems, context: Int, selectionLists: Bool
  ) -> (diff: StateDiff, examined: Int)? {
    var d = StateDiff()
    compareSections(old.sectionIdentifiers, b.sectionIdentifiers, into: &d)
    var new = Navigator(b)

    // Each touched item: deleted, inserted, or kept (then possibly moved among siblings).
    var deleted: [(id: String, place: ItemPlace, order: (Int, Int))] = []
    var shown: [(id: String, old: ItemFacts?, new: ItemFacts, order: (Int, Int))] = []
    // Each sibling list kept items share, by place, with one of its items.
    var groups: [IdentifierKey: String] = [:]
    for id in touched.ids {
      // The old state first: the new one's ids grew from it, so its search is shorter.
      let x = old.facts(id)
      switch (x, new.facts(id)) {
      case (let x?, nil):
        deleted.append((id, x.place, old.order(of: id)))
      case (nil, let y?):
        shown.append((id, nil, y, new.order(of: id)))
      case (let x?, let y?):
        // Only a list where an item may have moved is compared in order (a root list can
        // hold tens of thousands of items; an expand there reads none of them).
        if key(x.place) == key(y.place) && touched.mayMove(id) { groups[key(x.place)] = id }
        shown.append((id, x, y, new.order(of: id)))
      case (nil, nil):
        continue
      }
    }
    // Sibling lists whose order may have changed: the fewest that must move, over the
    // whole list, as `diff(a, b)` finds them (so ties resolve the same way).
    var movedIDs = Set<IdentifierKey>()
    for (k, member) in groups {
      func stays(_ id: String) -> Bool {
        !touched.contains(id) || (old.groupKey(id) == k && new.groupKey(id) == k)
      }
      guard let whole = old.list(of: member) else { return nil }
      let before = whole.filter(stays)
      let after = new.siblings(of: member).filter(stays)
      var positions: [IdentifierKey: Int] = [:]
      for id in Reordering.moved(from: before, to: after) {
        movedIDs.insert(IdentifierKey(id))
        // An untouched item can only change by moving: show it with its two places (the old
        // one is after its old predecessor, all else as now).
        if !touched.contains(id), let y = new.facts(id) {
          if positions.isEmpty {
            for (i, s) in whole.enumerated() { positions[IdentifierKey(s)] = i }
          }
          let i = positions[IdentifierKey(id)] ?? 0
          let place = ItemPlace(
            section: y.place.section, parent: y.place.parent, after: i > 0 ? whole[i - 1] : nil)
          shown.append((id, (place, y.expanded, y.title, y.fields), y, new.order(of: id)))
        }
      }
    }

    // The lists in the order `diff(a, b)` walks the states.
    for (id, place, _) in deleted.sorted(by: { $0.order < $1.order }) {
      d.deleted.append((id, place))
    }
    var anchors: [(row: DiffRow, order: (Int, Int))] = []
    var changedKept = 0
    for item in shown.sorted(by: { $0.order < $1.order }) {
      let section = item.new.place.section
      let level = new.level(of: item.id)
      guard let x = item.old else {
        d.inserted.append((item.id, item.new.place))
        let changes = [ItemChange.inserted(at: item.new.place)]
        anchors.append(
          (DiffRow(section: section, id: item.id, level: level, changes: changes), item.order))
        continue
      }
      let moved = key(x.place) != key(item.new.place) || movedIDs.contains(IdentifierKey(item.id))
      let changes = d.recordKept(item.id, moved: moved, from: x, to: item.new)
      if !changes.isEmpty {
        changedKept += 1
        anchors.append(
          (DiffRow(section: section, id: item.id, level: level, changes: changes), item.order))
      }
    }
    d.unchanged = b.numberOfAllItems - d.inserted.count - changedKept
    d.rows = new.walk(anchors: anchors, context: context)
    // Only touched items can have changed their selection; the lists are built (in
    // display order) only when one did.
    d.multipleSelectionBefore = old.allowsMultipleSelection
    d.multipleSelectionAfter = b.allowsMultipleSelection
    var removed: [(id: String, order: (Int, Int))] = []
    var added: [(id: String, order: (Int, Int))] = []
    for id in touched.ids {
      let was = old.isSelected(id)
      if was == new.isSelected(id) { continue }
      if was {
        removed.append((id, old.order(of: id)))
      } else {
        added.append((id, new.order(of: id)))
      }
    }
    if !removed.isEmpty || !added.isEmpty {
      d.selectionRemoved = removed.sorted { $0.order < $1.order }.map { $0.id }
      d.selectionAdded = added.sorted { $0.order < $1.order }.map { $0.id }
      d.selectedCountBefore = old.numberOfSelectedItems
      d.selectedCountAfter = b.numberOfSelectedItems
      // The whole lists are a walk of every selected item in each state: made for the
      // JSON, or when the words list them (a few items).
      if selectionLists
        || d.selectedCountBefore + d.selectedCountAfter <= StateDiff.listedSelection
      {
        guard let before = old.selectedIDs else { return nil }
        d.selectedBefore = before
        d.selectedAfter = b.selectedIDs
      }
    }
    return (d, touched.count + old.examined + new.examined)
  }
}

/// What a diff compares of an item in `state`; nil when absent. The item is found once (by
/// string, a pass over the entries when the ids have no string table).
func itemFacts(_ state: ListState, _ id: String) -> ItemFacts? {
  state.item(id).map { itemFacts(state, $0) }
}

/// What a diff compares of item `x` of `state`.
func itemFacts(_ state: ListState, _ x: ItemRef) -> ItemFacts {
  let p = state.placement(of: x)
  return (
    ItemPlace(section: p.section, parent: p.parent, after: p.after), state.isExpanded(x),
    state.title(of: x), state.fields(of: x)
  )
}

/// What the incremental diff asks of the old state.
private protocol OldSide {
  var sectionIdentifiers: [String] { get }
  var allowsMultipleSelection: Bool { get }
  var numberOfSelectedItems: Int { get }
  /// The selected items in display order; nil when not at hand.
  var selectedIDs: IDList? { get }
  /// Items listed in sibling lists (the cost beyond the per-item queries).
  var examined: Int { get }
  mutating func facts(_ id: String) -> ItemFacts?
  mutating func order(of id: String) -> (Int, Int)
  mutating func groupKey(_ id: String) -> IdentifierKey?
  mutating func isSelected(_ id: String) -> Bool
  /// The list of siblings `member` belongs to, in order; nil when not at hand.
  mutating func list(of member: String) -> [String]?
}

/// What the incremental diff of one event reads of the state before it, read before the
/// event is applied to that state in place (the diff then needs no copy of the state): the
/// touched items' facts, order and selection, the sections, the selection when the event
/// may change it, and for a move the sibling list its item joins. A delete reads no list,
/// nor a move its item's own list when it leaves it (should either fault, the diff asks for
/// a list and gets nil, and the caller compares the states instead).
package struct DiffBefore: OldSide {
  let sectionIdentifiers: [String]
  let allowsMultipleSelection: Bool
  let numberOfSelectedItems: Int
  let selectedIDs: IDList?
  let examined: Int
  private let items: [IdentifierKey: (facts: ItemFacts, order: (Int, Int), selected: Bool)]
  private let lists: [IdentifierKey: [String]]

  /// Reads what the diff of `event` needs of `state`, the state it is about to be applied
  /// to; `touched` has noted the event (`TouchedItems.note(_:before:)`). Nil when the event
  /// may move items already there in ways only the state after tells (a batch, a replace,
  /// a delete naming an absent id, …): the caller keeps the state before whole instead.
  package init?(_ state: ListState, event: Event, touched: TouchedItems, selectionLists: Bool) {
    var nav = Navigator(state)
    var items: [IdentifierKey: (facts: ItemFacts, order: (Int, Int), selected: Bool)] = [:]
    var lists: [IdentifierKey: [String]] = [:]
    var anySelected = false
    for id in touched.ids {
      guard let facts = nav.facts(id) else { continue }
      let selected = nav.isSelected(id)
      anySelected = anySelected || selected
      items[IdentifierKey(id)] = (facts, nav.order(of: id), selected)
      guard touched.mayMove(id) else { continue }
      let group = Differ.key(facts.place)
      switch event.operation {
      case .moveItem(let moved, _) where IdentifierKey(moved) == IdentifierKey(id):
        // Its own list is compared only when it stays there (then the anchor's list below
        // is the same one); to another list it leaves its own.
        break
      case .moveItem(_, let anchor) where IdentifierKey(anchor.id) == IdentifierKey(id):
        // The list the item joins (or stays in).
        if lists[group] == nil { lists[group] = nav.siblings(of: id) }
      case .deleteItems(let ids) where ids.allSatisfy({ nav.ref($0) != nil }):
        continue  // it and its subtree leave their lists
      default:
        return nil
      }
    }
    sectionIdentifiers = state.sectionIdentifiers
    allowsMultipleSelection = state.allowsMultipleSelection
    numberOfSelectedItems = state.numberOfSelectedItems
    // Only a select adds to the selection and only a touched selected item leaves it: the
    // whole list is read when the diff may list it and the event may change it.
    let mayChange = anySelected || Self.selects(event.operation)
    selectedIDs =
      mayChange
        && (selectionLists || numberOfSelectedItems <= StateDiff.listedSelection)
      ? state.selectedIDs : nil
    examined = nav.examined
    self.items = items
    self.lists = lists
  }

  private static func selects(_ op: ListOperation) -> Bool {
    switch op {
    case .select: return true
    case .batch(let events): return events.contains { selects($0.operation) }
    default: return false
    }
  }

  func facts(_ id: String) -> ItemFacts? { items[IdentifierKey(id)]?.facts }
  func order(of id: String) -> (Int, Int) { items[IdentifierKey(id)]?.order ?? (0, 0) }
  func isSelected(_ id: String) -> Bool { items[IdentifierKey(id)]?.selected ?? false }
  func groupKey(_ id: String) -> IdentifierKey? {
    items[IdentifierKey(id)].map { Differ.key($0.facts.place) }
  }
  func list(of member: String) -> [String]? { groupKey(member).flatMap { lists[$0] } }
}

/// Reads one state for the incremental diff: an item's facts, order and neighbours, by
/// handle, each id found once (a state without a string table finds an id by scanning its
/// entries), counting the items it lists.
private struct Navigator: OldSide {
  let state: ListState
  let sectionPosition: [IdentifierKey: Int]
  /// Each id asked about, and the item it names here (nil: absent).
  private var refs: [IdentifierKey: ItemRef?] = [:]
  /// Items listed in sibling lists (the cost beyond the per-item queries).
  var examined = 0

  var sectionIdentifiers: [String] { state.sectionIdentifiers }
  var allowsMultipleSelection: Bool { state.allowsMultipleSelection }
  var numberOfSelectedItems: Int { state.numberOfSelectedItems }
  var selectedIDs: IDList? { state.selectedIDs }

  init(_ state: ListState) {
    self.state = state
    var positions: [IdentifierKey: Int] = [:]
    for (i, s) in state.sectionIdentifiers.enumerated() { positions[IdentifierKey(s)] = i }
    sectionPosition = positions
  }

  /// The live item `id` names, found once.
  mutating func ref(_ id: String) -> ItemRef? {
    let k = IdentifierKey(id)
    if let known = refs[k] { return known }
    let x = state.item(id)
    refs[k] = x
    return x
  }

  mutating func facts(_ id: String) -> ItemFacts? {
    ref(id).map { itemFacts(state, $0) }
  }

  mutating func level(of id: String) -> Int { ref(id).map { state.level(of: $0) } ?? 0 }

  mutating func isSelected(_ id: String) -> Bool { ref(id).map { state.isSelected($0) } ?? false }

  /// Where the item comes in a walk of the state: its section's position, its pre-order
  /// index there.
  mutating func order(of id: String) -> (Int, Int) {
    guard let x = ref(id) else { return (0, 0) }
    let section = state.id(of: state.section(of: x))
    return (sectionPosition[IdentifierKey(section)] ?? 0, state.preorderIndex(of: x))
  }

  mutating func groupKey(_ id: String) -> IdentifierKey? {
    guard let x = ref(id) else { return nil }
    let place = state.placement(of: x)
    return Differ.key(ItemPlace(section: place.section, parent: place.parent, after: nil))
  }

  mutating func list(of member: String) -> [String]? { siblings(of: member) }

  /// The list of siblings `member` belongs to, in order.
  mutating func siblings(of member: String) -> [String] {
    guard let x = ref(member) else { return [] }
    let list = state.siblings(of: x)
    examined += list.count
    return list
  }

  /// The walk `diff(a, b)` makes of this (the new) state, with each run of unchanged items
  /// longer than `context` as one counted entry: the changed items, the short runs between
  /// them and the sections' items before the first change and after the last.
  mutating func walk(anchors: [(row: DiffRow, order: (Int, Int))], context: Int) -> [DiffRow] {
    var walk: [DiffRow] = []
    var next = 0
    for (position, sectionRef) in state.sections.enumerated() {
      let section = state.id(of: sectionRef)
      let last = state.lastItem(in: sectionRef)
      let count = last.map { state.preorderIndex(of: $0) + 1 } ?? 0
      var done = 0
      // Unchanged items from index `done` up to (not including) `end`, which is `item`.
      func gap(upTo end: Int, before item: String?) {
        let length = end - done
        guard length > 0 else { return }
        guard length <= context else {
          walk.append(DiffRow(section: section, unchangedRun: length))
          return
        }
        var items: [ItemRef] = []
        var cursor = item.flatMap { ref($0) }.flatMap { state.predecessor(of: $0) } ?? last
        while let x = cursor, items.count < length {
          items.append(x)
          examined += 1
          cursor = items.count < length ? state.predecessor(of: x) : nil
        }
        for x in items.reversed() {
          walk.append(
            DiffRow(section: section, id: state.id(of: x), level: state.level(of: x), changes: []))
        }
      }
      while next < anchors.count && anchors[next].order.0 == position {
        let anchor = anchors[next]
        gap(upTo: anchor.order.1, before: anchor.row.id)
        walk.append(anchor.row)
        done = anchor.order.1 + 1
        next += 1
      }
      gap(upTo: count, before: nil)
    }
    return walk
  }
}
