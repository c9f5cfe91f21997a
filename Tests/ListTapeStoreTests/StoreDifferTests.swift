import ListTapeInvestigate
import ListTapeModel
import Testing

@testable import ListTapeStore

@Suite struct StoreDifferTests {
  /// Checks the law on one pair: the plan folds without a fault to exactly `new`, without
  /// the blunt fallback; returns the operations.
  @discardableResult
  func check(_ old: ListState, _ new: ListState, _ context: String) throws -> [ListOperation] {
    let plan = SnapshotDiffer.plan(from: old, to: new)
    #expect(!plan.usedFallback, "fallback used: \(context)")
    let folded = try fold(plan.operations, onto: old)
    #expect(folded == new, "fold differs from the target: \(context)")
    #expect(plan.state == new, "planned state differs from the target: \(context)")
    return plan.operations
  }

  /// Unrelated random states over one id pool: everything moves, across parents and
  /// sections, and content, flags and selection all change.
  @Test(arguments: [UInt64(1), 2, 3, 4])
  func randomPairsFoldToTarget(seed: UInt64) throws {
    var g = RandomLists(seed: seed)
    var parked = 0
    var placeheld = 0
    for round in 0..<150 {
      let old = g.state()
      let new = g.state()
      for op in try check(old, new, "seed \(seed) round \(round)") {
        if case .appendSections(let s) = op, s.contains(where: { $0.hasPrefix("listtape.parking") })
        {
          parked += 1
        }
        if case .appendItems(let items, _, _) = op,
          items.contains(where: { $0.id.hasPrefix("listtape.placeholder") })
        {
          placeheld += 1
        }
      }
    }
    // Both detours are exercised, not just possible.
    #expect(parked > 0)
    #expect(placeheld > 0)
  }

  /// A state and a lightly edited copy: the realistic case (few changes in a big list), with
  /// the move count equal to what `Differ` calls moves when no detour (placeholder, parking,
  /// recreated item) was needed.
  @Test(arguments: [UInt64(11), 12, 13, 14])
  func editedPairsFoldToTarget(seed: UInt64) throws {
    var g = RandomLists(seed: seed, itemPool: 60)
    for round in 0..<150 {
      let old = g.state()
      let new = g.edited(old, edits: 1 + g.rng.below(6))
      let ops = try check(old, new, "seed \(seed) round \(round)")
      let detour = ops.contains {
        switch $0 {
        case .appendSections(let s): return s.contains { $0.hasPrefix("listtape.parking") }
        case .appendItems(let items, _, _):
          return items.contains { $0.id.hasPrefix("listtape.placeholder") }
        case .deleteItems(let ids): return ids.contains { new.contains($0) }
        default: return false
        }
      }
      let moves = ops.filter { if case .moveItem = $0 { return true } else { return false } }
      if !detour {
        #expect(
          moves.count == Differ.diff(old, new).moved.count, "seed \(seed) round \(round): \(ops)")
      }
    }
  }

  /// A long chain of snapshots, each planned from the previous one.
  @Test func chainOfSnapshots() throws {
    var g = RandomLists(seed: 99, itemPool: 30)
    var state = ListState()
    for round in 0..<300 {
      let next = round % 7 == 0 ? g.state() : g.edited(state, edits: 1 + g.rng.below(4))
      try check(state, next, "round \(round)")
      state = next
    }
  }

  // MARK: Minimality on simple cases

  static func sample() throws -> ListState {
    var s = ListState()
    try s.appendSections(["main", "other"])
    try s.appendItems(
      [
        OutlineNode("a", title: "A", expanded: true, children: ["a1", "a2", "a3"]),
        OutlineNode("b", children: ["b1"]),
        "c", "d",
      ], toSection: "main")
    try s.appendItems(["x", "y"], toSection: "other")
    return s
  }

  @Test func unchangedGivesNoEvents() throws {
    let s = try Self.sample()
    #expect(SnapshotDiffer.operations(from: s, to: s).isEmpty)
    #expect(SnapshotDiffer.operations(from: ListState(), to: ListState()).isEmpty)
  }

  @Test func oneMoveGivesOneMoveItem() throws {
    let old = try Self.sample()
    var new = old
    try new.moveItem("d", beforeItem: "a")
    #expect(try check(old, new, "sibling move") == [.moveItem("d", .before("a"))])

    var across = old
    try across.moveItem("a3", afterItem: "b1")
    #expect(try check(old, across, "across parents") == [.moveItem("a3", .after("b1"))])

    var sections = old
    try sections.moveItem("x", afterItem: "c")
    #expect(try check(old, sections, "across sections") == [.moveItem("x", .after("c"))])

    var last = old
    try last.moveItem("a1", afterItem: "a3")
    #expect(try check(old, last, "to the end") == [.moveItem("a1", .after("a3"))])
  }

  @Test func singleChangesGiveSingleEvents() throws {
    let old = try Self.sample()
    var s = old
    try s.expand(["b"])
    #expect(try check(old, s, "expand") == [.expand(["b"])])

    s = old
    try s.select(["a2"])
    #expect(try check(old, s, "select") == [.select(["a2"])])

    s = old
    s.deleteItems(["a"])
    #expect(try check(old, s, "delete") == [.deleteItems(["a"])])

    s = old
    try s.insertItems([OutlineNode("n", title: "N", children: ["n1"])], afterItem: "b")
    #expect(
      try check(old, s, "insert")
        == [.insertItems([OutlineNode("n", title: "N", children: ["n1"])], .after("b"))])

    s = old
    try s.moveSection("other", beforeSection: "main")
    #expect(try check(old, s, "section move") == [.moveSection("other", .before("main"))])

    s = old
    try s.updateItem("c", title: "C", fields: ["k": "v"])
    #expect(try check(old, s, "update") == [.update(item: "c", title: "C", fields: ["k": "v"])])

    s = old
    s.deleteSections(["main"])
    #expect(try check(old, s, "section delete") == [.deleteSections(["main"])])
  }

  /// A move into an empty parent and a cleared title take their documented detours and
  /// still land exactly.
  @Test func detours() throws {
    let old = try Self.sample()
    var s = old
    s.deleteItems(["c"])
    try s.appendItems([OutlineNode("c")], toParent: "d")
    // "c" became a new child of "d": a delete and an insert, or a detour; the fold is exact.
    try check(old, s, "into a leaf (rebuilt)")

    var moved = old
    let sub = try #require(moved.sectionSnapshot(for: "main")).snapshot(
      of: "b", includingParent: true)
    moved.deleteItems(["b"])
    try moved.appendItems(sub.nodes, toParent: "d")
    _ = try check(old, moved, "into an empty parent")

    var cleared = old
    let snap = try #require(cleared.sectionSnapshot(for: "main"))
    var nodes = snap.nodes
    nodes[0].title = nil
    try cleared.applyItems(nodes, to: "main")
    let ops = try check(old, cleared, "cleared title with children")
    #expect(ops.contains(.deleteItems(["a"])))
  }
}
