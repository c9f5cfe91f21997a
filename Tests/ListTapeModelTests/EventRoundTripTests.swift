import Testing

@testable import ListTapeModel

/// Encode → decode gives the same event, for every op, in JSON and in the binary form.
@Suite struct EventRoundTripTests {
  static let subtree = OutlineNode(
    "n", title: "Title \"quoted\"", fields: ["b": "2", "a": "1", "": "empty key"],
    expanded: true,
    children: ["c1", OutlineNode("c2", fields: [:], children: [OutlineNode("c21", title: "")])])

  static let events: [Event] = [
    Event(.appendSections(["A", "B"]), time: 1_700_000_000_000),
    Event(.appendSections([])),
    Event(.insertSections(["C"], .before("A"))),
    Event(.insertSections(["D"], .after("B")), time: -3),
    Event(.deleteSections(["A", "Z"])),
    Event(.moveSection("A", .after("B"))),
    Event(.moveSection("A", .before("B"))),
    Event(.reloadSections(["A"])),
    Event(.appendItems(["a", subtree], section: nil, parent: nil)),
    Event(.appendItems(["a"], section: "S", parent: nil)),
    Event(.appendItems([subtree], section: nil, parent: "p")),
    Event(.appendItems([], section: "S", parent: "p"), time: 42),
    Event(.insertItems([subtree, "x"], .before("a"))),
    Event(.insertItems(["x"], .after("a"))),
    Event(.deleteItems(["a", "b"])),
    Event(.deleteAllItems, time: 7),
    Event(.moveItem("a", .before("b"))),
    Event(.moveItem("a", .after("b"))),
    Event(.replaceChildren(parent: "p", items: [subtree])),
    Event(.replaceChildren(parent: "p", items: [])),
    Event(.applySectionSnapshot(section: "S", items: [subtree, "z"])),
    Event(.reloadItems(["a"])),
    Event(.reconfigureItems(["a", "b"])),
    Event(.update(item: "a", title: "New", fields: ["k": "v"])),
    Event(.update(item: "a", title: nil, fields: [:])),
    Event(.update(item: "a", title: "", fields: nil)),
    Event(.update(item: "a", title: nil, fields: nil)),
    Event(.expand(["a"])),
    Event(.collapse(["a", "a"])),
    Event(.select([])),
    Event(.select(["a"])),
    Event(.deselect(["a"])),
    Event(.deselect([])),
    Event(.deselect(nil)),
    Event(.configure(multipleSelection: true)),
    Event(.configure(multipleSelection: false)),
    Event(.mark("")),
    Event(.mark("release 1.0 ✓"), time: Int64.max),
    Event(.batch([])),
    Event(
      .batch([
        Event(.appendItems([subtree], section: nil, parent: nil), time: 5),
        Event(.batch([Event(.mark("inner")), Event(.deselect(nil), time: -9)])),
        Event(.select(["n"])),
      ]), time: 100),
  ]

  @Test func everyOpIsCovered() {
    let covered = Set(Self.events.map(\.op))
    #expect(covered == Set(ListOperation.allNames))
  }

  @Test(arguments: events)
  func jsonRoundTrip(_ event: Event) throws {
    let line = event.jsonLine
    #expect(!line.contains("\n"))
    #expect(line.hasPrefix(#"{"op":"\#(event.op)""#))
    #expect(try Event(jsonLine: line) == event)
  }

  @Test(arguments: events)
  func binaryRoundTrip(_ event: Event) throws {
    var encoder = EventEncoder()
    var decoder = EventDecoder()
    let bytes = try encoder.encode(event)
    #expect(try decoder.decode(bytes, seq: 1) == event)
    // Every strict prefix is damage, reported as an error and never a trap.
    for n in 0..<bytes.count {
      var d = EventDecoder()
      #expect(throws: CodecError.self) { try d.decode(Array(bytes[..<n]), seq: 1) }
    }
  }

  @Test func binaryTimesAreDeltasAcrossAStream() throws {
    var encoder = EventEncoder()
    var bytes: [[UInt8]] = []
    for e in Self.events { bytes.append(try encoder.encode(e)) }
    var decoder = EventDecoder()
    for (i, (e, b)) in zip(Self.events, bytes).enumerated() {
      #expect(try decoder.decode(b, seq: i + 1) == e)
    }
    #expect(decoder.lastTime == encoder.lastTime)
  }

  @Test func canonicalJSONForm() {
    #expect(
      Event(.appendItems([Self.subtree], section: "S", parent: "p"), time: 9).jsonLine
        == #"{"op":"appendItems","items":[{"id":"n","title":"Title \"quoted\"","fields":{"":"empty key","a":"1","b":"2"},"expanded":true,"children":["c1",{"id":"c2","fields":{},"children":[{"id":"c21","title":""}]}]}],"section":"S","parent":"p","t":9}"#
    )
    #expect(Event(.deselect(nil)).jsonLine == #"{"op":"deselect"}"#)
    #expect(
      Event(.moveItem("a", .after("b"))).jsonLine == #"{"op":"moveItem","item":"a","after":"b"}"#)
  }
}
