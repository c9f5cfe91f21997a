import Testing

@testable import ListTapeModel

/// Protocol section 5: 256 levels (0...255). Every op that nests faults, changing nothing,
/// when it would leave an item deeper: nested `appendItems`, `insertItems`, `moveItem`,
/// `replaceChildren`, `applySectionSnapshot`, nested children in nodes, inside batches too.
@Suite struct NestingLimitTests {
  /// `p0 > p1 > … > p(n-1)` with the given prefix, one item per level.
  static func chain(_ n: Int, _ prefix: String) -> OutlineNode {
    DeepOutlineTests.chain(n, prefix: prefix)
  }

  /// Section S: a chain c0…c255 reaching level 255, a chain m0…m(n-1) beside it, and a root `r`.
  static func state(movable: Int = 3) throws -> ListState {
    var s = ListState()
    try s.appendSections(["S", "T"])
    try s.appendItems([Self.chain(256, "c"), Self.chain(movable, "m"), "r"], toSection: "S")
    #expect(s.level(of: "c255") == 255)
    #expect(invariantViolations(s).isEmpty)
    return s
  }

  /// Applies `op` (not through JSON, whose nesting stops at 512), expects exactly `fault`,
  /// and checks that nothing changed.
  static func expectFault(
    _ s: inout ListState, _ op: ListOperation, _ fault: ListFault,
    sourceLocation: SourceLocation = #_sourceLocation
  ) {
    let before = s
    let bytes = s.encoded()
    #expect(throws: fault, sourceLocation: sourceLocation) { try s.apply(Event(op)) }
    #expect(s == before, sourceLocation: sourceLocation)
    #expect(s.encoded() == bytes, sourceLocation: sourceLocation)
    #expect(invariantViolations(s).isEmpty, sourceLocation: sourceLocation)
  }

  @Test func appendItemsNestsDownToLevel255() throws {
    var s = try Self.state()
    // Under the deepest item: one level more is too many.
    Self.expectFault(
      &s, .appendItems(["x"], section: nil, parent: "c255"),
      .tooDeep(item: "x", level: 256))
    // Nested children count too: the first node past the limit is named.
    Self.expectFault(
      &s, .appendItems([Self.chain(3, "x")], section: nil, parent: "c253"),
      .tooDeep(item: "x2", level: 256))
    Self.expectFault(
      &s, .appendItems([Self.chain(257, "x")], section: "T", parent: nil),
      .tooDeep(item: "x256", level: 256))
    // Exactly to the limit is fine.
    try s.apply(Event(.appendItems([Self.chain(2, "y")], section: nil, parent: "c253")))
    try s.apply(Event(.appendItems([Self.chain(256, "z")], section: "T", parent: nil)))
    #expect(s.level(of: "y1") == 255)
    #expect(s.level(of: "z255") == 255)
    #expect(invariantViolations(s).isEmpty)
  }

  @Test func theDepthFaultComesInPreOrderWithTheIdFaults() throws {
    var s = try Self.state()
    // A repeated id before the node past the limit: the repeat is reported.
    let repeated = OutlineNode("a", children: ["a", Self.chain(3, "x")])
    Self.expectFault(
      &s, (.appendItems([repeated], section: nil, parent: "c253")), .repeatedItem("a"))
    // The node past the limit before an existing id: the depth is reported.
    let deep = OutlineNode("a", children: [Self.chain(3, "x"), "r"])
    Self.expectFault(
      &s, .appendItems([deep], section: nil, parent: "c252"),
      .tooDeep(item: "x2", level: 256))
  }

  @Test func insertItemsTakesTheAnchorsLevel() throws {
    var s = try Self.state()
    Self.expectFault(
      &s, .insertItems([Self.chain(2, "x")], .after("c255")),
      .tooDeep(item: "x1", level: 256))
    Self.expectFault(
      &s, .insertItems(["a", Self.chain(3, "x")], .before("c254")),
      .tooDeep(item: "x2", level: 256))
    try s.apply(Event(.insertItems(["x"], .before("c255"))))
    #expect(s.level(of: "x") == 255)
    #expect(s.children(of: "c254") == ["x", "c255"])
  }

  @Test func moveItemCountsTheWholeSubtree() throws {
    var s = try Self.state(movable: 3)
    // m0 > m1 > m2 is two levels tall: next to c253 its bottom would be at 255, next to c254 at 256.
    Self.expectFault(
      &s, (.moveItem("m0", .after("c254"))), .tooDeep(item: "m0", level: 256))
    Self.expectFault(
      &s, (.moveItem("m0", .before("c255"))), .tooDeep(item: "m0", level: 257))
    try s.apply(Event(.moveItem("m0", .before("c253"))))
    #expect(s.level(of: "m2") == 255)
    #expect(invariantViolations(s).isEmpty)
    // A leaf may go anywhere; the subtree comes back up.
    try s.apply(Event(.moveItem("r", .after("c255"))))
    try s.apply(Event(.moveItem("m0", .before("c0"))))
    #expect(s.level(of: "r") == 255)
    #expect(s.level(of: "m2") == 2)
    #expect(invariantViolations(s).isEmpty)
  }

  /// Heights follow every edit, so a move's check stays right after the subtree changed.
  @Test func moveItemSeesTheSubtreeAsItIsNow() throws {
    var s = try Self.state(movable: 1)
    try s.apply(Event(.moveItem("m0", .after("c255"))))
    Self.expectFault(
      &s, .appendItems(["m1"], section: nil, parent: "m0"),
      .tooDeep(item: "m1", level: 256))
    try s.apply(Event(.moveItem("m0", .after("c0"))))
    try s.apply(Event(.appendItems([Self.chain(10, "k")], section: nil, parent: "m0")))
    // m0's subtree is ten levels below it now: to level 245 at most.
    Self.expectFault(
      &s, (.moveItem("m0", .after("c246"))), .tooDeep(item: "m0", level: 256))
    try s.apply(Event(.moveItem("m0", .after("c245"))))
    #expect(s.level(of: "k9") == 255)
    // Dropping the deep part makes it movable again.
    s.deleteItems(["k5"])
    try s.apply(Event(.moveItem("m0", .after("c250"))))
    #expect(s.level(of: "k4") == 255)
    try s.replaceChildren(of: "m0", with: [])
    try s.apply(Event(.moveItem("m0", .after("c255"))))
    #expect(invariantViolations(s).isEmpty)
  }

  @Test func replaceChildrenNestsBelowTheParent() throws {
    var s = try Self.state()
    Self.expectFault(
      &s, .replaceChildren(parent: "c254", items: [Self.chain(2, "x")]),
      .tooDeep(item: "x1", level: 256))
    // The children it drops may come back, but not deeper than the limit.
    let deeper = OutlineNode("c254", children: [OutlineNode("c255", children: ["x"])])
    Self.expectFault(
      &s, .replaceChildren(parent: "c253", items: [deeper]),
      .tooDeep(item: "x", level: 256))
    try s.apply(Event(.replaceChildren(parent: "c253", items: ["c255", "c254"])))
    #expect(s.children(of: "c253") == ["c255", "c254"])
    #expect(s.level(of: "c255") == 254)
    #expect(invariantViolations(s).isEmpty)
  }

  @Test func applySectionSnapshotNestsFromTheTop() throws {
    var s = try Self.state()
    Self.expectFault(
      &s, .applySectionSnapshot(section: "T", items: [Self.chain(257, "x")]),
      .tooDeep(item: "x256", level: 256))
    // Reusing the section's own ids keeps the check.
    Self.expectFault(
      &s,
      .applySectionSnapshot(
        section: "S", items: [OutlineNode("r", children: [Self.chain(256, "c")])]),
      .tooDeep(item: "c255", level: 256))
    try s.apply(Event(.applySectionSnapshot(section: "S", items: [Self.chain(256, "c")])))
    #expect(s.numberOfAllItems == 256)
    #expect(invariantViolations(s).isEmpty)
  }

  @Test func aBatchWithAnEventPastTheLimitAppliesNothing() throws {
    var s = try Self.state()
    let batch = ListOperation.batch([
      Event(.appendItems(["fine"], section: "T", parent: nil)),
      Event(.batch([Event(.moveItem("m0", .after("c255")))])),
    ])
    Self.expectFault(
      &s, batch,
      .inBatch(
        index: 1, op: "batch",
        fault: .inBatch(index: 0, op: "moveItem", fault: .tooDeep(item: "m0", level: 257))))
    #expect(!s.contains("fine"))
  }

  /// A standalone outline drops what lies below level 255 instead of faulting.
  @Test func sectionSnapshotsKeepTheirFirst256Levels() throws {
    let snapshot = SectionSnapshot(nodes: [Self.chain(300, "d"), "other"])
    #expect(snapshot.items.count == 257)
    #expect(snapshot.contains("d255") && !snapshot.contains("d256"))
    #expect(snapshot.rootItems == ["d0", "other"])
    var edited = snapshot
    #expect(throws: ListFault.tooDeep(item: "x", level: 256)) {
      try edited.append(["x"], to: "d255")
    }
    #expect(edited == snapshot)
  }

  /// A checkpoint can hold no item past level 255 either.
  @Test func theStateCodecRefusesLevelsPastTheLimit() throws {
    var bytes: [UInt8] = [1, 0, 1, 1, UInt8(ascii: "S")]
    bytes += [0x81, 0x02]  // 257 items
    for i in 0..<257 {
      let id = Array("d\(i)".utf8)
      bytes += i < 128 ? [UInt8(i)] : [UInt8(i & 0x7F) | 0x80, UInt8(i >> 7)]
      bytes += [1, UInt8(id.count)] + id
    }
    #expect(throws: CodecError.self) { try ListState(encoded: bytes) }
    do {
      _ = try ListState(encoded: bytes)
    } catch {
      #expect(error.message == "item level 256 is past the deepest level (255)")
    }
  }
}
