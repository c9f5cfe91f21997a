import Testing

@testable import ListTapeModel

/// Protocol sections 1, 2 and 5 on the way in: what decodes, and every kind of malformed
/// line with a message that names the problem.
@Suite struct EventDecodingTests {
  struct Case: CustomTestStringConvertible, Sendable {
    var line: String
    var fragment: String
    var testDescription: String { line }
  }

  static let malformed: [Case] = [
    // Not an object, or not JSON.
    Case(line: #"[1,2]"#, fragment: "expected a JSON object, found array"),
    Case(line: #""appendSections""#, fragment: "expected a JSON object, found string"),
    Case(line: #"42"#, fragment: "found integer"),
    Case(line: #"{"op":"mark","label":"x""#, fragment: "invalid JSON"),
    Case(line: #"{"op":"mark",}"#, fragment: "invalid JSON"),
    Case(line: #"{"op":"mark","label":"a","label":"b"}"#, fragment: "invalid JSON"),
    Case(line: "", fragment: "invalid JSON"),
    // The op itself.
    Case(line: #"{}"#, fragment: #"missing field "op""#),
    Case(line: #"{"op":null}"#, fragment: #"missing field "op""#),
    Case(line: #"{"op":3}"#, fragment: #"field "op" must be a string, found integer"#),
    Case(line: #"{"op":"explode"}"#, fragment: #"unknown op "explode""#),
    Case(line: #"{"op":"AppendSections","sections":[]}"#, fragment: "unknown op"),
    // Required fields missing or mistyped (null counts as missing).
    Case(line: #"{"op":"appendSections"}"#, fragment: #"missing field "sections""#),
    Case(line: #"{"op":"appendSections","sections":null}"#, fragment: #"missing field "sections""#),
    Case(
      line: #"{"op":"appendSections","sections":"A"}"#,
      fragment: #"field "sections" must be an array"#),
    Case(
      line: #"{"op":"deleteSections","sections":["A",3]}"#,
      fragment: #""sections"[1] must be an identifier string, found integer"#),
    Case(line: #"{"op":"reloadSections","sections":[""]}"#, fragment: "non-empty identifier"),
    Case(line: #"{"op":"moveSection","before":"A"}"#, fragment: #"missing field "section""#),
    Case(
      line: #"{"op":"moveSection","section":7,"before":"A"}"#,
      fragment: #"field "section" must be an identifier string"#),
    Case(line: #"{"op":"appendItems"}"#, fragment: #"missing field "items""#),
    Case(
      line: #"{"op":"appendItems","items":{"id":"a"}}"#,
      fragment: #"field "items" must be an array of items, found object"#),
    Case(
      line: #"{"op":"appendItems","items":[1]}"#,
      fragment: #""items"[0] must be an identifier or an item object, found integer"#),
    Case(
      line: #"{"op":"appendItems","items":["a",""]}"#,
      fragment: #""items"[1] must be a non-empty identifier"#),
    Case(
      line: #"{"op":"appendItems","items":[{"title":"x"}]}"#, fragment: #""items"[0] lacks "id""#),
    Case(
      line: #"{"op":"appendItems","items":[{"id":5}]}"#,
      fragment: #""items"[0].id must be an identifier string, found integer"#),
    Case(
      line: #"{"op":"insertItems","items":["a"]}"#, fragment: #"missing field "before" or "after""#),
    Case(
      line: #"{"op":"insertItems","items":["a"],"before":null,"after":null}"#,
      fragment: #"missing field "before" or "after""#),
    Case(
      line: #"{"op":"insertItems","items":["a"],"before":"b","after":"c"}"#,
      fragment: #"both "before" and "after""#),
    Case(
      line: #"{"op":"insertSections","sections":["A"],"before":"B","after":"C"}"#,
      fragment: #"both "before" and "after""#),
    Case(
      line: #"{"op":"moveSection","section":"A"}"#, fragment: #"missing field "before" or "after""#),
    Case(
      line: #"{"op":"moveItem","item":"a","after":["b"]}"#,
      fragment: #"field "after" must be an identifier string, found array"#),
    Case(
      line: #"{"op":"moveItem","item":"a","before":""}"#,
      fragment: #"field "before" must be a non-empty identifier"#),
    Case(
      line: #"{"op":"moveItem","item":"","before":"b"}"#,
      fragment: #"field "item" must be a non-empty identifier"#),
    Case(
      line: #"{"op":"deleteItems","items":"a"}"#,
      fragment: #"field "items" must be an array of identifiers, found string"#),
    Case(
      line: #"{"op":"deleteItems","items":[{"id":"a"}]}"#,
      fragment: #""items"[0] must be an identifier string, found object"#),
    Case(line: #"{"op":"replaceChildren","items":[]}"#, fragment: #"missing field "parent""#),
    Case(line: #"{"op":"replaceChildren","parent":"a"}"#, fragment: #"missing field "items""#),
    Case(line: #"{"op":"applySectionSnapshot","items":[]}"#, fragment: #"missing field "section""#),
    Case(
      line: #"{"op":"applySectionSnapshot","section":"A","items":"x"}"#,
      fragment: #"field "items" must be an array"#),
    Case(line: #"{"op":"reloadItems"}"#, fragment: #"missing field "items""#),
    Case(
      line: #"{"op":"reconfigureItems","items":[true]}"#,
      fragment: #""items"[0] must be an identifier string, found boolean"#),
    Case(line: #"{"op":"update","title":"x"}"#, fragment: #"missing field "item""#),
    Case(
      line: #"{"op":"expand","items":[null]}"#,
      fragment: #""items"[0] must be an identifier string, found null"#),
    Case(line: #"{"op":"collapse"}"#, fragment: #"missing field "items""#),
    Case(line: #"{"op":"select","items":"a"}"#, fragment: #"field "items" must be an array"#),
    Case(line: #"{"op":"deselect","items":"a"}"#, fragment: #"field "items" must be an array"#),
    Case(line: #"{"op":"configure"}"#, fragment: #"missing field "multipleSelection""#),
    Case(
      line: #"{"op":"configure","multipleSelection":1}"#,
      fragment: #"field "multipleSelection" must be a boolean, found integer"#),
    Case(
      line: #"{"op":"configure","multipleSelection":"true"}"#,
      fragment: "must be a boolean, found string"),
    Case(line: #"{"op":"mark"}"#, fragment: #"missing field "label""#),
    Case(
      line: #"{"op":"mark","label":3}"#, fragment: #"field "label" must be a string, found integer"#
    ),
    // Optional fields of the wrong type (null would be absent).
    Case(
      line: #"{"op":"deleteAllItems","t":"now"}"#,
      fragment: #"field "t" must be an integer (milliseconds), found string"#),
    Case(
      line: #"{"op":"deleteAllItems","t":1.5}"#,
      fragment: #"field "t" must be an integer (milliseconds), found float"#),
    Case(line: #"{"op":"deleteAllItems","t":1e3}"#, fragment: "found float"),
    Case(line: #"{"op":"deleteAllItems","t":1.0}"#, fragment: "found float"),
    Case(line: #"{"op":"deleteAllItems","t":true}"#, fragment: "found boolean"),
    // Digits beyond Int64 (read as a float by the parser) are out of range, not a fraction.
    Case(
      line: #"{"op":"deleteAllItems","t":9223372036854775808}"#,
      fragment: #"from -9223372036854775807 to 9223372036854775807, found one out of that range"#),
    Case(line: #"{"op":"deleteAllItems","t":-9223372036854775809}"#, fragment: "out of that range"),
    Case(
      line: #"{"op":"deleteAllItems","t":123456789012345678901}"#, fragment: "out of that range"),
    Case(
      line: #"{"op":"deleteAllItems","t":9223372036854775807.5}"#, fragment: "out of that range"),
    // The log's "no time".
    Case(
      line: #"{"op":"deleteAllItems","t":-9223372036854775808}"#,
      fragment: #"from -9223372036854775807 to 9223372036854775807, found -9223372036854775808"#),
    Case(
      line: #"{"op":"appendItems","items":["a"],"section":5}"#,
      fragment: #"field "section" must be an identifier string"#),
    Case(
      line: #"{"op":"appendItems","items":["a"],"parent":""}"#,
      fragment: #"field "parent" must be a non-empty identifier"#),
    Case(
      line: #"{"op":"appendItems","items":[{"id":"a","title":5}]}"#,
      fragment: #""items"[0].title must be a string, found integer"#),
    Case(
      line: #"{"op":"appendItems","items":[{"id":"a","children":"b"}]}"#,
      fragment: #""items"[0].children must be an array of items, found string"#),
    Case(
      line: #"{"op":"appendItems","items":[{"id":"a","expanded":1}]}"#,
      fragment: #""items"[0].expanded must be a boolean, found integer"#),
    Case(
      line: #"{"op":"appendItems","items":[{"id":"a","fields":[]}]}"#,
      fragment: #""items"[0].fields must be an object of strings, found array"#),
    Case(
      line: #"{"op":"appendItems","items":[{"id":"a","fields":{"k":1}}]}"#,
      fragment: #""items"[0].fields.k must be a string, found integer"#),
    Case(
      line: #"{"op":"appendItems","items":[{"id":"a","children":[{"id":""}]}]}"#,
      fragment: #""items"[0].children[0].id must be a non-empty identifier"#),
    Case(
      line: #"{"op":"update","item":"a","title":7}"#,
      fragment: #"field "title" must be a string, found integer"#),
    Case(
      line: #"{"op":"update","item":"a","fields":"x"}"#,
      fragment: #"field "fields" must be an object of strings, found string"#),
    Case(
      line: #"{"op":"update","item":"a","fields":{"k":null}}"#,
      fragment: #"field "fields".k must be a string, found null"#),
    // Batches: malformed as a whole when anything inside is.
    Case(line: #"{"op":"batch"}"#, fragment: #"missing field "events""#),
    Case(
      line: #"{"op":"batch","events":{}}"#,
      fragment: #"field "events" must be an array, found object"#),
    Case(
      line: #"{"op":"batch","events":[{"op":"mark","label":"a"},{"op":"select"}]}"#,
      fragment: #"event 2 of the batch: missing field "items""#),
    Case(
      line: #"{"op":"batch","events":[3]}"#,
      fragment: "event 1 of the batch: expected a JSON object, found integer"),
    Case(
      line: #"{"op":"batch","events":[{"op":"batch","events":[{"op":"nope"}]}]}"#,
      fragment: #"event 1 of the batch: event 1 of the batch: unknown op "nope""#),
  ]

  @Test(arguments: malformed)
  func malformedLinesNameTheProblem(_ c: Case) {
    expectMalformed(c.line, c.fragment)
  }

  @Test func nullOptionalFieldsCountAsAbsent() throws {
    let e = try Event(
      jsonLine:
        #"{"op":"appendItems","items":[{"id":"a","title":null,"fields":null,"expanded":null,"children":null}],"section":null,"parent":null,"t":null}"#
    )
    #expect(e == Event(.appendItems(["a"], section: nil, parent: nil)))
    #expect(
      try Event(jsonLine: #"{"op":"insertItems","items":["a"],"before":null,"after":"b"}"#)
        == Event(.insertItems(["a"], .after("b"))))
    #expect(try Event(jsonLine: #"{"op":"deselect","items":null}"#) == Event(.deselect(nil)))
    #expect(try Event(jsonLine: #"{"op":"deselect"}"#) == Event(.deselect(nil)))
    #expect(try Event(jsonLine: #"{"op":"deselect","items":[]}"#) == Event(.deselect([])))
    #expect(
      try Event(jsonLine: #"{"op":"update","item":"a","title":null,"fields":null}"#)
        == Event(.update(item: "a", title: nil, fields: nil)))
  }

  @Test func unknownFieldsAreIgnoredAndTimesAreIntegers() throws {
    let e = try Event(
      jsonLine: #"{"extra":[1,{"x":null}],"op":"mark","label":"","t":1700000000123,"op2":"x"}"#)
    #expect(e == Event(.mark(""), time: 1_700_000_000_123))
    #expect(try Event(jsonLine: #"{"op":"deleteAllItems","t":-5}"#).time == -5)
    #expect(try Event(jsonLine: #"{"op":"deleteAllItems","t":0}"#).time == 0)
  }

  @Test func nodesDecodeWithContentFlagsAndSubtrees() throws {
    let e = try Event(
      jsonLine:
        #"{"op":"appendItems","parent":"p","section":"S","items":["a",{"id":"b","title":"B","fields":{"k":"v"},"expanded":true,"children":["c",{"id":"d","expanded":false}]}]}"#
    )
    let b = OutlineNode(
      "b", title: "B", fields: ["k": "v"], expanded: true, children: ["c", "d"])
    #expect(e == Event(.appendItems(["a", b], section: "S", parent: "p")))
    #expect(e.operation.itemIDs == ["a", "b", "c", "d", "p"])
  }

  @Test func namesAnItemExactlyWhenItsIdentifiersListIt() throws {
    let tree = OutlineNode("b", children: ["c", OutlineNode("d", children: ["e"])])
    let ops: [ListOperation] = [
      .appendItems(["a", tree], section: "S", parent: "p"),
      .appendItems(["a"], section: "S", parent: nil),
      .insertItems([tree], .after("q")),
      .deleteItems(["a", "b"]), .reloadItems(["c"]), .reconfigureItems(["d"]),
      .expand(["e"]), .collapse(["a"]), .select(["b"]), .deselect(["c"]), .deselect(nil),
      .moveItem("a", .before("b")), .replaceChildren(parent: "p", items: [tree]),
      .applySectionSnapshot(section: "S", items: [tree]),
      .update(item: "q", title: "Q", fields: nil),
      .batch([Event(.expand(["z"])), Event(.batch([Event(.select(["y"]))]))]),
      .appendSections(["a"]), .mark("a"), .deleteAllItems,
    ]
    for op in ops {
      for id in ["a", "b", "c", "d", "e", "p", "q", "y", "z", "S", "x"] {
        #expect(op.names(item: id) == op.itemIDs.contains(id), "\(op) naming \(id)")
      }
    }
    // Identifiers are compared by scalars, as the model keys them: "é" is not "e\u{301}".
    #expect(ListOperation.select(["\u{E9}"]).names(item: "\u{E9}"))
    #expect(!ListOperation.select(["\u{E9}"]).names(item: "e\u{301}"))
  }

  @Test func identifiersMayBeAnyNonEmptyUnicodeString() throws {
    let e = try Event(jsonLine: #"{"op":"select","items":["é","💡","a b","\u0000x","\"q\""]}"#)
    #expect(e == Event(.select(["é", "💡", "a b", "\u{0}x", "\"q\""])))
    #expect(try Event(jsonLine: e.jsonLine) == e)
  }
}
