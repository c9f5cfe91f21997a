import Testing

@testable import ListTapeModel

/// `batch`: one event, folded atomically; the selection rule applies after each inner event.
@Suite struct BatchTests {
  static let base = """
    {"op":"appendSections","sections":["A"]}
    {"op":"appendItems","items":[{"id":"a","expanded":true,"children":["a1"]},"b"]}
    """

  @Test func aBatchAppliesEveryEventInOrder() throws {
    var s = try folded(Self.base)
    try s.run(
      #"{"op":"batch","events":[{"op":"appendItems","items":["c"]},{"op":"moveItem","item":"c","before":"a"},{"op":"mark","label":"m"},{"op":"expand","items":["c"]}]}"#
    )
    #expect(s.outline("A") == "c+ a+ .a1 b")
  }

  @Test func aFaultAnywhereAppliesNothing() throws {
    var s = try folded(Self.base)
    try s.run(#"{"op":"select","items":["a1"]}"#)
    try expectFault(
      &s,
      #"{"op":"batch","events":[{"op":"configure","multipleSelection":true},{"op":"deleteItems","items":["a"]},{"op":"appendSections","sections":["B"]},{"op":"appendItems","items":["n"]},{"op":"expand","items":["Q"]}]}"#,
      .inBatch(index: 4, op: "expand", fault: .missingItem("Q")))
    #expect(!s.allowsMultipleSelection)
    #expect(s.selectedItems == ["a1"])
    // Ids created and dropped by the failed batch are free; the state folds on normally.
    try s.run(#"{"op":"appendItems","items":["n"]}"#)
    try s.run(#"{"op":"appendSections","sections":["B"]}"#)
    try s.run(#"{"op":"appendItems","items":["m"]}"#)
    #expect(s.outline("A") == "a+ .a1* b n")
    #expect(s.outline("B") == "m")
    #expect(invariantViolations(s).isEmpty)
  }

  @Test func nestedBatchesFoldInOrderAndReportThePath() throws {
    var s = try folded(Self.base)
    try s.run(
      #"{"op":"batch","events":[{"op":"batch","events":[{"op":"appendItems","items":["c"]},{"op":"batch","events":[]}]},{"op":"appendItems","parent":"c","items":["c1"]}]}"#
    )
    #expect(s.outline("A") == "a+ .a1 b c .c1")
    try expectFault(
      &s,
      #"{"op":"batch","events":[{"op":"deleteItems","items":["c"]},{"op":"batch","events":[{"op":"mark","label":"x"},{"op":"moveItem","item":"b","before":"b"}]}]}"#,
      .inBatch(
        index: 1, op: "batch",
        fault: .inBatch(index: 1, op: "moveItem", fault: .moveNextToItself("b"))
      ))
    #expect(s.outline("A") == "a+ .a1 b c .c1")
  }

  @Test func theSelectionRuleAppliesAfterEachInnerEvent() throws {
    var s = try folded(Self.base)
    // Hidden by the first event, so not selected again when re-shown by the second.
    try s.run(#"{"op":"select","items":["a1"]}"#)
    try s.run(
      #"{"op":"batch","events":[{"op":"collapse","items":["a"]},{"op":"expand","items":["a"]}]}"#)
    #expect(s.selectedItems == [])
    // Selecting an item hidden earlier in the same batch is a fault.
    try expectFault(
      &s,
      #"{"op":"batch","events":[{"op":"collapse","items":["a"]},{"op":"select","items":["a1"]}]}"#,
      .inBatch(index: 1, op: "select", fault: .hiddenItem("a1")))
    // Deleted and re-added inside one batch: two events, so it comes back unselected.
    try s.run(#"{"op":"select","items":["b"]}"#)
    try s.run(
      #"{"op":"batch","events":[{"op":"deleteItems","items":["b"]},{"op":"appendItems","items":["b"]}]}"#
    )
    #expect(s.selectedItems == [])
  }

  @Test func emptyBatchesAndMarksChangeNothing() throws {
    var s = try folded(Self.base)
    let before = s
    try s.run(#"{"op":"batch","events":[]}"#)
    try s.run(#"{"op":"batch","events":[{"op":"mark","label":"a"},{"op":"batch","events":[]}]}"#)
    #expect(s == before)
  }

  @Test func markLabelsIncludeNestedMarks() throws {
    let e = try Event(
      jsonLine:
        #"{"op":"batch","events":[{"op":"mark","label":"a"},{"op":"batch","events":[{"op":"mark","label":"b"}]}]}"#
    )
    #expect(e.operation.markLabels == ["a", "b"])
  }
}
