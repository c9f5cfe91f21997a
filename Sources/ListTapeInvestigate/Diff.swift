import ListTapeJSON
import ListTapeModel
import ListTapeStore

/// Where an item sits: section, parent (nil for a root) and previous sibling (nil if first).
public struct ItemPlace: Equatable, Sendable, CustomStringConvertible {
  public var section: String
  public var parent: String?
  public var after: String?

  public var description: String {
    var parts = [parent.map { "under \($0)" } ?? "at the top of \(section)"]
    parts.append(after.map { "after \($0)" } ?? "first")
    return parts.joined(separator: ", ")
  }
}

/// What changed between two states, by item identity.
public struct StateDiff: Sendable {
  public var sectionsInserted: [String] = []
  public var sectionsDeleted: [String] = []
  public var sectionsMoved: [String] = []
  public var inserted: [(id: String, place: ItemPlace)] = []
  public var deleted: [(id: String, place: ItemPlace)] = []
  public var moved: [(id: String, from: ItemPlace, to: ItemPlace)] = []
  public var expanded: [String] = []
  public var collapsed: [String] = []
  public var titles: [(id: String, from: String?, to: String?)] = []
  public var fields: [(id: String, from: [String: String]?, to: [String: String]?)] = []
  /// Selected ids before and after, in display order; equal sets mean no change.
  public var selectionBefore: [String] = []
  public var selectionAfter: [String] = []
  /// Whether multiple selection was allowed before and after (a `configure` event).
  public var multipleSelectionBefore = false
  public var multipleSelectionAfter = false
  /// Items present in both states with nothing changed.
  public var unchanged = 0
  /// The "to" state's items in display order with their change marks, for renderers.
  var walk: [WalkEntry] = []

  public var selectionChanged: Bool {
    Set(selectionBefore.map(IdentifierKey.init)) != Set(selectionAfter.map(IdentifierKey.init))
  }

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

/// One step of a diff's walk through the new state: an item and its change marks, or a run
/// of `unchangedRun` unchanged items left unlisted (a diff built from events lists only the
/// runs short enough to be shown).
struct WalkEntry: Sendable {
  var section: String
  var id: String
  var level: Int
  var marks: [String]
  var unchangedRun = 0
}

/// Computes `StateDiff`s: identity-based, with Apple-like move detection (items whose
/// parent changed, plus the fewest siblings that must move to reach the new order).
public enum Differ {
  public static func diff(_ a: ListState, _ b: ListState) -> StateDiff {
    var d = StateDiff()
    compareSections(a, b, into: &d)

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
      var marks: [String] = []
      guard let info = bRows[IdentifierKey(row.id)] else { continue }
      if let old = aRows[IdentifierKey(row.id)] {
        let moved = key(old.place) != key(info.place) || movedIDs.contains(IdentifierKey(row.id))
        marks = d.recordKept(
          row.id, moved: moved,
          from: (old.place, old.row.expanded, old.row.title, old.row.fields),
          to: (info.place, row.expanded, row.title, row.fields))
        if marks.isEmpty { d.unchanged += 1 }
      } else {
        d.inserted.append((row.id, info.place))
        marks.append("inserted")
      }
      d.walk.append(WalkEntry(section: section, id: row.id, level: row.level, marks: marks))
    }
    compareSelection(a, b, into: &d)
    return d
  }

  /// The sibling group an item belongs to for move detection: its parent, or its section.
  static func key(_ p: ItemPlace) -> IdentifierKey {
    IdentifierKey(p.parent.map { "i:" + $0 } ?? "s:" + p.section)
  }

  /// Sections inserted, deleted and moved (the fewest that must move).
  /// - Complexity: O(sections).
  static func compareSections(_ a: ListState, _ b: ListState, into d: inout StateDiff) {
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
  }

  /// The selection and its mode, before and after.
  /// - Complexity: O(selected × depth × log siblings).
  static func compareSelection(_ a: ListState, _ b: ListState, into d: inout StateDiff) {
    d.selectionBefore = a.selectedItems
    d.selectionAfter = b.selectedItems
    d.multipleSelectionBefore = a.allowsMultipleSelection
    d.multipleSelectionAfter = b.allowsMultipleSelection
  }
}

/// What a diff compares of an item present in both states.
typealias ItemFacts = (
  place: ItemPlace, expanded: Bool, title: String?, fields: [String: String]?
)

extension StateDiff {
  /// Records the changes of an item present in both states, in the order renderers show
  /// them; returns its walk marks (empty when unchanged).
  mutating func recordKept(_ id: String, moved: Bool, from old: ItemFacts, to new: ItemFacts)
    -> [String]
  {
    var marks: [String] = []
    if moved {
      self.moved.append((id, old.place, new.place))
      marks.append("moved")
    }
    if old.expanded != new.expanded {
      if new.expanded {
        expanded.append(id)
      } else {
        collapsed.append(id)
      }
      marks.append(new.expanded ? "expanded" : "collapsed")
    }
    if old.title != new.title {
      titles.append((id, old.title, new.title))
      marks.append("title")
    }
    if old.fields != new.fields {
      fields.append((id, old.fields, new.fields))
      marks.append("fields")
    }
    return marks
  }
}

extension StateDiff {
  /// The diff as a person reads it: one line per change in the new state's display order,
  /// runs of more than `context` unchanged items folded into one line.
  public func lines(context: Int = 2) -> [String] {
    var out: [String] = []
    for s in sectionsInserted { out.append("+ section \(s)") }
    for s in sectionsDeleted { out.append("- section \(s)") }
    for s in sectionsMoved { out.append("~ section \(s) moved") }
    for (id, place) in deleted { out.append("- \(id) (was \(place))") }
    let movedFrom = Dictionary(
      moved.map { (IdentifierKey($0.id), $0) }, uniquingKeysWith: { a, _ in a })
    let titleChange = Dictionary(
      titles.map { (IdentifierKey($0.id), $0) }, uniquingKeysWith: { a, _ in a })
    let fieldChange = Dictionary(
      fields.map { (IdentifierKey($0.id), $0) }, uniquingKeysWith: { a, _ in a })
    let insertedAt = Dictionary(
      inserted.map { (IdentifierKey($0.id), $0.place) }, uniquingKeysWith: { a, _ in a })
    var run: [String] = []
    var runCount = 0
    func flush() {
      if runCount > context || runCount > run.count {
        out.append("  … \(runCount) unchanged item\(runCount == 1 ? "" : "s")")
      } else {
        out.append(contentsOf: run)
      }
      run.removeAll()
      runCount = 0
    }
    var section: String?
    for entry in walk {
      if entry.section != section {
        flush()
        section = entry.section
        out.append("[\(entry.section)]")
      }
      let indent = String(repeating: "  ", count: entry.level)
      if entry.marks.isEmpty {
        if entry.unchangedRun > 0 {
          runCount += entry.unchangedRun
        } else {
          run.append("  \(indent)\(entry.id)")
          runCount += 1
        }
        continue
      }
      flush()
      for mark in entry.marks {
        switch mark {
        case "inserted":
          out.append(
            "+ \(indent)\(entry.id) (\(insertedAt[IdentifierKey(entry.id)]?.description ?? ""))")
        case "moved":
          if let m = movedFrom[IdentifierKey(entry.id)] {
            out.append("~ \(indent)\(entry.id) moved: \(m.from) → \(m.to)")
          }
        case "expanded": out.append("▾ \(indent)\(entry.id) expanded")
        case "collapsed": out.append("▸ \(indent)\(entry.id) collapsed")
        case "title":
          if let t = titleChange[IdentifierKey(entry.id)] {
            out.append("  \(indent)title \(entry.id): \(quote(t.from)) → \(quote(t.to))")
          }
        default:
          if let f = fieldChange[IdentifierKey(entry.id)] {
            out.append("  \(indent)fields \(entry.id): \(render(f.from)) → \(render(f.to))")
          }
        }
      }
    }
    flush()
    if selectionModeChanged {
      out.append(
        "selection mode \(mode(multipleSelectionBefore)) → \(mode(multipleSelectionAfter))")
    }
    if selectionChanged {
      out.append(
        "selection {\(selectionBefore.joined(separator: ", "))} → {\(selectionAfter.joined(separator: ", "))}"
      )
    }
    return out
  }

  private func mode(_ multiple: Bool) -> String { multiple ? "multiple" : "single" }

  private func quote(_ s: String?) -> String { s.map { "\"\($0)\"" } ?? "none" }

  private func render(_ f: [String: String]?) -> String {
    guard let f else { return "none" }
    return "{" + f.keys.sorted().map { "\($0): \"\(f[$0] ?? "")\"" }.joined(separator: ", ") + "}"
  }

  /// The diff as one JSON object for tools.
  public func writeJSON(to w: inout JSONWriter) {
    func place(_ p: ItemPlace) {
      w.beginObject()
      w.key("section")
      w.string(p.section)
      w.key("parent")
      if let parent = p.parent { w.string(parent) } else { w.null() }
      w.key("after")
      if let after = p.after { w.string(after) } else { w.null() }
      w.endObject()
    }
    func strings(_ key: String, _ list: [String]) {
      w.key(key)
      w.beginArray()
      for s in list { w.string(s) }
      w.endArray()
    }
    func optional(_ s: String?) {
      if let s { w.string(s) } else { w.null() }
    }
    func map(_ f: [String: String]?) {
      guard let f else { return w.null() }
      w.beginObject()
      for k in f.keys.sorted() {
        w.key(k)
        w.string(f[k] ?? "")
      }
      w.endObject()
    }
    w.beginObject()
    w.key("sections")
    w.beginObject()
    strings("inserted", sectionsInserted)
    strings("deleted", sectionsDeleted)
    strings("moved", sectionsMoved)
    w.endObject()
    w.key("inserted")
    w.beginArray()
    for (id, p) in inserted {
      w.beginObject()
      w.key("id")
      w.string(id)
      w.key("at")
      place(p)
      w.endObject()
    }
    w.endArray()
    w.key("deleted")
    w.beginArray()
    for (id, p) in deleted {
      w.beginObject()
      w.key("id")
      w.string(id)
      w.key("was")
      place(p)
      w.endObject()
    }
    w.endArray()
    w.key("moved")
    w.beginArray()
    for (id, from, to) in moved {
      w.beginObject()
      w.key("id")
      w.string(id)
      w.key("from")
      place(from)
      w.key("to")
      place(to)
      w.endObject()
    }
    w.endArray()
    strings("expanded", expanded)
    strings("collapsed", collapsed)
    w.key("selection")
    if selectionChanged {
      w.beginObject()
      strings("from", selectionBefore)
      strings("to", selectionAfter)
      w.endObject()
    } else {
      w.null()
    }
    w.key("selectionMode")
    if selectionModeChanged {
      w.beginObject()
      w.key("from")
      w.string(mode(multipleSelectionBefore))
      w.key("to")
      w.string(mode(multipleSelectionAfter))
      w.endObject()
    } else {
      w.null()
    }
    w.key("content")
    w.beginArray()
    for (id, from, to) in titles {
      w.beginObject()
      w.key("id")
      w.string(id)
      w.key("title")
      w.beginObject()
      w.key("from")
      optional(from)
      w.key("to")
      optional(to)
      w.endObject()
      w.endObject()
    }
    for (id, from, to) in fields {
      w.beginObject()
      w.key("id")
      w.string(id)
      w.key("fields")
      w.beginObject()
      w.key("from")
      map(from)
      w.key("to")
      map(to)
      w.endObject()
      w.endObject()
    }
    w.endArray()
    w.key("unchanged")
    w.int(unchanged)
    w.endObject()
  }
}
