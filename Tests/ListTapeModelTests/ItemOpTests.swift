import Testing

@testable import ListTapeModel

/// One test per item op and per fault an item op can raise.
@Suite struct ItemOpTests {
  /// A: a+ .a1 .a2 ..a21 b c    B: x y
  static let base = """
    {"op":"appendSections","sections":["A","B"]}
    {"op":"appendItems","section":"A","items":[{"id":"a","expanded":true,"children":["a1",{"id":"a2","children":["a21"]}]},"b","c"]}
    {"op":"appendItems","section":"B","items":["x","y"]}
    """

  @Test func baseOutline() throws {
    let s = try folded(Self.base)
    #expect(s.outline("A") == "a+ .a1 .a2 ..a21 b c")
    #expect(s.outline("B") == "x y")
    #expect(s.itemIdentifiers(inSection: "A") == ["a", "a1", "a2", "b", "c"])
    #expect(s.itemIdentifiers == ["a", "a1", "a2", "b", "c", "x", "y"])
  }

  // MARK: appendItems

  @Test func appendItemsToASectionItsParentOrTheLastSection() throws {
    var s = try folded(Self.base)
    try s.run(#"{"op":"appendItems","section":"A","items":["d"]}"#)
    try s.run(#"{"op":"appendItems","items":["z"]}"#)
    try s.run(#"{"op":"appendItems","parent":"a2","items":["a22"]}"#)
    try s.run(#"{"op":"appendItems","parent":"x","section":"B","items":["x1"]}"#)
    #expect(s.outline("A") == "a+ .a1 .a2 ..a21 ..a22 b c d")
    #expect(s.outline("B") == "x .x1 y z")
  }

  @Test func newItemsStartCollapsedUnlessTheNodeSaysExpanded() throws {
    var s = try folded(Self.base)
    try s.run(
      #"{"op":"appendItems","section":"B","items":[{"id":"p","children":[{"id":"q","expanded":true,"children":["r"]}]}]}"#
    )
    #expect(s.outline("B") == "x y p .q+ ..r")
    #expect(s.itemIdentifiers(inSection: "B") == ["x", "y", "p"])
    #expect(!s.isVisible("r"))
    try s.run(#"{"op":"expand","items":["p"]}"#)
    #expect(s.itemIdentifiers(inSection: "B") == ["x", "y", "p", "q", "r"])
  }

  @Test func appendItemsFaults() throws {
    var s = try folded(Self.base)
    try expectFault(
      &s, #"{"op":"appendItems","section":"Q","items":["n"]}"#, .missingSection("Q"))
    try expectFault(&s, #"{"op":"appendItems","parent":"Q","items":["n"]}"#, .missingParent("Q"))
    try expectFault(
      &s, #"{"op":"appendItems","parent":"a","section":"B","items":["n"]}"#,
      .parentNotInSection(parent: "a", section: "B"))
    try expectFault(
      &s, #"{"op":"appendItems","parent":"a","section":"Q","items":["n"]}"#, .missingSection("Q"))
    try expectFault(&s, #"{"op":"appendItems","items":["n","y"]}"#, .duplicateItem("y"))
    try expectFault(
      &s, #"{"op":"appendItems","items":[{"id":"n","children":["m","n"]}]}"#, .repeatedItem("n"))
    try expectFault(
      &s, #"{"op":"appendItems","items":[{"id":"n","children":["a21"]}]}"#, .duplicateItem("a21"))
    // Empty lists are valid no-ops, but what they name must exist.
    try s.run(#"{"op":"appendItems","section":"A","items":[]}"#)
    try s.run(#"{"op":"appendItems","parent":"a21","items":[]}"#)
    try expectFault(&s, #"{"op":"appendItems","section":"Q","items":[]}"#, .missingSection("Q"))
    try expectFault(&s, #"{"op":"appendItems","parent":"Q","items":[]}"#, .missingParent("Q"))
  }

  @Test func appendItemsWithNoSectionsFaults() throws {
    var s = ListState()
    try expectFault(&s, #"{"op":"appendItems","items":["n"]}"#, .noSections)
    try s.run(#"{"op":"appendSections","sections":["A"]}"#)
    try s.run(#"{"op":"deleteSections","sections":["A"]}"#)
    try expectFault(&s, #"{"op":"appendItems","items":[]}"#, .noSections)
  }

  // MARK: insertItems

  @Test func insertItemsBeforeAndAfterTheAnchorsWholeSubtree() throws {
    var s = try folded(Self.base)
    try s.run(#"{"op":"insertItems","items":["n1","n2"],"before":"a2"}"#)
    #expect(s.outline("A") == "a+ .a1 .n1 .n2 .a2 ..a21 b c")
    try s.run(#"{"op":"insertItems","items":["m"],"after":"a"}"#)
    #expect(s.outline("A") == "a+ .a1 .n1 .n2 .a2 ..a21 m b c")
    try s.run(#"{"op":"insertItems","items":[{"id":"k","children":["k1"]}],"after":"a2"}"#)
    #expect(s.outline("A") == "a+ .a1 .n1 .n2 .a2 ..a21 .k ..k1 m b c")
    try s.run(#"{"op":"insertItems","items":["w"],"before":"x"}"#)
    #expect(s.outline("B") == "w x y")
  }

  @Test func insertItemsFaults() throws {
    var s = try folded(Self.base)
    try expectFault(&s, #"{"op":"insertItems","items":["n"],"before":"Q"}"#, .missingAnchor("Q"))
    try expectFault(&s, #"{"op":"insertItems","items":[],"after":"Q"}"#, .missingAnchor("Q"))
    try expectFault(&s, #"{"op":"insertItems","items":["x"],"after":"a"}"#, .duplicateItem("x"))
    try expectFault(
      &s, #"{"op":"insertItems","items":["n","n"],"after":"a"}"#, .repeatedItem("n"))
    try s.run(#"{"op":"insertItems","items":[],"after":"a21"}"#)
    #expect(s.outline("A") == "a+ .a1 .a2 ..a21 b c")
  }

  // MARK: deleteItems, deleteAllItems

  @Test func deleteItemsRemovesDescendantsAndIgnoresAbsentIds() throws {
    var s = try folded(Self.base)
    try s.run(#"{"op":"deleteItems","items":["a2","nope","a2","a21","y"]}"#)
    #expect(s.outline("A") == "a+ .a1 b c")
    #expect(s.outline("B") == "x")
    #expect(!s.contains("a21"))
    #expect(s.numberOfAllItems == 5)
    try s.run(#"{"op":"deleteItems","items":[]}"#)
    #expect(s.numberOfAllItems == 5)
  }

  @Test func deleteAllItemsKeepsSections() throws {
    var s = try folded(Self.base)
    try s.run(#"{"op":"select","items":["a1"]}"#)
    try s.run(#"{"op":"deleteAllItems"}"#)
    #expect(s.sectionIdentifiers == ["A", "B"])
    #expect(s.numberOfAllItems == 0)
    #expect(s.itemIdentifiers == [])
    #expect(s.selectedItems == [])
    try s.run(#"{"op":"appendItems","items":["a"]}"#)
    #expect(s.outline("B") == "a")
    #expect(!s.isExpanded("a"))
  }

  // MARK: moveItem

  @Test func moveItemUsesApplesArithmetic() throws {
    var s = try folded(
      """
      {"op":"appendSections","sections":["S"]}
      {"op":"appendItems","items":["p","q","r","s"]}
      """)
    try s.run(#"{"op":"moveItem","item":"p","after":"r"}"#)
    #expect(s.outline("S") == "q r p s")
    try s.run(#"{"op":"moveItem","item":"s","before":"q"}"#)
    #expect(s.outline("S") == "s q r p")
    // Before the next sibling: taken out and put back where it was.
    try s.run(#"{"op":"moveItem","item":"q","before":"r"}"#)
    #expect(s.outline("S") == "s q r p")
    try s.run(#"{"op":"moveItem","item":"p","before":"s"}"#)
    #expect(s.outline("S") == "p s q r")
  }

  @Test func moveItemCarriesItsSubtreeAndTakesTheAnchorsParentAndSection() throws {
    var s = try folded(Self.base)
    try s.run(#"{"op":"moveItem","item":"a2","after":"b"}"#)
    #expect(s.outline("A") == "a+ .a1 b a2 .a21 c")
    #expect(s.level(of: "a21") == 1)
    try s.run(#"{"op":"moveItem","item":"a2","before":"y"}"#)
    #expect(s.outline("A") == "a+ .a1 b c")
    #expect(s.outline("B") == "x a2 .a21 y")
    #expect(s.sectionIdentifier(containingItem: "a21") == "B")
    // `after` lands after the anchor's whole subtree, as its next sibling.
    try s.run(#"{"op":"moveItem","item":"c","after":"a2"}"#)
    #expect(s.outline("B") == "x a2 .a21 c y")
    try s.run(#"{"op":"moveItem","item":"a1","after":"a21"}"#)
    #expect(s.outline("B") == "x a2 .a21 .a1 c y")
    #expect(s.outline("A") == "a+ b")
  }

  @Test func moveItemFaults() throws {
    var s = try folded(Self.base)
    try expectFault(&s, #"{"op":"moveItem","item":"a","before":"a"}"#, .moveNextToItself("a"))
    try expectFault(&s, #"{"op":"moveItem","item":"b","after":"b"}"#, .moveNextToItself("b"))
    try expectFault(
      &s, #"{"op":"moveItem","item":"a","after":"a21"}"#,
      .moveIntoOwnSubtree(item: "a", anchor: "a21"))
    try expectFault(
      &s, #"{"op":"moveItem","item":"a","before":"a1"}"#,
      .moveIntoOwnSubtree(item: "a", anchor: "a1"))
    try expectFault(&s, #"{"op":"moveItem","item":"Q","before":"a"}"#, .missingItem("Q"))
    try expectFault(&s, #"{"op":"moveItem","item":"a","before":"Q"}"#, .missingAnchor("Q"))
  }

  @Test func moveItemOutOfItsParentNextToThatParent() throws {
    var s = try folded(Self.base)
    try s.run(#"{"op":"moveItem","item":"a21","after":"a2"}"#)
    #expect(s.outline("A") == "a+ .a1 .a2 .a21 b c")
    try s.run(#"{"op":"moveItem","item":"a1","before":"a"}"#)
    #expect(s.outline("A") == "a1 a+ .a2 .a21 b c")
  }

  // MARK: replaceChildren, applySectionSnapshot

  @Test func replaceChildrenDropsEveryDescendantThenAttaches() throws {
    var s = try folded(Self.base)
    try s.run(
      #"{"op":"replaceChildren","parent":"a","items":[{"id":"a21","expanded":true,"children":["n"]},"a1"]}"#
    )
    #expect(s.outline("A") == "a+ .a21+ ..n .a1 b c")
    #expect(!s.contains("a2"))
    // The parent's own flag stays; an empty list only drops the children.
    try s.run(#"{"op":"collapse","items":["a"]}"#)
    try s.run(#"{"op":"replaceChildren","parent":"a","items":[]}"#)
    #expect(s.outline("A") == "a b c")
    try s.run(#"{"op":"replaceChildren","parent":"b","items":["b1"]}"#)
    #expect(s.outline("A") == "a b .b1 c")
  }

  @Test func replaceChildrenFaults() throws {
    var s = try folded(Self.base)
    try expectFault(&s, #"{"op":"replaceChildren","parent":"Q","items":[]}"#, .missingParent("Q"))
    try expectFault(
      &s, #"{"op":"replaceChildren","parent":"a","items":["x"]}"#, .duplicateItem("x"))
    try expectFault(
      &s, #"{"op":"replaceChildren","parent":"a2","items":["a"]}"#, .duplicateItem("a"))
    try expectFault(
      &s, #"{"op":"replaceChildren","parent":"a2","items":["a2"]}"#, .duplicateItem("a2"))
    try expectFault(
      &s, #"{"op":"replaceChildren","parent":"a","items":["a1","a1"]}"#, .repeatedItem("a1"))
  }

  @Test func applySectionSnapshotReplacesTheWholeSection() throws {
    var s = try folded(Self.base)
    try s.run(
      #"{"op":"applySectionSnapshot","section":"A","items":[{"id":"c","children":["a21"]},"n"]}"#
    )
    #expect(s.outline("A") == "c .a21 n")
    #expect(!s.contains("a"))
    #expect(s.outline("B") == "x y")
    try s.run(#"{"op":"applySectionSnapshot","section":"B","items":[]}"#)
    #expect(s.outline("B") == "")
    #expect(s.sectionIdentifiers == ["A", "B"])
  }

  @Test func applySectionSnapshotFaults() throws {
    var s = try folded(Self.base)
    try expectFault(
      &s, #"{"op":"applySectionSnapshot","section":"Q","items":[]}"#, .missingSection("Q"))
    try expectFault(
      &s, #"{"op":"applySectionSnapshot","section":"A","items":["x"]}"#, .duplicateItem("x"))
    try expectFault(
      &s, #"{"op":"applySectionSnapshot","section":"A","items":["a",{"id":"n","children":["a"]}]}"#,
      .repeatedItem("a"))
  }

  // MARK: reloads and update

  @Test func reloadsChangeNothingButFaultOnMissingIds() throws {
    var s = try folded(Self.base)
    try s.run(#"{"op":"select","items":["a1"]}"#)
    let before = s
    try s.run(#"{"op":"reloadItems","items":["a21","a1","a21"]}"#)
    try s.run(#"{"op":"reconfigureItems","items":["x"]}"#)
    try s.run(#"{"op":"reloadItems","items":[]}"#)
    #expect(s == before)
    try expectFault(&s, #"{"op":"reloadItems","items":["a","Q"]}"#, .missingItem("Q"))
    try expectFault(&s, #"{"op":"reconfigureItems","items":["Q"]}"#, .missingItem("Q"))
  }

  @Test func updateReplacesTheTitleAndMergesFields() throws {
    var s = try folded(Self.base)
    try s.run(#"{"op":"select","items":["a1"]}"#)
    try s.run(#"{"op":"update","item":"a1","title":"One","fields":{"k":"1","j":"2"}}"#)
    #expect(s.title(of: "a1") == "One")
    #expect(s.fields(of: "a1") == ["k": "1", "j": "2"])
    try s.run(#"{"op":"update","item":"a1","fields":{"k":"9","m":"3"}}"#)
    #expect(s.title(of: "a1") == "One")
    #expect(s.fields(of: "a1") == ["k": "9", "j": "2", "m": "3"])
    try s.run(#"{"op":"update","item":"a1","title":"Uno"}"#)
    #expect(s.title(of: "a1") == "Uno")
    #expect(s.fields(of: "a1") == ["k": "9", "j": "2", "m": "3"])
    let before = s
    try s.run(#"{"op":"update","item":"a1"}"#)
    try s.run(#"{"op":"update","item":"a1","title":null,"fields":null}"#)
    #expect(s == before)
    #expect(s.selectedItems == ["a1"])
    #expect(s.outline("A") == "a+ .a1* .a2 ..a21 b c")
    try expectFault(&s, #"{"op":"update","item":"Q","title":"t"}"#, .missingItem("Q"))
    try expectFault(&s, #"{"op":"update","item":"Q"}"#, .missingItem("Q"))
  }

  // MARK: expand and collapse

  @Test func expandAndCollapseSetFlagsEvenOnLeaves() throws {
    var s = try folded(Self.base)
    try s.run(#"{"op":"expand","items":["b","a2","a2"]}"#)
    #expect(s.isExpanded("b"))
    #expect(s.outline("A") == "a+ .a1 .a2+ ..a21 b+ c")
    #expect(s.numberOfItems(inSection: "A") == 6)
    try s.run(#"{"op":"collapse","items":["b","c"]}"#)
    #expect(!s.isExpanded("b") && !s.isExpanded("c"))
  }

  @Test func collapsingKeepsTheDescendantsOwnFlags() throws {
    var s = try folded(Self.base)
    try s.run(#"{"op":"expand","items":["a2"]}"#)
    try s.run(#"{"op":"collapse","items":["a"]}"#)
    #expect(s.itemIdentifiers(inSection: "A") == ["a", "b", "c"])
    #expect(s.isExpanded("a2"))
    #expect(!s.isVisible("a21") && !s.isVisible("a2"))
    #expect(s.indexPath(for: "a21") == nil)
    try s.run(#"{"op":"expand","items":["a"]}"#)
    #expect(s.itemIdentifiers(inSection: "A") == ["a", "a1", "a2", "a21", "b", "c"])
    #expect(s.indexPath(for: "a21")?.item == 3)
  }

  @Test func expandAndCollapseFaultOnMissingItemsAndApplyNone() throws {
    var s = try folded(Self.base)
    try expectFault(&s, #"{"op":"expand","items":["a2","Q"]}"#, .missingItem("Q"))
    #expect(!s.isExpanded("a2"))
    try expectFault(&s, #"{"op":"collapse","items":["a","Q"]}"#, .missingItem("Q"))
    #expect(s.isExpanded("a"))
  }

  @Test func markChangesNothing() throws {
    var s = try folded(Self.base)
    let before = s
    try s.run(#"{"op":"mark","label":"here"}"#)
    try s.run(#"{"op":"mark","label":""}"#)
    #expect(s == before)
  }

  @Test func rowsAndIndexesFollowTheOutline() throws {
    let s = try folded(Self.base)
    #expect(s.indexPath(for: "a21") == nil)
    #expect(s.sectionSnapshot(for: "A")?.index(of: "a21") == 3)
    #expect(s.indexPath(for: "b").map { [$0.section, $0.item] } == [0, 3])
    #expect(s.sectionSnapshot(for: "A")?.index(of: "b") == 4)
    #expect(s.indexOfItem("x") == 5)
    #expect(s.indexPath(for: "x").map { [$0.section, $0.item] } == [1, 0])
    #expect(s.indexOfItem("a21") == nil)
    #expect(s.level(of: "a21") == 2)
    #expect(s.parent(of: "a21") == "a2")
    #expect(s.parent(of: "a") == nil)
    #expect(s.contains("a"))
    #expect(s.parent(of: "Q") == nil)
    #expect(s.numberOfItems == 7)
    #expect(s.numberOfAllItems == 8)
    #expect(s.numberOfItems(inSection: "Q") == nil)
    #expect(s.children(of: "a") == ["a1", "a2"])
    #expect(s.rootItems(inSection: "A") == ["a", "b", "c"])
  }
}
