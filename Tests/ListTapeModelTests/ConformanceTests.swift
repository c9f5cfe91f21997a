import Testing

@testable import ListTapeModel

/// Protocol sections 1, 2, 3 and 5 checked rule by rule, with the corner cases an
/// independent checker would try.
@Suite struct ConformanceTests {
  /// A: p+ .q+ ..r .s t    B: (empty)
  static let base = """
    {"op":"appendSections","sections":["A","B"]}
    {"op":"appendItems","section":"A","items":[{"id":"p","expanded":true,"children":[{"id":"q","expanded":true,"children":["r"]},"s"]},"t"]}
    """

  // MARK: Section 1: identifiers are JSON strings

  /// Identifiers are JSON strings: two ids are the same only when their code points are,
  /// not when Swift would call them canonically equivalent.
  @Test func canonicallyEquivalentIdentifiersAreDistinct() throws {
    let composed = "\u{E9}"
    let decomposed = "e\u{301}"
    var s = try folded(#"{"op":"appendSections","sections":["\u00e9","e\u0301"]}"#)
    #expect(s.numberOfSections == 2)
    #expect(
      s.sectionIdentifiers.map { Array($0.unicodeScalars) } == [
        Array(composed.unicodeScalars), Array(decomposed.unicodeScalars),
      ])
    try s.run(#"{"op":"appendItems","section":"e\u0301","items":["\u00c5","\u212b"]}"#)
    #expect(s.numberOfAllItems == 2)
    try s.run(#"{"op":"select","items":["\u212b"]}"#)
    #expect(s.selectedItems.map { Array($0.unicodeScalars) } == [["\u{212B}"]])
    try expectFault(
      &s, #"{"op":"appendItems","section":"\u00e9","items":["\u212b"]}"#,
      .duplicateItem("\u{212B}"))
    try s.run(#"{"op":"deleteItems","items":["\u00c5"]}"#)
    #expect(s.allItems(inSection: decomposed)?.map { Array($0.unicodeScalars) } == [["\u{212B}"]])
  }

  /// The log's identifier back-references must not merge canonically equivalent ids: a
  /// recorded event decodes to exactly the ids that were sent.
  @Test func eventCodecKeepsCanonicallyEquivalentIdentifiersApart() throws {
    let events = [
      try Event(jsonLine: #"{"op":"appendSections","sections":["\u00e9"]}"#),
      try Event(jsonLine: #"{"op":"appendSections","sections":["e\u0301"]}"#),
    ]
    var encoder = EventEncoder()
    var decoder = EventDecoder()
    for (i, e) in events.enumerated() {
      let bytes = try encoder.encode(e)
      let back = try bytes.withUnsafeBytes { try decoder.decode($0, seq: i + 1) }
      guard case .appendSections(let sent) = e.operation,
        case .appendSections(let got) = back.operation
      else {
        Issue.record("wrong op decoded: \(back)")
        continue
      }
      #expect(got.map { Array($0.unicodeScalars) } == sent.map { Array($0.unicodeScalars) })
    }
  }

  // MARK: Section 1: positions

  @Test func afterLandsAfterTheAnchorsWholeSubtree() throws {
    var s = try folded(Self.base)
    try s.run(#"{"op":"insertItems","items":["n"],"after":"q"}"#)
    #expect(s.outline("A") == "p+ .q+ ..r .n .s t")
    try s.run(#"{"op":"moveItem","item":"t","after":"p"}"#)
    #expect(s.outline("A") == "p+ .q+ ..r .n .s t")
    try s.run(#"{"op":"moveItem","item":"s","after":"q"}"#)
    #expect(s.outline("A") == "p+ .q+ ..r .s .n t")
    #expect(s.parent(of: "s") == "p")
  }

  @Test func moveArithmeticIsApples() throws {
    var s = try folded(
      """
      {"op":"appendSections","sections":["A"]}
      {"op":"appendItems","items":["a","b","c","d"]}
      """)
    try s.run(#"{"op":"moveItem","item":"a","after":"c"}"#)
    #expect(s.outline("A") == "b c a d")
    try s.run(#"{"op":"moveItem","item":"d","before":"c"}"#)
    #expect(s.outline("A") == "b d c a")
    // Before the item that already follows: a real move that lands in the same place.
    try s.run(#"{"op":"moveItem","item":"b","before":"d"}"#)
    #expect(s.outline("A") == "b d c a")
    try expectFault(&s, #"{"op":"moveItem","item":"b","after":"b"}"#, .moveNextToItself("b"))
  }

  @Test func moveItemFaults() throws {
    var s = try folded(Self.base)
    try expectFault(
      &s, #"{"op":"moveItem","item":"p","before":"r"}"#,
      .moveIntoOwnSubtree(item: "p", anchor: "r"))
    try expectFault(&s, #"{"op":"moveItem","item":"z","before":"p"}"#, .missingItem("z"))
    try expectFault(&s, #"{"op":"moveItem","item":"p","before":"z"}"#, .missingAnchor("z"))
  }

  @Test func moveSectionArithmeticAndFaults() throws {
    var s = try folded(#"{"op":"appendSections","sections":["A","B","C"]}"#)
    try s.run(#"{"op":"moveSection","section":"A","after":"B"}"#)
    #expect(s.sectionIdentifiers == ["B", "A", "C"])
    try s.run(#"{"op":"moveSection","section":"C","before":"A"}"#)
    #expect(s.sectionIdentifiers == ["B", "C", "A"])
    try expectFault(
      &s, #"{"op":"moveSection","section":"A","before":"A"}"#, .moveNextToItself("A"))
    try expectFault(&s, #"{"op":"moveSection","section":"Z","before":"A"}"#, .missingSection("Z"))
    try expectFault(&s, #"{"op":"moveSection","section":"A","after":"Z"}"#, .missingSection("Z"))
  }

  // MARK: Section 1: flags

  @Test func flagsOfNewLeafAndCollapsedItems() throws {
    var s = try folded(Self.base)
    #expect(!s.isExpanded("t") && !s.isExpanded("r"))
    try s.run(#"{"op":"expand","items":["t","t"]}"#)
    #expect(s.isExpanded("t"))
    try s.run(#"{"op":"collapse","items":["p"]}"#)
    #expect(s.isExpanded("q") && !s.isVisible("r"))
    try s.run(#"{"op":"expand","items":["p"]}"#)
    #expect(s.outline("A") == "p+ .q+ ..r .s t+")
    try expectFault(&s, #"{"op":"collapse","items":["t","z"]}"#, .missingItem("z"))
  }

  // MARK: Section 2: faults

  @Test func insertionsFaultOnRepeatedOrExistingIds() throws {
    var s = try folded(Self.base)
    try expectFault(&s, #"{"op":"appendSections","sections":["C","C"]}"#, .repeatedSection("C"))
    try expectFault(&s, #"{"op":"appendSections","sections":["B"]}"#, .duplicateSection("B"))
    try expectFault(
      &s, #"{"op":"insertSections","sections":["A"],"after":"B"}"#, .duplicateSection("A"))
    try expectFault(
      &s, #"{"op":"appendItems","section":"B","items":[{"id":"n","children":["r"]}]}"#,
      .duplicateItem("r"))
    try expectFault(
      &s, #"{"op":"insertItems","items":["m",{"id":"n","children":["m"]}],"before":"t"}"#,
      .repeatedItem("m"))
    try expectFault(
      &s, #"{"op":"replaceChildren","parent":"q","items":["p"]}"#, .duplicateItem("p"))
    try expectFault(
      &s, #"{"op":"replaceChildren","parent":"q","items":["t"]}"#, .duplicateItem("t"))
    try expectFault(
      &s, #"{"op":"applySectionSnapshot","section":"B","items":["r"]}"#, .duplicateItem("r"))
    try expectFault(
      &s, #"{"op":"applySectionSnapshot","section":"A","items":["r",{"id":"x","children":["r"]}]}"#,
      .repeatedItem("r"))
  }

  @Test func emptyInsertionsNeedTheirTarget() throws {
    var s = try folded(Self.base)
    try s.run(
      """
      {"op":"appendSections","sections":[]}
      {"op":"appendItems","items":[]}
      {"op":"appendItems","parent":"q","items":[]}
      {"op":"insertItems","items":[],"before":"t"}
      {"op":"insertSections","sections":[],"after":"A"}
      """)
    #expect(s.outline("A") == "p+ .q+ ..r .s t")
    try expectFault(
      &s, #"{"op":"appendItems","section":"Z","items":[]}"#, .missingSection("Z"))
    try expectFault(&s, #"{"op":"appendItems","parent":"z","items":[]}"#, .missingParent("z"))
    try expectFault(&s, #"{"op":"insertItems","items":[],"after":"z"}"#, .missingAnchor("z"))
    try expectFault(
      &s, #"{"op":"insertSections","sections":[],"before":"Z"}"#, .missingSection("Z"))
    try expectFault(&s, #"{"op":"replaceChildren","parent":"z","items":[]}"#, .missingParent("z"))
    try expectFault(
      &s, #"{"op":"applySectionSnapshot","section":"Z","items":[]}"#, .missingSection("Z"))
    var empty = ListState()
    try expectFault(&empty, #"{"op":"appendItems","items":[]}"#, .noSections)
  }

  @Test func appendItemsParentMustLieInTheNamedSection() throws {
    var s = try folded(Self.base)
    try expectFault(
      &s, #"{"op":"appendItems","section":"B","parent":"q","items":["n"]}"#,
      .parentNotInSection(parent: "q", section: "B"))
    try s.run(#"{"op":"appendItems","section":"A","parent":"q","items":["n"]}"#)
    #expect(s.outline("A") == "p+ .q+ ..r ..n .s t")
  }

  @Test func reloadsAndUpdateNeedExistenceAndChangeNoStructure() throws {
    var s = try folded(Self.base)
    try s.run(#"{"op":"select","items":["r"]}"#)
    let before = s
    try s.run(
      """
      {"op":"reloadSections","sections":["A","A","B"]}
      {"op":"reloadItems","items":["r","r","t"]}
      {"op":"reconfigureItems","items":["p"]}
      {"op":"update","item":"r"}
      {"op":"reloadItems","items":[]}
      """)
    #expect(s == before)
    try expectFault(&s, #"{"op":"reloadSections","sections":["A","Z"]}"#, .missingSection("Z"))
    try expectFault(&s, #"{"op":"reloadItems","items":["r","z"]}"#, .missingItem("z"))
    try expectFault(&s, #"{"op":"reconfigureItems","items":["z"]}"#, .missingItem("z"))
    try expectFault(&s, #"{"op":"update","item":"z"}"#, .missingItem("z"))
    try s.run(#"{"op":"update","item":"r","title":"T","fields":{"a":"1","b":"2"}}"#)
    try s.run(#"{"op":"update","item":"r","fields":{"b":"3"},"title":null}"#)
    #expect(s.title(of: "r") == "T")
    #expect(s.fields(of: "r") == ["a": "1", "b": "3"])
    #expect(s.selectedItems == ["r"])
  }

  @Test func deletesIgnoreAbsentIdsAndRepeats() throws {
    var s = try folded(Self.base)
    try s.run(
      """
      {"op":"deleteItems","items":["q","r","q","zz"]}
      {"op":"deleteSections","sections":["B","B","ZZ"]}
      """)
    #expect(s.outline("A") == "p+ .s t")
    #expect(s.sectionIdentifiers == ["A"])
    try s.run(#"{"op":"deleteAllItems"}"#)
    #expect(s.sectionIdentifiers == ["A"] && s.numberOfAllItems == 0)
  }

  // MARK: Section 5: selection

  @Test func selectionFollowsVisibilityAndIdentity() throws {
    var s = try folded(Self.base)
    try s.run(
      """
      {"op":"configure","multipleSelection":true}
      {"op":"select","items":["r","s","t"]}
      {"op":"collapse","items":["q"]}
      """)
    #expect(s.selectedItems == ["s", "t"])
    try expectFault(&s, #"{"op":"select","items":["r"]}"#, .hiddenItem("r"))
    try s.run(#"{"op":"expand","items":["q"]}"#)
    #expect(s.selectedItems == ["s", "t"])
    try s.run(
      """
      {"op":"collapse","items":["q"]}
      {"op":"moveItem","item":"t","after":"r"}
      """)
    #expect(s.selectedItems == ["s"])
    try s.run(
      """
      {"op":"deleteItems","items":["s"]}
      {"op":"appendItems","section":"A","items":["s"]}
      """)
    #expect(s.selectedItems.isEmpty)
  }

  @Test func reattachedIdsKeepTheirSelectionWhenVisible() throws {
    var s = try folded(Self.base)
    try s.run(
      """
      {"op":"configure","multipleSelection":true}
      {"op":"select","items":["q","r","s"]}
      {"op":"replaceChildren","parent":"p","items":["s",{"id":"q","children":["r"]}]}
      """)
    // q comes back collapsed, so r is hidden and leaves the selection; p keeps its flag.
    #expect(s.outline("A") == "p+ .s* .q* ..r t")
    try s.run(
      """
      {"op":"select","items":["t"]}
      {"op":"applySectionSnapshot","section":"A","items":[{"id":"t","expanded":true,"children":["s"]},"q"]}
      """)
    #expect(s.outline("A") == "t+* .s* q*")
    try s.run(#"{"op":"replaceChildren","parent":"t","items":[]}"#)
    #expect(s.outline("A") == "t+* q*")
  }

  @Test func selectEmptyDeselectAndConfigure() throws {
    var s = try folded(Self.base)
    try s.run(#"{"op":"select","items":["t"]}"#)
    try expectFault(&s, #"{"op":"select","items":["s","t"]}"#, .tooManySelected(2))
    try s.run(#"{"op":"select","items":["s","s"]}"#)
    #expect(s.selectedItems == ["s"])
    try s.run(#"{"op":"configure","multipleSelection":false}"#)
    #expect(s.selectedItems == ["s"])
    try s.run(#"{"op":"select","items":[]}"#)
    #expect(s.selectedItems.isEmpty)
    try s.run(
      """
      {"op":"configure","multipleSelection":true}
      {"op":"select","items":["t","p"]}
      {"op":"select","items":[]}
      {"op":"configure","multipleSelection":true}
      {"op":"deselect","items":["zz","p","p"]}
      """)
    #expect(s.selectedItems == ["t"])
    try s.run(#"{"op":"deselect","items":null}"#)
    #expect(s.selectedItems.isEmpty)
    try s.run(
      """
      {"op":"select","items":["p","t"]}
      {"op":"configure","multipleSelection":false}
      """)
    #expect(s.selectedItems.isEmpty)
  }

  // MARK: Section 5: batches

  @Test func batchIsAtomicAcrossNestingAndMode() throws {
    var s = try folded(Self.base)
    let line =
      #"{"op":"batch","events":[{"op":"configure","multipleSelection":true},{"op":"select","items":["r","t"]},{"op":"batch","events":[{"op":"mark","label":"m"},{"op":"deleteItems","items":["t"]},{"op":"appendItems","items":["r"]}]}]}"#
    let inner = ListFault.inBatch(index: 2, op: "appendItems", fault: .duplicateItem("r"))
    try expectFault(&s, line, .inBatch(index: 2, op: "batch", fault: inner))
    #expect(!s.allowsMultipleSelection)
    try s.run(
      #"{"op":"batch","events":[{"op":"configure","multipleSelection":true},{"op":"select","items":["r","t"]},{"op":"collapse","items":["q"]},{"op":"expand","items":["q"]},{"op":"batch","events":[{"op":"mark","label":"m"},{"op":"deleteItems","items":["t"]},{"op":"appendItems","section":"A","items":["t"]}]},{"op":"batch","events":[]}]}"#
    )
    #expect(s.allowsMultipleSelection)
    #expect(s.selectedItems.isEmpty)
    #expect(s.outline("A") == "p+ .q+ ..r .s t")
  }

  // MARK: Section 5: malformed input

  @Test func malformedLines() {
    expectMalformed("[]", "expected a JSON object")
    expectMalformed(#""appendSections""#, "expected a JSON object")
    expectMalformed("42", "expected a JSON object")
    expectMalformed(#"{"op":"Mark","label":"x"}"#, "unknown op")
    expectMalformed(#"{"label":"x"}"#, #"missing field "op""#)
    expectMalformed(#"{"op":3}"#, #"field "op""#)
    expectMalformed(#"{"op":"mark","label":"x","t":"now"}"#, #"field "t""#)
    expectMalformed(#"{"op":"mark","label":"x","t":1.5}"#, #"field "t""#)
    expectMalformed(#"{"op":"mark","label":"x","t":1.0}"#, #"field "t""#)
    expectMalformed(#"{"op":"mark","label":"x","t":true}"#, #"field "t""#)
    expectMalformed(#"{"op":"appendSections","sections":null}"#, #"missing field "sections""#)
    expectMalformed(#"{"op":"appendSections","sections":"A"}"#, #"field "sections""#)
    expectMalformed(#"{"op":"appendSections","sections":["A",1]}"#, #""sections"[1]"#)
    expectMalformed(#"{"op":"appendSections","sections":[""]}"#, "non-empty")
    expectMalformed(#"{"op":"appendItems","items":[{"title":"x"}]}"#, "id")
    expectMalformed(#"{"op":"appendItems","items":[{"id":"x","title":3}]}"#, "title")
    expectMalformed(#"{"op":"appendItems","items":[{"id":"x","children":"y"}]}"#, "children")
    expectMalformed(#"{"op":"appendItems","items":[{"id":"x","children":[[]]}]}"#, "children")
    expectMalformed(#"{"op":"appendItems","items":[{"id":"x","fields":[]}]}"#, "fields")
    expectMalformed(#"{"op":"appendItems","items":[{"id":"x","fields":{"a":1}}]}"#, "fields")
    expectMalformed(#"{"op":"appendItems","items":[{"id":"x","expanded":1}]}"#, "expanded")
    expectMalformed(#"{"op":"appendItems","items":["x"],"section":5}"#, #"field "section""#)
    expectMalformed(#"{"op":"update","item":"x","title":5}"#, #"field "title""#)
    expectMalformed(#"{"op":"update","item":"x","fields":"a"}"#, #"field "fields""#)
    expectMalformed(#"{"op":"configure","multipleSelection":"true"}"#, "multipleSelection")
    expectMalformed(#"{"op":"configure"}"#, "multipleSelection")
    expectMalformed(#"{"op":"mark","label":null}"#, #"missing field "label""#)
    expectMalformed(#"{"op":"deselect","items":[7]}"#, #""items"[0]"#)
    expectMalformed(#"{"op":"moveItem","item":"a","before":"b","after":"c"}"#, "both")
    expectMalformed(#"{"op":"moveItem","item":"a"}"#, "before")
    expectMalformed(#"{"op":"insertItems","items":[],"before":null,"after":null}"#, "before")
    expectMalformed(#"{"op":"moveSection","section":"a","after":""}"#, "non-empty")
    expectMalformed(
      #"{"op":"batch","events":[{"op":"mark","label":"x"},{"op":"select"}]}"#,
      "event 2 of the batch")
    expectMalformed(#"{"op":"batch","events":{}}"#, #"field "events""#)
  }

  @Test func nullOptionalFieldsAndUnknownFieldsAreAbsent() throws {
    let e = try Event(
      jsonLine:
        #"{"op":"appendItems","items":[{"id":"x","title":null,"fields":null,"expanded":null,"children":null,"extra":1}],"section":null,"parent":null,"t":null,"zzz":[1]}"#
    )
    #expect(e.time == nil)
    #expect(e.operation == .appendItems([OutlineNode("x")], section: nil, parent: nil))
    let u = try Event(jsonLine: #"{"op":"update","item":"x","title":null,"fields":null}"#)
    #expect(u.operation == .update(item: "x", title: nil, fields: nil))
    let d = try Event(jsonLine: #"{"op":"deselect","items":null}"#)
    #expect(d.operation == .deselect(nil))
    let m = try Event(jsonLine: #"{"op":"mark","label":"","t":-5}"#)
    #expect(m.operation == .mark("") && m.time == -5)
  }

  // MARK: Section 3: state JSON

  @Test func stateJSONKeyOrderAndEmptyState() throws {
    #expect(ListState().json(event: 0) == #"{"event":0,"sections":[],"selected":[]}"#)
    var s = try folded(Self.base)
    try s.run(
      """
      {"op":"configure","multipleSelection":true}
      {"op":"select","items":["t","r"]}
      {"op":"update","item":"q","title":"Q","fields":{"b":"2","a":"1"}}
      {"op":"collapse","items":["p"]}
      """)
    let expected =
      #"{"event":7,"sections":[{"id":"A","items":["#
      + #"{"id":"p","parent":null,"level":0,"expanded":false},"#
      + #"{"id":"q","parent":"p","level":1,"expanded":true,"title":"Q","fields":{"a":"1","b":"2"}},"#
      + #"{"id":"r","parent":"q","level":2,"expanded":false},"#
      + #"{"id":"s","parent":"p","level":1,"expanded":false},"#
      + #"{"id":"t","parent":null,"level":0,"expanded":false}],"visible":["p","t"]},"#
      + #"{"id":"B","items":[],"visible":[]}],"selected":["t"]}"#
    #expect(s.json(event: 7) == expected)
  }
}
