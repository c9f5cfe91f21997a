import Testing

@testable import ListTapeModel

/// The selection rules: a set of visible ids, single or multiple mode, pruned by identity.
@Suite struct SelectionTests {
  /// A: a+ .a1 .a2+ ..a21 b    B: x y
  static let base = """
    {"op":"appendSections","sections":["A","B"]}
    {"op":"appendItems","section":"A","items":[{"id":"a","expanded":true,"children":["a1",{"id":"a2","expanded":true,"children":["a21"]}]},"b"]}
    {"op":"appendItems","section":"B","items":["x","y"]}
    """

  static func multiple() throws -> ListState {
    var s = try folded(base)
    try s.run(#"{"op":"configure","multipleSelection":true}"#)
    return s
  }

  @Test func singleModeReplacesTheSelection() throws {
    var s = try folded(Self.base)
    #expect(!s.allowsMultipleSelection)
    try s.run(#"{"op":"select","items":["a1"]}"#)
    try s.run(#"{"op":"select","items":["y","y"]}"#)
    #expect(s.selectedItems == ["y"])
    #expect(s.isSelected("y") && !s.isSelected("a1"))
  }

  /// The selected items at or below an item: the item itself when selected, its selected
  /// descendants at any depth, nothing of its siblings; none for an absent id.
  @Test func selectedItemsAtOrBelowAnItem() throws {
    var s = try Self.multiple()
    try s.run(#"{"op":"select","items":["a","a21","b","x"]}"#)
    #expect(Set(s.selectedItems(atOrBelow: "a")) == ["a", "a21"])
    #expect(s.selectedItems(atOrBelow: "a2") == ["a21"])
    #expect(s.selectedItems(atOrBelow: "a1").isEmpty)
    #expect(s.selectedItems(atOrBelow: "b") == ["b"])
    #expect(s.selectedItems(atOrBelow: "y").isEmpty)
    #expect(s.selectedItems(atOrBelow: "nope").isEmpty)
    try s.run(#"{"op":"deselect","items":["a"]}"#)
    #expect(s.selectedItems(atOrBelow: "a") == ["a21"])
  }

  /// The selection spelled into one buffer is the selection, id for id and in order,
  /// UUIDs (stored as 16 bytes) spelled as recorded; lists compare as their ids do.
  @Test func selectedIDsAreTheSelectedItems() throws {
    var s = try Self.multiple()
    #expect(s.selectedIDs == IDList() && s.selectedIDs.isEmpty)
    let uuid = "8F0C2D4E-1A2B-4C3D-8E9F-0A1B2C3D4E5F"
    try s.run(#"{"op":"appendItems","section":"B","items":["\#(uuid)","ünï"]}"#)
    try s.run(#"{"op":"select","items":["ünï","a21","\#(uuid)","x"]}"#)
    let list = s.selectedIDs
    #expect(list.count == 4 && list.strings == s.selectedItems)
    #expect(list.strings == ["a21", "x", uuid, "ünï"])
    #expect(list.withID(2) { String(decoding: $0, as: UTF8.self) } == uuid)
    #expect(list == IDList(s.selectedItems))
    #expect(list != IDList(["a21", "x", uuid]) && list != IDList(["a2", "1x", uuid, "ünï"]))
  }

  @Test func singleModeFaultsOnMoreThanOneItem() throws {
    var s = try folded(Self.base)
    try s.run(#"{"op":"select","items":["b"]}"#)
    try expectFault(&s, #"{"op":"select","items":["a1","x"]}"#, .tooManySelected(2))
    #expect(s.selectedItems == ["b"])
  }

  @Test func multipleModeAddsToTheSelectionInDisplayOrder() throws {
    var s = try Self.multiple()
    try s.run(#"{"op":"select","items":["y","a21"]}"#)
    try s.run(#"{"op":"select","items":["a","y"]}"#)
    #expect(s.selectedItems == ["a", "a21", "y"])
    try s.run(#"{"op":"moveSection","section":"B","before":"A"}"#)
    #expect(s.selectedItems == ["y", "a", "a21"])
  }

  @Test func selectEmptyClearsInSingleModeAndDoesNothingInMultiple() throws {
    var single = try folded(Self.base)
    try single.run(#"{"op":"select","items":["x"]}"#)
    try single.run(#"{"op":"select","items":[]}"#)
    #expect(single.selectedItems == [])
    var multi = try Self.multiple()
    try multi.run(#"{"op":"select","items":["x","a1"]}"#)
    try multi.run(#"{"op":"select","items":[]}"#)
    #expect(multi.selectedItems == ["a1", "x"])
  }

  @Test func selectingHiddenOrMissingItemsFaults() throws {
    var s = try Self.multiple()
    try s.run(#"{"op":"collapse","items":["a2"]}"#)
    try expectFault(&s, #"{"op":"select","items":["a1","a21"]}"#, .hiddenItem("a21"))
    try expectFault(&s, #"{"op":"select","items":["a1","Q"]}"#, .missingItem("Q"))
    #expect(s.selectedItems == [])
  }

  @Test func deselectSomeOrAll() throws {
    var s = try Self.multiple()
    try s.run(#"{"op":"select","items":["a1","b","x"]}"#)
    try s.run(#"{"op":"deselect","items":["b","nobody","y"]}"#)
    #expect(s.selectedItems == ["a1", "x"])
    try s.run(#"{"op":"deselect","items":[]}"#)
    #expect(s.selectedItems == ["a1", "x"])
    try s.run(#"{"op":"deselect"}"#)
    #expect(s.selectedItems == [])
    try s.run(#"{"op":"select","items":["b"]}"#)
    try s.run(#"{"op":"deselect","items":null}"#)
    #expect(s.selectedItems == [])
  }

  @Test func configureToTheSameModeChangesNothingAndSingleClears() throws {
    var s = try Self.multiple()
    try s.run(#"{"op":"select","items":["a1","b"]}"#)
    try s.run(#"{"op":"configure","multipleSelection":true}"#)
    #expect(s.selectedItems == ["a1", "b"])
    try s.run(#"{"op":"configure","multipleSelection":false}"#)
    #expect(!s.allowsMultipleSelection)
    #expect(s.selectedItems == [])
    try s.run(#"{"op":"select","items":["b"]}"#)
    try s.run(#"{"op":"configure","multipleSelection":false}"#)
    #expect(s.selectedItems == ["b"])
    try s.run(#"{"op":"configure","multipleSelection":true}"#)
    #expect(s.selectedItems == ["b"])
  }

  @Test func collapseDropsHiddenItemsAndExpandDoesNotRestoreThem() throws {
    var s = try Self.multiple()
    try s.run(#"{"op":"select","items":["a","a1","a21","x"]}"#)
    try s.run(#"{"op":"collapse","items":["a2"]}"#)
    #expect(s.selectedItems == ["a", "a1", "x"])
    try s.run(#"{"op":"collapse","items":["a"]}"#)
    #expect(s.selectedItems == ["a", "x"])
    try s.run(#"{"op":"expand","items":["a","a2"]}"#)
    #expect(s.selectedItems == ["a", "x"])
  }

  @Test func deleteDropsTheItemAndItsDescendants() throws {
    var s = try Self.multiple()
    try s.run(#"{"op":"select","items":["a21","a1","b"]}"#)
    try s.run(#"{"op":"deleteItems","items":["a2"]}"#)
    #expect(s.selectedItems == ["a1", "b"])
    try s.run(#"{"op":"deleteSections","sections":["A"]}"#)
    #expect(s.selectedItems == [])
  }

  @Test func deletedThenReaddedComesBackUnselected() throws {
    var s = try Self.multiple()
    try s.run(#"{"op":"select","items":["a21","x"]}"#)
    try s.run(#"{"op":"deleteItems","items":["a21","x"]}"#)
    try s.run(#"{"op":"appendItems","parent":"a2","items":["a21"]}"#)
    try s.run(#"{"op":"insertItems","items":["x"],"before":"y"}"#)
    #expect(s.selectedItems == [])
  }

  @Test func moveIntoAHiddenPlacePrunesAndAVisibleOneKeeps() throws {
    var s = try Self.multiple()
    try s.run(#"{"op":"select","items":["x","y","a1"]}"#)
    try s.run(#"{"op":"collapse","items":["b"]}"#)
    try s.run(#"{"op":"appendItems","parent":"b","items":["b1"]}"#)
    try s.run(#"{"op":"moveItem","item":"x","before":"b1"}"#)
    #expect(s.selectedItems == ["a1", "y"])
    try s.run(#"{"op":"moveItem","item":"a1","after":"y"}"#)
    #expect(s.selectedItems == ["y", "a1"])
    try s.run(#"{"op":"expand","items":["b"]}"#)
    #expect(s.selectedItems == ["y", "a1"])
  }

  @Test func replaceChildrenKeepsReattachedVisibleIds() throws {
    var s = try Self.multiple()
    try s.run(#"{"op":"select","items":["a1","a21","b"]}"#)
    // a1 comes back visible (kept); a21 comes back under a collapsed a2 (dropped).
    try s.run(
      #"{"op":"replaceChildren","parent":"a","items":["a1",{"id":"a2","children":["a21"]}]}"#)
    #expect(s.selectedItems == ["a1", "b"])
    try s.run(#"{"op":"expand","items":["a2"]}"#)
    #expect(s.selectedItems == ["a1", "b"])
  }

  @Test func replaceChildrenUnderACollapsedParentKeepsNothing() throws {
    var s = try Self.multiple()
    try s.run(#"{"op":"select","items":["a1"]}"#)
    try s.run(#"{"op":"collapse","items":["a"]}"#)
    try s.run(#"{"op":"replaceChildren","parent":"a","items":["a1"]}"#)
    try s.run(#"{"op":"expand","items":["a"]}"#)
    #expect(s.selectedItems == [])
  }

  @Test func applySectionSnapshotKeepsReattachedVisibleIds() throws {
    var s = try Self.multiple()
    try s.run(#"{"op":"select","items":["a","a21","b","x"]}"#)
    try s.run(
      #"{"op":"applySectionSnapshot","section":"A","items":["b",{"id":"a","children":["a21"]}]}"#)
    #expect(s.selectedItems == ["b", "a", "x"])
    #expect(s.outline("A") == "b* a* .a21")
  }

  @Test func singleModeReattachKeepsTheOneSelection() throws {
    var s = try folded(Self.base)
    try s.run(#"{"op":"select","items":["a21"]}"#)
    try s.run(#"{"op":"replaceChildren","parent":"a2","items":["n","a21"]}"#)
    #expect(s.selectedItems == ["a21"])
  }

  @Test func updateAndReloadsNeverTouchTheSelection() throws {
    var s = try Self.multiple()
    try s.run(#"{"op":"select","items":["a1","x"]}"#)
    try s.run(#"{"op":"update","item":"a1","title":"t"}"#)
    try s.run(#"{"op":"reloadItems","items":["a1"]}"#)
    try s.run(#"{"op":"reconfigureItems","items":["x"]}"#)
    try s.run(#"{"op":"reloadSections","sections":["A"]}"#)
    #expect(s.selectedItems == ["a1", "x"])
  }
}
