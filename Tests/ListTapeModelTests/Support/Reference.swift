import ListTapeJSON

@testable import ListTapeModel

/// A deliberately naive model of the protocol: every section is a flat pre-order array of
/// (id, level, flags, content), the selection a set of ids, and every op scans. Slow and
/// obviously right; the property tests hold the real model to it.
struct Reference: Equatable {
  struct Item: Equatable {
    var id: String
    var level: Int
    var expanded: Bool
    var title: String?
    var fields: [String: String]?
  }

  struct Section: Equatable {
    var id: String
    var items: [Item] = []
  }

  var sections: [Section] = []
  var selected: Set<String> = []
  var multiple = false

  // MARK: Queries

  func sectionIndex(_ id: String) -> Int? { sections.firstIndex { $0.id == id } }

  func locate(_ id: String) -> (s: Int, i: Int)? {
    for (s, sec) in sections.enumerated() {
      if let i = sec.items.firstIndex(where: { $0.id == id }) { return (s, i) }
    }
    return nil
  }

  func contains(_ id: String) -> Bool { locate(id) != nil }

  /// One past the last index of the subtree starting at `i`.
  func end(_ s: Int, _ i: Int) -> Int {
    let items = sections[s].items
    var j = i + 1
    while j < items.count && items[j].level > items[i].level { j += 1 }
    return j
  }

  func parentIndex(_ s: Int, _ i: Int) -> Int? {
    let items = sections[s].items
    var j = i - 1
    while j >= 0 {
      if items[j].level == items[i].level - 1 { return j }
      j -= 1
    }
    return nil
  }

  func isVisible(_ s: Int, _ i: Int) -> Bool {
    var p = parentIndex(s, i)
    while let q = p {
      if !sections[s].items[q].expanded { return false }
      p = parentIndex(s, q)
    }
    return true
  }

  func visibleIndices(_ s: Int) -> [Int] {
    var out: [Int] = []
    var hiddenBelow = Int.max
    for (i, item) in sections[s].items.enumerated() {
      if item.level > hiddenBelow { continue }
      hiddenBelow = Int.max
      out.append(i)
      if !item.expanded { hiddenBelow = item.level }
    }
    return out
  }

  func visible(_ s: Int) -> [String] { visibleIndices(s).map { sections[s].items[$0].id } }

  func children(_ s: Int, _ i: Int) -> [String] {
    let lvl = sections[s].items[i].level + 1
    return sections[s].items[(i + 1)..<end(s, i)].filter { $0.level == lvl }.map(\.id)
  }

  /// Selected ids in display order.
  var selectedInOrder: [String] {
    sections.indices.flatMap { s in visible(s).filter { selected.contains($0) } }
  }

  // MARK: Folding

  mutating func apply(_ event: Event) throws(ListFault) {
    if case .batch(let events) = event.operation {
      var scratch = self
      for (k, e) in events.enumerated() {
        do {
          try scratch.apply(e)
        } catch {
          throw .inBatch(index: k, op: e.op, fault: error)
        }
      }
      self = scratch
      return
    }
    try applyOne(event.operation)
    // The selection rule: after every event, only existing visible items stay selected.
    var visibleIDs = Set<String>()
    for s in sections.indices { visibleIDs.formUnion(visible(s)) }
    selected.formIntersection(visibleIDs)
  }

  private func flatten(_ nodes: [OutlineNode], level: Int) -> [Item] {
    var out: [Item] = []
    var stack: [(OutlineNode, Int)] = nodes.reversed().map { ($0, level) }
    while let (n, l) = stack.popLast() {
      out.append(Item(id: n.id, level: l, expanded: n.expanded, title: n.title, fields: n.fields))
      stack += n.children.reversed().map { ($0, l + 1) }
    }
    return out
  }

  /// Checks, node by node in pre-order: the nesting limit (levels 0...255, the nodes' top
  /// level being `base`), then that the id is not repeated in the event, then that it is new
  /// to the list (unless `replaceable`).
  private func validateNew(
    _ nodes: [OutlineNode], base: Int, replaceable: (String) -> Bool = { _ in false }
  ) throws(ListFault) {
    var seen = Set<String>()
    for item in flatten(nodes, level: base) {
      if item.level > 255 { throw .tooDeep(item: item.id, level: item.level) }
      if !seen.insert(item.id).inserted { throw .repeatedItem(item.id) }
      if contains(item.id) && !replaceable(item.id) { throw .duplicateItem(item.id) }
    }
  }

  private func validateNewSections(_ ids: [String]) throws(ListFault) {
    var seen = Set<String>()
    for id in ids {
      if !seen.insert(id).inserted { throw .repeatedSection(id) }
      if sectionIndex(id) != nil { throw .duplicateSection(id) }
    }
  }

  private func requireItems(_ ids: [String]) throws(ListFault) {
    for id in ids where !contains(id) { throw .missingItem(id) }
  }

  private mutating func insert(_ items: [Item], section s: Int, at i: Int) {
    sections[s].items.insert(contentsOf: items, at: i)
  }

  private mutating func applyOne(_ op: ListOperation) throws(ListFault) {
    switch op {
    case .appendSections(let ids):
      try validateNewSections(ids)
      sections += ids.map { Section(id: $0) }
    case .insertSections(let ids, let anchor):
      try validateNewSections(ids)
      guard let a = sectionIndex(anchor.id) else { throw .missingSection(anchor.id) }
      sections.insert(contentsOf: ids.map { Section(id: $0) }, at: anchor.isAfter ? a + 1 : a)
    case .deleteSections(let ids):
      sections.removeAll { ids.contains($0.id) }
    case .moveSection(let id, let anchor):
      guard let x = sectionIndex(id) else { throw .missingSection(id) }
      guard sectionIndex(anchor.id) != nil else { throw .missingSection(anchor.id) }
      guard id != anchor.id else { throw .moveNextToItself(id) }
      let moved = sections.remove(at: x)
      let a = sectionIndex(anchor.id) ?? 0
      sections.insert(moved, at: anchor.isAfter ? a + 1 : a)
    case .reloadSections(let ids):
      for id in ids where sectionIndex(id) == nil { throw .missingSection(id) }
    case .appendItems(let nodes, let section, let parent):
      if let parent {
        guard let (ps, pi) = locate(parent) else { throw .missingParent(parent) }
        if let section {
          guard let s = sectionIndex(section) else { throw .missingSection(section) }
          guard s == ps else { throw .parentNotInSection(parent: parent, section: section) }
        }
        let level = sections[ps].items[pi].level + 1
        try validateNew(nodes, base: level)
        insert(flatten(nodes, level: level), section: ps, at: end(ps, pi))
      } else {
        let s: Int
        if let section {
          guard let t = sectionIndex(section) else { throw .missingSection(section) }
          s = t
        } else {
          guard !sections.isEmpty else { throw .noSections }
          s = sections.count - 1
        }
        try validateNew(nodes, base: 0)
        insert(flatten(nodes, level: 0), section: s, at: sections[s].items.count)
      }
    case .insertItems(let nodes, let anchor):
      guard let (s, a) = locate(anchor.id) else { throw .missingAnchor(anchor.id) }
      let level = sections[s].items[a].level
      try validateNew(nodes, base: level)
      insert(flatten(nodes, level: level), section: s, at: anchor.isAfter ? end(s, a) : a)
    case .deleteItems(let ids):
      for id in ids {
        guard let (s, i) = locate(id) else { continue }
        sections[s].items.removeSubrange(i..<end(s, i))
      }
    case .deleteAllItems:
      for s in sections.indices { sections[s].items = [] }
    case .moveItem(let id, let anchor):
      guard let (xs, xi) = locate(id) else { throw .missingItem(id) }
      guard locate(anchor.id) != nil else { throw .missingAnchor(anchor.id) }
      guard id != anchor.id else { throw .moveNextToItself(id) }
      let block = Array(sections[xs].items[xi..<end(xs, xi)])
      if block.contains(where: { $0.id == anchor.id }) {
        throw .moveIntoOwnSubtree(item: id, anchor: anchor.id)
      }
      if let (s, a) = locate(anchor.id) {
        let deepest =
          block.reduce(0) { max($0, $1.level) } - block[0].level + sections[s].items[a].level
        if deepest > 255 { throw .tooDeep(item: id, level: deepest) }
      }
      sections[xs].items.removeSubrange(xi..<end(xs, xi))
      guard let (s, a) = locate(anchor.id) else { return }
      let shift = sections[s].items[a].level - block[0].level
      let moved = block.map { item in
        var item = item
        item.level += shift
        return item
      }
      insert(moved, section: s, at: anchor.isAfter ? end(s, a) : a)
    case .replaceChildren(let parent, let nodes):
      guard let (s, p) = locate(parent) else { throw .missingParent(parent) }
      let range = (p + 1)..<end(s, p)
      let dropped = Set(sections[s].items[range].map(\.id))
      try validateNew(nodes, base: sections[s].items[p].level + 1) { dropped.contains($0) }
      sections[s].items.replaceSubrange(
        range, with: flatten(nodes, level: sections[s].items[p].level + 1))
    case .applySectionSnapshot(let section, let nodes):
      guard let s = sectionIndex(section) else { throw .missingSection(section) }
      let dropped = Set(sections[s].items.map(\.id))
      try validateNew(nodes, base: 0) { dropped.contains($0) }
      sections[s].items = flatten(nodes, level: 0)
    case .reloadItems(let ids), .reconfigureItems(let ids):
      try requireItems(ids)
    case .update(let id, let title, let fields):
      guard let (s, i) = locate(id) else { throw .missingItem(id) }
      if let title { sections[s].items[i].title = title }
      if let fields {
        var merged = sections[s].items[i].fields ?? [:]
        for (k, v) in fields { merged[k] = v }
        sections[s].items[i].fields = merged
      }
    case .expand(let ids), .collapse(let ids):
      try requireItems(ids)
      let value: Bool
      if case .expand = op { value = true } else { value = false }
      for id in ids {
        if let (s, i) = locate(id) { sections[s].items[i].expanded = value }
      }
    case .select(let ids):
      var distinct: [String] = []
      for id in ids {
        guard let (s, i) = locate(id) else { throw .missingItem(id) }
        guard isVisible(s, i) else { throw .hiddenItem(id) }
        if !distinct.contains(id) { distinct.append(id) }
      }
      if multiple {
        selected.formUnion(distinct)
      } else {
        guard distinct.count <= 1 else { throw .tooManySelected(distinct.count) }
        selected = Set(distinct)
      }
    case .deselect(let ids):
      if let ids { selected.subtract(ids) } else { selected = [] }
    case .configure(let value):
      if multiple && !value { selected = [] }
      multiple = value
    case .mark:
      break
    case .batch:
      break
    }
  }

  // MARK: State JSON, written independently of the model

  func json(event: Int) -> String {
    var w = JSONWriter()
    w.beginObject()
    w.key("event")
    w.int(event)
    w.key("sections")
    w.beginArray()
    for (s, sec) in sections.enumerated() {
      w.beginObject()
      w.key("id")
      w.string(sec.id)
      w.key("items")
      w.beginArray()
      for (i, item) in sec.items.enumerated() {
        w.beginObject()
        w.key("id")
        w.string(item.id)
        w.key("parent")
        if let p = parentIndex(s, i) { w.string(sec.items[p].id) } else { w.null() }
        w.key("level")
        w.int(item.level)
        w.key("expanded")
        w.bool(item.expanded)
        if let title = item.title {
          w.key("title")
          w.string(title)
        }
        if let fields = item.fields {
          w.key("fields")
          w.beginObject()
          for k in fields.keys.sorted() {
            w.key(k)
            w.string(fields[k] ?? "")
          }
          w.endObject()
        }
        w.endObject()
      }
      w.endArray()
      w.key("visible")
      w.beginArray()
      for id in visible(s) { w.string(id) }
      w.endArray()
      w.endObject()
    }
    w.endArray()
    w.key("selected")
    w.beginArray()
    for id in selectedInOrder { w.string(id) }
    w.endArray()
    w.endObject()
    return w.text
  }
}
