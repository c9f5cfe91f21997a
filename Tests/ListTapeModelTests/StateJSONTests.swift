import ListTapeJSON
import ListTapeSamples
import Testing

@testable import ListTapeModel

/// Protocol section 3: the state as JSON, byte for byte.
@Suite struct StateJSONTests {
  @Test func emptyState() {
    #expect(ListState().json(event: 0) == #"{"event":0,"sections":[],"selected":[]}"#)
  }

  @Test func theProtocolExample() throws {
    let s = try folded(
      """
      {"op":"appendSections","sections":["main"]}
      {"op":"appendItems","items":[{"id":"Communication","children":["mic","phone"]}]}
      {"op":"expand","items":["Communication"]}
      {"op":"select","items":["mic"]}
      {"op":"deleteItems","items":["phone"]}
      """)
    #expect(
      s.json(event: 12)
        == #"{"event":12,"sections":[{"id":"main","items":[{"id":"Communication","parent":null,"level":0,"expanded":true},{"id":"mic","parent":"Communication","level":1,"expanded":false}],"visible":["Communication","mic"]}],"selected":["mic"]}"#
    )
  }

  @Test func preOrderVisibleSubsequenceSelectionInDisplayOrderAndContent() throws {
    let s = try folded(
      """
      {"op":"configure","multipleSelection":true}
      {"op":"appendSections","sections":["S","E","T"]}
      {"op":"appendItems","section":"S","items":[{"id":"p","children":[{"id":"q","expanded":true,"children":["r"]}]},{"id":"z","title":"Zed","fields":{"b":"2","a":"1"}}]}
      {"op":"appendItems","section":"T","items":["t"]}
      {"op":"select","items":["t","z","p"]}
      """)
    #expect(
      s.json(event: 5)
        == #"{"event":5,"sections":[{"id":"S","items":[{"id":"p","parent":null,"level":0,"expanded":false},{"id":"q","parent":"p","level":1,"expanded":true},{"id":"r","parent":"q","level":2,"expanded":false},{"id":"z","parent":null,"level":0,"expanded":false,"title":"Zed","fields":{"a":"1","b":"2"}}],"visible":["p","z"]},{"id":"E","items":[],"visible":[]},{"id":"T","items":[{"id":"t","parent":null,"level":0,"expanded":false}],"visible":["t"]}],"selected":["p","z","t"]}"#
    )
  }

  @Test func prettyFormIsTheSameDocument() throws {
    let s = try folded(
      """
      {"op":"appendSections","sections":["S"]}
      {"op":"appendItems","items":["a"]}
      """)
    let pretty = s.json(event: 2, pretty: true)
    #expect(pretty.contains("\n"))
    let squeezed = pretty.split(separator: "\n").map { $0.trimmingPrefix(while: { $0 == " " }) }
      .joined().replacing("\": ", with: "\":")
    #expect(squeezed == s.json(event: 2))
  }

  /// The compact form is written through its own cursor: it must be the pretty form's
  /// document byte for byte, escapes and strings larger than its scratch buffer included,
  /// and streamed in pieces it must add up to the same bytes.
  @Test func compactCursorWritesTheSameDocumentAsTheWriter() throws {
    let bigID = String(repeating: "id\\\"\\u0001/", count: 20_000)
    let bigTitle = String(repeating: "t\\n\\u001f\\\\é", count: 30_000)
    var lines = """
      {"op":"appendSections","sections":["S\\t","E"]}
      {"op":"appendItems","section":"S\\t","items":[{"id":"\(bigID)","title":"\(bigTitle)","children":[{"id":"q\\"","expanded":true,"fields":{"k\\b":"v\\f","a":"\(bigTitle)"},"children":["r\\u0000"]}]}]}
      {"op":"expand","items":["\(bigID)"]}
      {"op":"appendItems","section":"E","items":[{"id":"hidden","children":["under"]}]}

      """
    for i in 0..<3000 {
      lines += #"{"op":"appendItems","section":"E","items":"#
      lines += #"[{"id":"item-\#(i)-ünï","title":"row \#(i)"}]}"# + "\n"
    }
    let s = try folded(lines)
    let compact = s.json(event: 7)
    let reference = try JSONParser.parse(s.json(event: 7, pretty: true)).serialized()
    #expect(compact == reference)
    #expect(compact.utf8.count > 1 << 20)

    var pieces: [UInt8] = []
    var w = JSONWriter()
    s.writeJSON(event: 7, to: &w, drain: { pieces += $0 })
    #expect(pieces.count > 0)
    #expect(String(decoding: pieces + w.bytes, as: UTF8.self) == compact)
  }

  /// A large state's items are written in two halves on two threads (each half's shown
  /// and selected ids appended after the other's): the bytes must be the one-thread
  /// document's, whether the second half shows rows or hides them all, with items selected
  /// in both halves, shown and hidden, and in another section.
  @Test(arguments: [true, false])
  func largeStateWrittenInHalvesIsTheSameDocument(secondHalfShown: Bool) throws {
    let shown = (0..<20_000).map { #"{"id":"r-\#($0)","title":"row \"\#($0)\""}"# }
    let hidden = (0..<30_000).map { #"{"id":"c-\#($0)","fields":{"k":"v\#($0)"}}"# }
    let parent = #"{"id":"p","children":[\#(hidden.joined(separator: ","))]}"#
    let items = secondHalfShown ? [parent] + shown : shown.prefix(5000) + [parent]
    let s = try folded(
      """
      {"op":"configure","multipleSelection":true}
      {"op":"appendSections","sections":["small","big"]}
      {"op":"appendItems","section":"small","items":["a","b"]}
      {"op":"appendItems","section":"big","items":[\(items.joined(separator: ","))]}
      {"op":"expand","items":["p"]}
      {"op":"select","items":["r-4999","b","c-29999","r-3","c-2"]}
      {"op":"select","items":[\(secondHalfShown ? #""r-19999","r-12000""# : #""c-17000""#)]}
      {"op":"collapse","items":["p"]}
      """)
    #expect(s.numberOfAllItems > 32_768)
    #expect(s.selectedItems.count == (secondHalfShown ? 5 : 3))  // collapsing deselects
    let reference = try JSONParser.parse(s.json(event: 8, pretty: true)).serialized()
    var pieces: [UInt8] = []
    var w = JSONWriter()
    s.writeJSON(event: 8, to: &w, drain: { pieces += $0 })
    // Compared as a Bool: a failure would otherwise print megabytes.
    let halves = String(decoding: pieces + w.bytes, as: UTF8.self)
    let same = halves == reference
    let at = zip(halves.utf8, reference.utf8).prefix { $0 == $1 }.count
    #expect(same, "the documents differ from byte \(at)")
    let oneThread = s.json(event: 8) == reference
    #expect(oneThread, "one thread, no drain")
  }

  /// The second half's walk starts from a stack placed by the B-tree counts: from every
  /// item of a section (lists long enough for inner blocks, nested, some collapsed) the walk
  /// goes on exactly as the whole walk does from there, levels and visibility included.
  @Test func aWalkStartedByCountsGoesOnAsTheWholeWalk() throws {
    var rng = SplitMix64(seed: 29)
    var rows: [String] = []
    for i in 0..<160 {
      let kids = i % 4 == 0 ? Int(rng.next() % 40) : 0
      let children = (0..<kids).map { j in
        let g = "\(i)-\(j)"
        return j % 9 == 0
          ? #"{"id":"g\#(g)","expanded":\#(j % 2 == 0),"children":["x\#(g)-a","x\#(g)-b"]}"#
          : #""c\#(g)""#
      }
      let list = children.joined(separator: ",")
      rows.append(#"{"id":"r\#(i)","expanded":\#(i % 8 == 0),"children":[\#(list)]}"#)
    }
    let s = try folded(
      """
      {"op":"appendSections","sections":["S"]}
      {"op":"appendItems","section":"S","items":[\(rows.joined(separator: ","))]}
      """)
    let f = s.forest
    let root = f.sections[Int(f.sectionOrder[0])].roots
    var whole: [(Handle, Int, Bool)] = []
    var stack: [PreorderFrame] = []
    f.forEachPreorder(list: root, visibleOnly: false, &stack) { whole.append(($0, $1, $2)) }
    #expect(whole.count == Int(f.cntSum(root)) && whole.count > 1_000)
    var wrong: [Int] = []
    for k in 0...whole.count {
      var from = f.preorderStack(list: root, before: k)
      var rest: [(Handle, Int, Bool)] = []
      f.walkPreorder(&from, visibleOnly: false, limit: Int.max) { rest.append(($0, $1, $2)) }
      let expected = whole[k...]
      if rest.count != expected.count
        || !zip(rest, expected).allSatisfy({ $0.0 == $1.0 && $0.1 == $1.1 && $0.2 == $1.2 })
      {
        wrong.append(k)
      }
    }
    #expect(wrong.isEmpty, "walks that differ from item \(wrong.prefix(5))")
    // A walk stopped after `limit` items goes on from where it stopped.
    stack = f.preorderStack(list: root, before: 0)
    var firstPart: [Handle] = []
    f.walkPreorder(&stack, visibleOnly: false, limit: 700) { x, _, _ in firstPart.append(x) }
    f.walkPreorder(&stack, visibleOnly: false, limit: Int.max) { x, _, _ in firstPart.append(x) }
    #expect(firstPart == whole.map(\.0))
  }

  @Test func rowsCarryWhatARendererNeeds() throws {
    let s = try folded(
      """
      {"op":"appendSections","sections":["S"]}
      {"op":"appendItems","items":[{"id":"p","title":"P","children":["c"]}]}
      {"op":"select","items":["p"]}
      """)
    let rows = try #require(s.rows(inSection: "S"))
    #expect(
      rows == [
        OutlineRow(
          id: "p", parent: nil, level: 0, expanded: false, hasChildren: true, isVisible: true,
          isSelected: true, title: "P", fields: nil),
        OutlineRow(
          id: "c", parent: "p", level: 1, expanded: false, hasChildren: false, isVisible: false,
          isSelected: false, title: nil, fields: nil),
      ])
    #expect(s.rows(inSection: "S", visibleOnly: true)?.map(\.id) == ["p"])
    #expect(s.rows(inSection: "Q") == nil)
  }
}
