import ListTapeSamples
import Testing

@testable import ListTapeModel

/// Subtrees are built in bulk (pre-order, bottom-up blocks) by events and by the state
/// decoder: the results equal item-by-item builds, and a fault leaves nothing behind.
@Suite struct BulkBuildTests {
  /// A random tree of about `count` nodes with path-like ids (some inline, most in the arena).
  static func tree(_ rng: inout SplitMix64, count: Int, prefix: String) -> [OutlineNode] {
    // Nodes in pre-order with levels, then nested bottom-up.
    var flat: [(OutlineNode, Int)] = []
    var level = 0
    for i in 0..<count {
      level = i == 0 ? 0 : max(0, min(level + 1, level - rng.int(3) + 1))
      let id = rng.chance(20) ? "\(prefix)\(i)" : "library/\(prefix)/group-\(i / 50)/item-\(i)"
      var n = OutlineNode(id, expanded: rng.chance(50))
      if rng.chance(10) { n.title = "Title \(i)" }
      if rng.chance(5) { n.fields = ["k": "v\(i)"] }
      flat.append((n, level))
    }
    var open: [(OutlineNode, [OutlineNode])] = []
    var tops: [OutlineNode] = []
    func closeLast() {
      var (n, kids) = open.removeLast()
      n.children = kids
      if open.isEmpty { tops.append(n) } else { open[open.count - 1].1.append(n) }
    }
    for (n, l) in flat {
      while open.count > l { closeLast() }
      open.append((n, []))
    }
    while !open.isEmpty { closeLast() }
    return tops
  }

  @Test(arguments: [1, 2, 3] as [UInt64])
  func aBulkAppendEqualsOneAppendPerItem(seed: UInt64) throws {
    var rng = SplitMix64(seed: seed)
    let nodes = Self.tree(&rng, count: 2_000, prefix: "t")
    var bulk = ListState()
    try bulk.appendSections(["S"])
    try bulk.appendItems([OutlineNode("root")], toSection: "S")
    var single = bulk
    try bulk.appendItems(nodes, toParent: "root")
    // The same items one event each, parents first.
    var stack: [(OutlineNode, String)] = nodes.reversed().map { ($0, "root") }
    while let (n, parent) = stack.popLast() {
      var bare = n
      bare.children = []
      try single.appendItems([bare], toParent: parent)
      stack += n.children.reversed().map { ($0, n.id) }
    }
    #expect(bulk == single)
    #expect(bulk.encoded() == single.encoded())
    #expect(invariantViolations(bulk).isEmpty)
    let decoded = try ListState(encoded: bulk.encoded())
    #expect(decoded == bulk)
    #expect(invariantViolations(decoded).isEmpty)
    #expect(decoded.sectionSnapshot(for: "S")?.nodes == [OutlineNode("root", children: nodes)])
  }

  @Test func aFaultingBuildLeavesNothingAndItsNodesAreReused() throws {
    var rng = SplitMix64(seed: 9)
    var s = ListState()
    try s.appendSections(["S"])
    try s.appendItems(Self.tree(&rng, count: 300, prefix: "old"), toSection: "S")
    // A big subtree whose last node repeats an existing id.
    var nodes = Self.tree(&rng, count: 500, prefix: "new")
    let existing = try #require(s.allItems(inSection: "S")?.last)
    nodes.append(OutlineNode(existing))
    let before = s
    let text = s.forest.text.count - s.forest.textGarbage
    #expect(throws: ListFault.duplicateItem(existing)) { try s.appendItems(nodes, toSection: "S") }
    #expect(s == before)
    #expect(invariantViolations(s).isEmpty)
    #expect(s.forest.text.count - s.forest.textGarbage == text)
    let grown = s.forest.nodes.count
    // Failing again and again grows nothing; a good build takes the freed nodes.
    for _ in 0..<20 {
      #expect(throws: ListFault.duplicateItem(existing)) {
        try s.appendItems(nodes, toSection: "S")
      }
    }
    #expect(s.forest.nodes.count == grown)
    try s.appendItems(Array(nodes.dropLast()), toSection: "S")
    #expect(s.forest.nodes.count == grown)
    #expect(invariantViolations(s).isEmpty)
  }

  @Test func replacingWithReusedIdsThenFaultingGivesTheIdsBack() throws {
    var s = try folded(
      """
      {"op":"appendSections","sections":["S"]}
      {"op":"appendItems","section":"S","items":[{"id":"p","expanded":true,"children":["a-long-identifier-one",{"id":"a-long-identifier-two","expanded":true,"children":["c"]}]},"q"]}
      {"op":"configure","multipleSelection":true}
      {"op":"select","items":["a-long-identifier-two","c"]}
      """)
    // The dropped ids are taken over, then the event faults on "q": all of them must be the
    // old items' again.
    try expectFault(
      &s,
      #"{"op":"replaceChildren","parent":"p","items":["a-long-identifier-two","a-long-identifier-one","c","q"]}"#,
      .duplicateItem("q"))
    #expect(s.children(of: "a-long-identifier-two") == ["c"])
    #expect(s.selectedItems == ["a-long-identifier-two", "c"])
    try expectFault(
      &s,
      #"{"op":"applySectionSnapshot","section":"S","items":["c","q",{"id":"p","children":["c"]}]}"#,
      .repeatedItem("c"))
    #expect(s.parent(of: "c") == .some("a-long-identifier-two"))
    // Inside a batch the batch's rollback does the same.
    try expectFault(
      &s,
      #"{"op":"batch","events":[{"op":"replaceChildren","parent":"p","items":["c",{"id":"a-long-identifier-one","children":["p"]}]}]}"#,
      .inBatch(index: 0, op: "replaceChildren", fault: .duplicateItem("p")))
    // And when it works, reattached ids keep their selection where visible.
    try s.run(
      #"{"op":"replaceChildren","parent":"p","items":[{"id":"a-long-identifier-two","expanded":true,"children":["c"]}]}"#
    )
    #expect(s.selectedItems == ["a-long-identifier-two", "c"])
    #expect(s.allItems(inSection: "S") == ["p", "a-long-identifier-two", "c", "q"])
    #expect(invariantViolations(s).isEmpty)
  }

  @Test func theStateBuilderRefusesWhatNoFoldMakes() throws {
    func build(_ items: [(Int, String, selected: Bool)], multiple: Bool = false) -> String {
      var b = ListStateBuilder(allowsMultipleSelection: multiple)
      do {
        try b.beginSection("S")
        for (level, id, selected) in items {
          var id = id
          _ = try id.withUTF8 {
            try b.appendItem(
              level: level, id: $0, expanded: false, selected: selected, title: nil, fields: nil)
          }
        }
        return "\(try b.finish().numberOfAllItems) items"
      } catch {
        return "\(error)"
      }
    }
    #expect(build([(0, "a", false), (1, "b", false), (0, "c", false)]) == "3 items")
    #expect(
      build([(0, "a", false), (2, "b", false)]) == "item level 2 skips a level (previous depth 1)")
    #expect(build([(1, "a", false)]) == "item level 1 skips a level (previous depth 0)")
    #expect(build([(0, "a", false), (0, "a", false)]) == "duplicate item \"a\"")
    #expect(build([(0, "", false)]) == "empty identifier")
    #expect(build([(0, "a", false), (1, "b", true)]) == "selected item \"b\" is hidden")
    #expect(build([(0, "a", true), (0, "b", true)]) == "2 items selected in single-selection mode")
    #expect(build([(0, "a", true), (0, "b", true)], multiple: true) == "2 items")
    var b = ListStateBuilder(allowsMultipleSelection: false)
    #expect(throws: ListStateBuilder.Failure.itemOutsideSection) {
      try b.appendItem(
        level: 0, id: UnsafeBufferPointer(start: nil, count: 0), expanded: false, selected: false,
        title: nil, fields: nil)
    }
    try b.beginSection("S")
    #expect(throws: ListStateBuilder.Failure.duplicateSection("S")) { try b.beginSection("S") }
    let invalid: [UInt8] = [0x61, 0xC3]
    #expect(throws: ListStateBuilder.Failure.invalidUTF8) {
      try invalid.withUnsafeBufferPointer {
        try b.appendItem(
          level: 0, id: $0, expanded: false, selected: false, title: nil, fields: nil)
      }
    }
  }
}

/// A big build or batch of definitions grows its arrays once, with room for as many again,
/// instead of doubling its way there (each doubling a copy and fresh pages to fault in).
@Suite struct BigBuildRoomTests {
  @Test func aBigBuildGrowsTheNodeArraysOnceWithRoomForAsMany() throws {
    var rng = SplitMix64(seed: 4)
    var s = ListState()
    try s.appendSections(["S"])
    try s.appendItems(BulkBuildTests.tree(&rng, count: 20_000, prefix: "big"), toSection: "S")
    // Appends one at a time stop doubling at 32,768 for 20,000 nodes.
    #expect(s.forest.nodes.capacity >= 40_000)
    #expect(s.forest.entryOf.capacity >= 40_000)
    #expect(s.forest.content.capacity >= 40_000)
    #expect(s.forest.handleOf.capacity >= 40_000)
    #expect(invariantViolations(s).isEmpty)
    // Small builds after it take the room: no node array moves.
    let room = s.forest.nodes.capacity
    for i in 0..<100 {
      try s.appendItems(
        [OutlineNode("after-\(i)", children: [OutlineNode("kid-\(i)")])], toSection: "S")
    }
    #expect(s.forest.nodes.capacity == room)
    #expect(invariantViolations(s).isEmpty)
  }

  @Test func aBigBatchOfDefinitionsGrowsTheTableOnceWithRoomForAsMany() {
    var space = IdSpace()
    _ = space.append("a")
    _ = space.append("b")
    space.buildTable()
    let from = space.count
    for i in 0..<20_000 {
      var form: [UInt8] = []
      IdText.store("id-\(i)", into: &form)
      form.withUnsafeBytes { space.appendUnindexed(stored: $0) }
    }
    var told = 0
    space.indexAppended(from: from) { e, first in
      if e == first { told += 1 }
    }
    #expect(told == 20_000)
    // 20,002 entries at most half full fit in 65,536 slots (where doubling stops); room for
    // as many again takes 131,072.
    let table = space.heldBytes - space.bytes.capacity - space.ends.capacity * 4
    #expect(table >= 131_072 * 8)
    #expect(space.entry(of: "id-19999") == Int32(from + 19_999))
  }
}
