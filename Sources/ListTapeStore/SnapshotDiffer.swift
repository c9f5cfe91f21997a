import ListTapeModel

/// Turns one list state into another with the fewest events, by identity: what
/// `ListStore.apply(_:)` records when an app applies a whole new snapshot.
///
/// The plan, in order: insert and move sections (moving only those outside a longest
/// increasing subsequence, as `Differ` does); then, top-down in the new state's order, place
/// every sibling list — new items go in as whole subtrees (one `insertItems` per run), kept
/// items move next to an already placed sibling, again only those outside the LIS; then
/// delete what the new state lacks (one `deleteItems`, one `deleteSections`); then expansion,
/// content (`update`), selection mode and selection. Deletes come last so that items moving
/// out of a doomed parent or section are still there to move.
///
/// Two things the protocol cannot say in one event get a detour, both rare in apps:
/// - moving an item into an empty parent or section (a move needs an anchor): a placeholder
///   item is appended there, the item moves before it, and the final `deleteItems` drops it;
/// - clearing a title or removing field keys (`update` only sets and merges): the item is
///   deleted and inserted again with its new content; kept items below it wait in a
///   temporary parking section, dropped at the end.
/// Placeholder and parking identifiers never clash with the states' own.
package enum SnapshotDiffer {
  /// The events that turn `old` into `new`: folded in order onto `old` they fault nowhere and
  /// give a state equal (`==`) to `new`. Empty when the states are equal.
  /// - Complexity: O(n log n) events' worth of work for n items, plus the fold.
  package static func operations(from old: ListState, to new: ListState) -> [ListOperation] {
    plan(from: old, to: new).operations
  }

  /// The events and the state they fold to (`== new`), so a caller need not fold twice.
  /// `usedFallback` is true when the minimal plan failed its own check and a blunt rebuild
  /// was returned instead (never expected; tests assert it).
  static func plan(from old: ListState, to new: ListState) -> (
    operations: [ListOperation], state: ListState, usedFallback: Bool
  ) {
    var planner = Planner(old: old, new: new)
    if planner.run(), planner.cur == new {
      return (planner.ops, planner.cur, false)
    }
    let ops = rebuild(from: old, to: new)
    var state = old
    for op in ops {
      do throws(ListFault) {
        try state.apply(Event(op))
      } catch {
        // A rebuild cannot fault on a valid target; keep the old state as the reducer does.
        return (ops, old, true)
      }
    }
    return (ops, state, true)
  }

  /// A blunt but always valid rebuild: drop every section, add the new ones with their
  /// outlines, then mode and selection.
  static func rebuild(from old: ListState, to new: ListState) -> [ListOperation] {
    var ops: [ListOperation] = []
    if old.numberOfSections > 0 { ops.append(.deleteSections(old.sectionIdentifiers)) }
    if old.allowsMultipleSelection != new.allowsMultipleSelection {
      ops.append(.configure(multipleSelection: new.allowsMultipleSelection))
    }
    if new.numberOfSections > 0 { ops.append(.appendSections(new.sectionIdentifiers)) }
    for s in new.sectionIdentifiers {
      let nodes = new.sectionSnapshot(for: s)?.nodes ?? []
      if !nodes.isEmpty { ops.append(.applySectionSnapshot(section: s, items: nodes)) }
    }
    let selected = new.selectedItems
    if !selected.isEmpty { ops.append(.select(selected)) }
    return ops
  }
}

/// One item of the target state, as the planner needs it.
private struct TargetItem {
  var section: String
  var parent: String?
  var title: String?
  var fields: [String: String]?
  var expanded: Bool
  var children: [String] = []
}

/// The working side of `SnapshotDiffer`: emits events and folds each onto `cur` at once, so
/// every decision reads the list as it is at that point.
private struct Planner {
  var cur: ListState
  let new: ListState
  var ops: [ListOperation] = []
  /// The target outline: every item's place and content; roots per section.
  var target: [String: TargetItem] = [:]
  var roots: [String: [String]] = [:]
  /// Items of the old state that the new one keeps but whose content `update` cannot reach.
  var recreated = Set<String>()
  /// Items of the new state inserted so far (new ones and new versions of recreated ones).
  var inserted = Set<String>()
  var oldItems = Set<String>()
  var placeholders: [String] = []
  var parking: (section: String, anchor: String)?
  var usedIDs = Set<String>()
  var usedSectionIDs = Set<String>()
  var failed = false

  init(old: ListState, new: ListState) {
    cur = old
    self.new = new
    for s in new.sectionIdentifiers {
      var stack: [String] = []
      for row in new.rows(inSection: s) ?? [] {
        stack.removeSubrange(row.level...)
        stack.append(row.id)
        target[row.id] = TargetItem(
          section: s, parent: row.parent, title: row.title, fields: row.fields,
          expanded: row.expanded)
        if let p = row.parent {
          target[p]?.children.append(row.id)
        } else {
          roots[s, default: []].append(row.id)
        }
      }
    }
    for s in old.sectionIdentifiers {
      for row in old.rows(inSection: s) ?? [] {
        oldItems.insert(row.id)
        if let t = target[row.id], !Self.updatable(from: row, to: t) { recreated.insert(row.id) }
      }
    }
    usedIDs = oldItems.union(target.keys)
    usedSectionIDs = Set(old.sectionIdentifiers).union(new.sectionIdentifiers)
  }

  /// Whether `update` can turn the old content into the new: it sets a title and merges
  /// fields, so it cannot clear a title or drop a field key.
  static func updatable(from old: OutlineRow, to new: TargetItem) -> Bool {
    if new.title == nil && old.title != nil { return false }
    guard let newFields = new.fields else { return old.fields == nil }
    return (old.fields ?? [:]).keys.allSatisfy { newFields[$0] != nil }
  }

  /// Whether the item goes in by insertion (new, or recreated) rather than by a move.
  func isFresh(_ id: String) -> Bool { !oldItems.contains(id) || recreated.contains(id) }

  /// Whether the item, as it now stands in `cur`, is the one the new state wants.
  func isCurrent(_ id: String) -> Bool { isFresh(id) ? inserted.contains(id) : cur.contains(id) }

  mutating func emit(_ op: ListOperation) {
    guard !failed else { return }
    do throws(ListFault) {
      try cur.apply(Event(op))
      ops.append(op)
    } catch {
      failed = true
    }
  }

  /// Runs the whole plan; false when an emitted event faulted (a bug: the caller falls back).
  mutating func run() -> Bool {
    placeSections()
    for s in new.sectionIdentifiers {
      placeList(parent: nil, section: s, children: roots[s] ?? [])
    }
    deleteLeftovers()
    setFlagsAndContent()
    setSelection()
    return !failed
  }

  // MARK: Sections

  mutating func placeSections() {
    let wanted = new.sectionIdentifiers
    let had = Set(cur.sectionIdentifiers)
    let keep = Set(wanted).intersection(had)
    let moving = Set(
      Reordering.moved(
        from: cur.sectionIdentifiers.filter(keep.contains), to: wanted.filter(keep.contains)))
    var prev: String?
    var i = 0
    while i < wanted.count {
      let s = wanted[i]
      if !had.contains(s) {
        var run = [s]
        while i + run.count < wanted.count, !had.contains(wanted[i + run.count]) {
          run.append(wanted[i + run.count])
        }
        if let prev {
          emit(.insertSections(run, .after(prev)))
        } else if let first = cur.sectionIdentifiers.first {
          emit(.insertSections(run, .before(first)))
        } else {
          emit(.appendSections(run))
        }
        prev = run.last
        i += run.count
        continue
      }
      if moving.contains(s) {
        if let prev {
          emit(.moveSection(s, .after(prev)))
        } else if let first = cur.sectionIdentifiers.first, first != s {
          emit(.moveSection(s, .before(first)))
        }
      }
      prev = s
      i += 1
    }
  }

  // MARK: Items

  /// The current children of `parent` (the roots of `section` when nil).
  func currentChildren(parent: String?, section: String) -> [String] {
    if let parent { return cur.children(of: parent) ?? [] }
    return cur.rootItems(inSection: section) ?? []
  }

  /// Places the target children of one parent (or a section's roots) in order, then
  /// recurses into each child.
  mutating func placeList(parent: String?, section: String, children wanted: [String]) {
    guard !failed else { return }
    let now = currentChildren(parent: parent, section: section)
    // Fast path, the common case: this list is already as wanted.
    if now == wanted && wanted.allSatisfy({ isCurrent($0) }) {
      for c in wanted {
        placeList(parent: c, section: section, children: target[c]?.children ?? [])
      }
      return
    }
    let wantedSet = Set(wanted)
    let present = Set(now.filter { wantedSet.contains($0) && isCurrent($0) })
    let moving = Set(
      Reordering.moved(from: now.filter(present.contains), to: wanted.filter(present.contains)))
    var prev: String?
    var i = 0
    while i < wanted.count, !failed {
      let c = wanted[i]
      if present.contains(c) && !moving.contains(c) {
        prev = c
        i += 1
        continue
      }
      if isFresh(c) && !inserted.contains(c) {
        var run = [c]
        while i + run.count < wanted.count {
          let next = wanted[i + run.count]
          guard isFresh(next), !inserted.contains(next) else { break }
          run.append(next)
        }
        let nodes = run.map { node($0) }
        retireOldVersions(of: nodes)
        insert(nodes, after: prev, parent: parent, section: section)
        prev = run.last
        i += run.count
        continue
      }
      move(c, after: prev, parent: parent, section: section)
      prev = c
      i += 1
    }
    for c in wanted {
      placeList(parent: c, section: section, children: target[c]?.children ?? [])
    }
  }

  /// The node that inserts `id` with its fresh descendants (kept ones move in later).
  mutating func node(_ id: String) -> OutlineNode {
    inserted.insert(id)
    let t = target[id] ?? TargetItem(section: "", expanded: false)
    var kids: [OutlineNode] = []
    for c in t.children where isFresh(c) { kids.append(node(c)) }
    return OutlineNode(id, title: t.title, fields: t.fields, expanded: t.expanded, children: kids)
  }

  mutating func insert(
    _ nodes: [OutlineNode], after prev: String?, parent: String?, section: String
  ) {
    if let prev {
      emit(.insertItems(nodes, .after(prev)))
    } else if let first = currentChildren(parent: parent, section: section).first {
      emit(.insertItems(nodes, .before(first)))
    } else {
      emit(.appendItems(nodes, section: parent == nil ? section : nil, parent: parent))
    }
  }

  mutating func move(_ id: String, after prev: String?, parent: String?, section: String) {
    if let prev {
      emit(.moveItem(id, .after(prev)))
    } else if let first = currentChildren(parent: parent, section: section).first {
      if first != id { emit(.moveItem(id, .before(first))) }
    } else {
      let anchor = freshID()
      placeholders.append(anchor)
      emit(
        .appendItems([OutlineNode(anchor)], section: parent == nil ? section : nil, parent: parent))
      emit(.moveItem(id, .before(anchor)))
    }
  }

  var placeholderCounter = 0

  /// An item id used by neither state nor by an earlier placeholder.
  mutating func freshID() -> String {
    while true {
      placeholderCounter += 1
      let id = "listtape.placeholder.\(placeholderCounter)"
      if usedIDs.insert(id).inserted { return id }
    }
  }

  /// Before new versions of recreated items go in, their old versions leave; kept items
  /// below them wait in the parking section.
  mutating func retireOldVersions(of nodes: [OutlineNode]) {
    var old: [String] = []
    for n in nodes {
      n.forEachID { id in
        if recreated.contains(id) && cur.contains(id) { old.append(id) }
      }
    }
    guard !old.isEmpty else { return }
    for id in old where cur.contains(id) { rescueKept(below: id) }
    let doomed = Set(old)
    let topmost = old.filter { id in
      var p = cur.parent(of: id)
      while let q = p {
        if doomed.contains(q) { return false }
        p = cur.parent(of: q)
      }
      return true
    }
    emit(.deleteItems(topmost))
  }

  mutating func rescueKept(below id: String) {
    for c in cur.children(of: id) ?? [] {
      if target[c] != nil && !isFresh(c) {
        let anchor = parkingAnchor()
        emit(.moveItem(c, .before(anchor)))
      } else {
        rescueKept(below: c)
      }
    }
  }

  mutating func parkingAnchor() -> String {
    if let parking { return parking.anchor }
    var n = 0
    var section = "listtape.parking"
    while usedSectionIDs.contains(section) {
      n += 1
      section = "listtape.parking.\(n)"
    }
    usedSectionIDs.insert(section)
    let anchor = freshID()
    emit(.appendSections([section]))
    emit(.appendItems([OutlineNode(anchor)], section: section, parent: nil))
    parking = (section, anchor)
    return anchor
  }

  // MARK: Deletes, flags, content, selection

  /// Drops items the new state lacks (topmost only) and placeholders, then the sections it
  /// lacks and the parking section.
  mutating func deleteLeftovers() {
    var doomed: [String] = []
    for s in new.sectionIdentifiers {
      var skipBelow = Int.max
      for row in cur.rows(inSection: s) ?? [] {
        if row.level > skipBelow { continue }
        skipBelow = .max
        if target[row.id] == nil || !isCurrent(row.id) {
          doomed.append(row.id)
          skipBelow = row.level
        }
      }
    }
    if !doomed.isEmpty { emit(.deleteItems(doomed)) }
    let keep = Set(new.sectionIdentifiers)
    let sections = cur.sectionIdentifiers.filter { !keep.contains($0) }
    if !sections.isEmpty { emit(.deleteSections(sections)) }
  }

  mutating func setFlagsAndContent() {
    var expand: [String] = []
    var collapse: [String] = []
    var updates: [ListOperation] = []
    for s in new.sectionIdentifiers {
      for row in cur.rows(inSection: s) ?? [] {
        guard let t = target[row.id] else { continue }
        if row.expanded != t.expanded {
          if t.expanded { expand.append(row.id) } else { collapse.append(row.id) }
        }
        let title = t.title != row.title ? t.title : nil
        var fields: [String: String]?
        if let f = t.fields, f != row.fields {
          // Only the keys whose value changes (merge keeps the rest); all of them when the
          // item had no fields, so that an empty map still turns nil into [:].
          fields = row.fields == nil ? f : f.filter { row.fields?[$0.key] != $0.value }
        }
        if title != nil || fields != nil {
          updates.append(.update(item: row.id, title: title, fields: fields))
        }
      }
    }
    if !expand.isEmpty { emit(.expand(expand)) }
    if !collapse.isEmpty { emit(.collapse(collapse)) }
    for u in updates { emit(u) }
  }

  mutating func setSelection() {
    if cur.allowsMultipleSelection != new.allowsMultipleSelection {
      emit(.configure(multipleSelection: new.allowsMultipleSelection))
    }
    let want = new.selectedItems
    let have = cur.selectedItems
    guard Set(want) != Set(have) else { return }
    let wantSet = Set(want)
    let haveSet = Set(have)
    if !new.allowsMultipleSelection {
      // Single mode: `select` replaces the selection; `deselect` clears it.
      emit(want.isEmpty ? .deselect(nil) : .select(want))
      return
    }
    let drop = have.filter { !wantSet.contains($0) }
    let add = want.filter { !haveSet.contains($0) }
    if !drop.isEmpty { emit(.deselect(drop.count == have.count ? nil : drop)) }
    if !add.isEmpty { emit(.select(add)) }
  }
}
