import Testing

@testable import ListTapeModel

/// One test per section op and per fault a section op can raise.
@Suite struct SectionOpTests {
  static let three = """
    {"op":"appendSections","sections":["A","B","C"]}
    {"op":"appendItems","section":"A","items":["a"]}
    {"op":"appendItems","section":"B","items":["b"]}
    {"op":"appendItems","section":"C","items":["c"]}
    """

  @Test func appendSectionsAddsAtTheEndInOrder() throws {
    var s = try folded(#"{"op":"appendSections","sections":["A","B"]}"#)
    try s.run(#"{"op":"appendSections","sections":["C","D"]}"#)
    #expect(s.sectionIdentifiers == ["A", "B", "C", "D"])
    #expect(s.numberOfSections == 4)
    #expect(s.indexOfSection("C") == 2)
    #expect(s.indexOfSection("Z") == nil)
    try s.run(#"{"op":"appendSections","sections":[]}"#)
    #expect(s.sectionIdentifiers == ["A", "B", "C", "D"])
  }

  @Test func appendSectionsFaultsOnDuplicates() throws {
    var s = try folded(#"{"op":"appendSections","sections":["A"]}"#)
    try expectFault(&s, #"{"op":"appendSections","sections":["B","A"]}"#, .duplicateSection("A"))
    try expectFault(&s, #"{"op":"appendSections","sections":["B","B"]}"#, .repeatedSection("B"))
  }

  @Test func insertSectionsBeforeAndAfter() throws {
    var s = try folded(Self.three)
    try s.run(#"{"op":"insertSections","sections":["X","Y"],"before":"B"}"#)
    #expect(s.sectionIdentifiers == ["A", "X", "Y", "B", "C"])
    try s.run(#"{"op":"insertSections","sections":["Z"],"after":"C"}"#)
    #expect(s.sectionIdentifiers == ["A", "X", "Y", "B", "C", "Z"])
    #expect(s.allItems(inSection: "X") == [])
  }

  @Test func insertSectionsFaults() throws {
    var s = try folded(Self.three)
    try expectFault(
      &s, #"{"op":"insertSections","sections":["X"],"before":"Q"}"#, .missingSection("Q"))
    // An empty list is a no-op, but the anchor must still exist.
    try expectFault(
      &s, #"{"op":"insertSections","sections":[],"after":"Q"}"#, .missingSection("Q"))
    try s.run(#"{"op":"insertSections","sections":[],"after":"A"}"#)
    try expectFault(
      &s, #"{"op":"insertSections","sections":["B"],"after":"A"}"#, .duplicateSection("B"))
    try expectFault(
      &s, #"{"op":"insertSections","sections":["X","X"],"after":"A"}"#, .repeatedSection("X"))
  }

  @Test func deleteSectionsRemovesItemsAndIgnoresAbsentIds() throws {
    var s = try folded(Self.three)
    try s.run(#"{"op":"select","items":["b"]}"#)
    try s.run(#"{"op":"deleteSections","sections":["B","nope","B"]}"#)
    #expect(s.sectionIdentifiers == ["A", "C"])
    #expect(!s.contains("b"))
    #expect(s.selectedItems == [])
    #expect(s.sectionIdentifier(containingItem: "c") == "C")
    // The id is free again, for a section or an item.
    try s.run(#"{"op":"appendSections","sections":["B"]}"#)
    try s.run(#"{"op":"appendItems","items":["b"]}"#)
    #expect(s.sectionIdentifier(containingItem: "b") == "B")
  }

  @Test func moveSectionUsesApplesArithmetic() throws {
    var s = try folded(Self.three)
    try s.run(#"{"op":"moveSection","section":"A","after":"B"}"#)
    #expect(s.sectionIdentifiers == ["B", "A", "C"])
    try s.run(#"{"op":"moveSection","section":"C","before":"B"}"#)
    #expect(s.sectionIdentifiers == ["C", "B", "A"])
    // Moving before the section that already follows it is a valid no-op move.
    try s.run(#"{"op":"moveSection","section":"C","before":"B"}"#)
    #expect(s.sectionIdentifiers == ["C", "B", "A"])
    try s.run(#"{"op":"moveSection","section":"C","after":"A"}"#)
    #expect(s.sectionIdentifiers == ["B", "A", "C"])
    #expect(s.allItems(inSection: "C") == ["c"])
  }

  @Test func moveSectionFaults() throws {
    var s = try folded(Self.three)
    try expectFault(
      &s, #"{"op":"moveSection","section":"A","before":"A"}"#, .moveNextToItself("A"))
    try expectFault(
      &s, #"{"op":"moveSection","section":"A","after":"A"}"#, .moveNextToItself("A"))
    try expectFault(&s, #"{"op":"moveSection","section":"Q","after":"A"}"#, .missingSection("Q"))
    try expectFault(&s, #"{"op":"moveSection","section":"A","after":"Q"}"#, .missingSection("Q"))
  }

  @Test func reloadSectionsChangesNothingButNeedsEveryId() throws {
    var s = try folded(Self.three)
    let before = s
    try s.run(#"{"op":"reloadSections","sections":["A","C","A"]}"#)
    #expect(s == before)
    try expectFault(&s, #"{"op":"reloadSections","sections":["A","Q"]}"#, .missingSection("Q"))
  }
}
