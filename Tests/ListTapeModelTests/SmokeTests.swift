import ListTapeJSON
import Testing

@testable import ListTapeModel

@Suite struct SmokeTests {
  @Test func protocolExample() throws {
    var s = ListState()
    let lines = [
      #"{"op":"appendSections","sections":["main"]}"#,
      #"{"op":"appendItems","items":[{"id":"Communication","children":["mic","phone"]}]}"#,
      #"{"op":"expand","items":["Communication"]}"#,
      #"{"op":"select","items":["mic"]}"#,
      #"{"op":"deleteItems","items":["phone"]}"#,
    ]
    for l in lines { try s.apply(try Event(jsonLine: l)) }
    #expect(
      s.json(event: 12)
        == #"{"event":12,"sections":[{"id":"main","items":[{"id":"Communication","parent":null,"level":0,"expanded":true},{"id":"mic","parent":"Communication","level":1,"expanded":false}],"visible":["Communication","mic"]}],"selected":["mic"]}"#
    )
    try s.collapse(["Communication"])
    #expect(s.selectedItems.isEmpty)
    #expect(s.row(of: "mic") == nil)
    let copy = try ListState(encoded: s.encoded())
    #expect(copy == s)
  }

  @Test func batchRollsBack() throws {
    var s = ListState()
    try s.apply(Event(.appendSections(["a"])))
    try s.apply(Event(.appendItems(["x", "y"], section: nil, parent: nil)))
    let before = s
    #expect(throws: ListFault.self) {
      try s.apply(
        Event(.batch([Event(.deleteItems(["x"])), Event(.appendItems(["y"], section: nil, parent: nil))])))
    }
    #expect(s == before)
    #expect(s.allItems(inSection: "a") == ["x", "y"])
    try s.apply(Event(.appendItems(["z"], section: nil, parent: nil)))
    #expect(s.allItems(inSection: "a") == ["x", "y", "z"])
  }
}
