@testable import ListTapeModel

/// Every way the model's queries disagree with the reference (empty when they agree).
func disagreements(_ m: ListState, _ r: Reference, event: Int = 0) -> [String] {
  var out: [String] = []
  func check<T: Equatable>(_ what: @autoclosure () -> String, _ a: T, _ b: T) {
    if a != b && out.count < 20 { out.append("\(what()): model \(a), reference \(b)") }
  }
  check("mode", m.allowsMultipleSelection, r.multiple)
  check("sectionIdentifiers", m.sectionIdentifiers, r.sections.map(\.id))
  check("numberOfSections", m.numberOfSections, r.sections.count)
  check("selectedItems", m.selectedItems, r.selectedInOrder)
  check("numberOfAllItems", m.numberOfAllItems, r.sections.reduce(0) { $0 + $1.items.count })
  let allVisible = r.sections.indices.flatMap { r.visible($0) }
  check("itemIdentifiers", m.itemIdentifiers, allVisible)
  check("numberOfItems", m.numberOfItems, allVisible.count)
  check("state JSON", m.json(event: event), r.json(event: event))
  for (s, sec) in r.sections.enumerated() {
    check("indexOfSection(\(sec.id))", m.indexOfSection(sec.id), s)
    check("allItems(\(sec.id))", m.allItems(inSection: sec.id), sec.items.map(\.id))
    let vis = r.visible(s)
    check("itemIdentifiers(inSection: \(sec.id))", m.itemIdentifiers(inSection: sec.id), vis)
    check("numberOfItems(inSection: \(sec.id))", m.numberOfItems(inSection: sec.id), vis.count)
    check(
      "rootItems(\(sec.id))", m.rootItems(inSection: sec.id),
      sec.items.filter { $0.level == 0 }.map(\.id))
    let visibleRow = Dictionary(uniqueKeysWithValues: vis.enumerated().map { ($1, $0) })
    let offset = r.sections[..<s].indices.reduce(0) { $0 + r.visible($1).count }
    let outline = m.sectionSnapshot(for: sec.id)
    for (i, item) in sec.items.enumerated() {
      let id = item.id
      let parent = r.parentIndex(s, i).map { sec.items[$0].id }
      check("contains(\(id))", m.contains(id), true)
      check("level(\(id))", m.level(of: id), item.level)
      check("parent(\(id))", m.parent(of: id), parent)
      check("isExpanded(\(id))", m.isExpanded(id), item.expanded)
      check("isVisible(\(id))", m.isVisible(id), r.isVisible(s, i))
      check("row(\(id))", m.indexPath(for: id)?.item, visibleRow[id])
      check("index(\(id))", outline?.index(of: id), i)
      check("indexOfItem(\(id))", m.indexOfItem(id), visibleRow[id].map { $0 + offset })
      check("section(\(id))", m.sectionIdentifier(containingItem: id), sec.id)
      check("children(\(id))", m.children(of: id), r.children(s, i))
      check("title(\(id))", m.title(of: id), item.title)
      check("fields(\(id))", m.fields(of: id), item.fields)
      check("isSelected(\(id))", m.isSelected(id), r.selected.contains(id))
    }
    if let rows = m.rows(inSection: sec.id) {
      check("rows.count(\(sec.id))", rows.count, sec.items.count)
      for (i, row) in rows.enumerated() where i < sec.items.count {
        check("rows[\(i)].isVisible", row.isVisible, r.isVisible(s, i))
        check("rows[\(i)].hasChildren", row.hasChildren, !r.children(s, i).isEmpty)
      }
      check(
        "rows(visibleOnly)", m.rows(inSection: sec.id, visibleOnly: true)?.map(\.id), vis)
    }
  }
  return out
}

/// The section snapshot of each section, checked against the reference the same way.
func snapshotDisagreements(_ m: ListState, _ r: Reference) -> [String] {
  var out: [String] = []
  func check<T: Equatable>(_ what: @autoclosure () -> String, _ a: T, _ b: T) {
    if a != b && out.count < 20 { out.append("\(what()): snapshot \(a), reference \(b)") }
  }
  for (s, sec) in r.sections.enumerated() {
    guard let snap = m.sectionSnapshot(for: sec.id) else {
      out.append("no snapshot for \(sec.id)")
      continue
    }
    let vis = r.visible(s)
    check("items", snap.items, sec.items.map(\.id))
    check("visibleItems", snap.visibleItems, vis)
    check("visibleCount", snap.visibleCount, vis.count)
    check("rootItems", snap.rootItems, sec.items.filter { $0.level == 0 }.map(\.id))
    for (i, item) in sec.items.enumerated() {
      check("level(\(item.id))", snap.level(of: item.id), item.level)
      check(
        "parent(\(item.id))", snap.parent(of: item.id), r.parentIndex(s, i).map { sec.items[$0].id }
      )
      check("index(\(item.id))", snap.index(of: item.id), i)
      check("isVisible(\(item.id))", snap.isVisible(item.id), r.isVisible(s, i))
      check("isExpanded(\(item.id))", snap.isExpanded(item.id), item.expanded)
      check("visibleIndex(\(item.id))", snap.visibleIndex(of: item.id), vis.firstIndex(of: item.id))
    }
  }
  return out
}
