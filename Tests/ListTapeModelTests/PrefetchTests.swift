import Testing

@testable import ListTapeModel

/// The fold's cache hints read a record's first item ahead of its fold: they must name the
/// item the reducer reads first, or they ask for the wrong lines (and the fold waits again).
@Suite struct PrefetchTests {
  /// A: a+ .a1 .a2 b c    B: x
  static let base = """
    {"op":"appendSections","sections":["A","B"]}
    {"op":"appendItems","section":"A","items":[{"id":"a","expanded":true,"children":["a1","a2"]},"b","c"]}
    {"op":"appendItems","section":"B","items":["x"]}
    """

  /// Each op's record, and the id whose entry it reads first (nil: it names no item first).
  static let cases: [(String, String?)] = [
    (#"{"op":"expand","items":["b","c"]}"#, "b"),
    (#"{"op":"collapse","items":["a"]}"#, "a"),
    (#"{"op":"select","items":["c","a1"]}"#, "c"),
    (#"{"op":"deselect","items":["a2"]}"#, "a2"),
    (#"{"op":"deleteItems","items":["x","b"]}"#, "x"),
    (#"{"op":"moveItem","item":"c","before":"a"}"#, "c"),
    (#"{"op":"update","item":"a1","title":"One"}"#, "a1"),
    (#"{"op":"insertItems","items":["n"],"after":"b"}"#, "b"),
    (#"{"op":"replaceChildren","parent":"a","items":["m"]}"#, "a"),
    (#"{"op":"appendItems","parent":"a2","items":["k"]}"#, "a2"),
    (#"{"op":"appendItems","section":"B","items":["k"]}"#, nil),
    (#"{"op":"deleteAllItems"}"#, nil),
    (#"{"op":"appendSections","sections":["C"]}"#, nil),
    (#"{"op":"mark","label":"here"}"#, nil),
    (#"{"op":"batch","events":[{"op":"expand","items":["b"]}]}"#, nil),
  ]

  @Test(arguments: cases)
  func firstEntryNamesTheItemTheReducerReadsFirst(line: String, first: String?) throws {
    var state = try folded(Self.base)
    var ops = FoldOps()
    ops.append(try Event(jsonLine: line), ids: &state.forest.ids)
    let expected = first.map { state.forest.findEntry($0) ?? -2 } ?? -1
    #expect(ops.firstEntry(0) == expected)
    if let first {
      #expect(state.forest.item(entry: ops.firstEntry(0)) >= 0, "\(first) is an item")
    }
  }

  /// The hints change nothing: a record ahead that names an unknown or deleted item, or
  /// none, asks for nothing, and the fold reads the same states as one event at a time.
  @Test func foldingARunOfRecordsWithHintsGivesTheStatesOfOneEventAtATime() throws {
    var byEvents = try folded(Self.base)
    var byRun = byEvents
    var ops = FoldOps()
    let lines =
      Self.cases.map(\.0) + [
        #"{"op":"expand","items":["gone"]}"#, #"{"op":"deleteItems","items":["a"]}"#,
        #"{"op":"select","items":["a1"]}"#,
      ]
    for line in lines { ops.append(try Event(jsonLine: line), ids: &byRun.forest.ids) }
    for (i, line) in lines.enumerated() {
      let event = try Event(jsonLine: line)
      let expected: ListFault?
      do throws(ListFault) {
        try byEvents.apply(event)
        expected = nil
      } catch {
        expected = error
      }
      #expect(try byRun.apply(ops, i) == expected, "\(line)")
      #expect(byRun == byEvents, "\(line)")
    }
  }
}
