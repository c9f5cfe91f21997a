import Testing

@testable import ListTapeModel

/// The API an iOS developer knows, called directly: data-source snapshot, section
/// snapshot and selection, with faults as typed errors.
@Suite struct SwiftAPITests {
  @Test func dataSourceSnapshotAPI() throws {
    var s = ListState()
    try s.appendSections(["A", "C"])
    try s.insertSections(["B"], beforeSection: "C")
    try s.insertSections(["D"], afterSection: "C")
    #expect(s.sectionIdentifiers == ["A", "B", "C", "D"])
    try s.moveSection("D", beforeSection: "A")
    try s.moveSection("A", afterSection: "C")
    #expect(s.sectionIdentifiers == ["D", "B", "C", "A"])
    s.deleteSections(["D", "nope"])
    try s.reloadSections(["A"])
    try s.appendItems(["a1", "a2"], toSection: "A")
    try s.appendItems(["c1"] as [String], toSection: "C")
    try s.appendItems(["z"] as [String])
    try s.appendItems([OutlineNode("k")], toParent: "a1", inSection: "A")
    try s.insertItems(["a0"], beforeItem: "a1")
    try s.insertItems(["a3"], afterItem: "a2")
    #expect(s.allItems(inSection: "A") == ["a0", "a1", "k", "a2", "a3", "z"])
    try s.moveItem("a3", beforeItem: "a0")
    try s.moveItem("c1", afterItem: "a1")
    #expect(s.itemIdentifiers(inSection: "A") == ["a3", "a0", "a1", "c1", "a2", "z"])
    #expect(s.itemIdentifiers == ["a3", "a0", "a1", "c1", "a2", "z"])
    #expect(s.numberOfItems(inSection: "A") == 6)
    #expect(s.sectionIdentifier(containingItem: "k") == "A")
    #expect(s.indexOfItem("c1") == 3)
    #expect(s.indexOfSection("A") == 2)
    try s.reloadItems(["k"])
    try s.reconfigureItems(["k"])
    try s.updateItem("k", title: "K", fields: nil)
    #expect(s.title(of: "k") == "K")
    s.deleteItems(["a1"])
    #expect(!s.contains("k"))
    s.deleteAllItems()
    #expect(s.numberOfItems == 0 && s.sectionIdentifiers == ["B", "C", "A"])
    #expect(throws: ListFault.moveNextToItself("A")) { try s.moveSection("A", afterSection: "A") }
  }

  @Test func sectionSnapshotAPI() throws {
    var snap = SectionSnapshot()
    try snap.append(["root", "other"])
    try snap.append(["c1", "c2"], to: "root")
    var sub = SectionSnapshot()
    try sub.append(["g"])
    try sub.append(["g1"], to: "g")
    try snap.append(sub, to: "c1")
    #expect(snap.items == ["root", "c1", "g", "g1", "c2", "other"])
    #expect(snap.rootItems == ["root", "other"])
    #expect(snap.visibleItems == ["root", "other"])
    try snap.expand(["root", "c1"])
    #expect(snap.visibleItems == ["root", "c1", "g", "c2", "other"])
    #expect(snap.isExpanded("c1") && !snap.isExpanded("g"))
    #expect(snap.isVisible("g") && !snap.isVisible("g1"))
    #expect(snap.level(of: "g1") == 3)
    #expect(snap.parent(of: "g") == "c1")
    #expect(snap.parent(of: "root") == nil)
    #expect(snap.index(of: "c2") == 4)
    #expect(snap.visibleIndex(of: "c2") == 3)
    #expect(snap.contains("g1") && !snap.contains("x"))
    let below = try snap.snapshot(of: "c1")
    #expect(below.items == ["g", "g1"])
    let withParent = try snap.snapshot(of: "c1", includingParent: true)
    #expect(withParent.items == ["c1", "g", "g1"])
    #expect(withParent.isExpanded("c1"))
    var extra = SectionSnapshot()
    try extra.append(["n1"])
    try snap.insert(extra, before: "other")
    try snap.insert([OutlineNode("n2")], after: "root")
    try snap.insert(["n0"], before: "root")
    #expect(snap.rootItems == ["n0", "root", "n2", "n1", "other"])
    try snap.replace(childrenOf: "root", using: extra.removing("n1", adding: "r1"))
    #expect(snap.items == ["n0", "root", "r1", "n2", "n1", "other"])
    try snap.collapse(["root"])
    #expect(snap.visibleItems == ["n0", "root", "n2", "n1", "other"])
    snap.delete(["root", "absent"])
    #expect(snap.items == ["n0", "n2", "n1", "other"])
    #expect(throws: ListFault.duplicateItem("n0")) { try snap.append(["n0"]) }
    #expect(throws: ListFault.missingParent("zz")) { try snap.append(["q"], to: "zz") }
    #expect(throws: ListFault.missingAnchor("zz")) { try snap.insert(["q"], before: "zz") }
    #expect(throws: ListFault.missingItem("zz")) { try snap.snapshot(of: "zz") }
    snap.deleteAll()
    #expect(snap.items.isEmpty && snap.visibleCount == 0)
  }

  @Test func sectionSnapshotsMoveInAndOutOfTheList() throws {
    var s = ListState()
    try s.appendSections(["A"])
    var snap = SectionSnapshot()
    try snap.append([OutlineNode("p", title: "P", expanded: true, children: ["c"])])
    try s.apply(snap, to: "A")
    #expect(s.sectionSnapshot(for: "A") == snap)
    #expect(s.sectionSnapshot(for: "Q") == nil)
    #expect(throws: ListFault.missingSection("Q")) { try s.apply(snap, to: "Q") }
    try s.replaceChildren(of: "p", with: ["d"])
    #expect(s.allItems(inSection: "A") == ["p", "d"])
  }

  @Test func selectionAPI() throws {
    var s = ListState()
    try s.appendSections(["A"])
    try s.appendItems(["a", "b"])
    try s.select(["a"])
    #expect(throws: ListFault.tooManySelected(2)) { try s.select(["a", "b"]) }
    s.setAllowsMultipleSelection(true)
    try s.select(["b"])
    #expect(s.selectedItems == ["a", "b"])
    s.deselect(["a"])
    #expect(s.selectedItems == ["b"])
    s.deselect(nil)
    #expect(s.selectedItems.isEmpty)
  }

  @Test func initializerDropsRepeatedNodes() {
    let snap = SectionSnapshot(nodes: ["a", OutlineNode("b", children: ["a", "c"]), "c"])
    #expect(snap.items == ["a", "b", "c"])
  }

  @Test func faultDescriptionsAreReadable() {
    #expect(ListFault.noSections.description.contains("no section"))
    #expect(
      ListFault.inBatch(index: 2, op: "select", fault: .hiddenItem("x")).description
        == #"event 3 of the batch (select): item "x" is not visible (an ancestor is collapsed)"#)
    #expect(MalformedEvent("missing field \"op\"").description == "missing field \"op\"")
  }
}

extension SectionSnapshot {
  /// A copy with `old` deleted and `new` appended at the root level.
  fileprivate func removing(_ old: String, adding new: String) throws -> SectionSnapshot {
    var copy = self
    copy.delete([old])
    try copy.append([new])
    return copy
  }
}
