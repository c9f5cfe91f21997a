import ListTapeModel
import ListTapeSamples
import Testing

@testable import ListTapeInvestigate
@testable import ListTapeStore

/// The diff built from the events between two states must read exactly as the diff of the
/// two whole states, and must not read the whole list to get there.
@Suite struct IncrementalDiffTests {
  /// The two diffs agree in every field and row, the whole one folded as the fast one is.
  static func expectSame(
    _ a: ListState, _ b: ListState, _ touched: TouchedItems, _ what: String
  ) {
    let full = Differ.diff(a, b)
    for context in [0, 1, 2, 3] {
      let fast = Differ.diff(a, b, touched: touched, context: context)
      #expect(fast == full.foldingUnchanged(longerThan: context), "\(what) context \(context)")
      #expect(fast.changeCount == full.changeCount, "\(what)")
    }
  }

  /// The diff of `event` read ahead of it (`DiffBefore`, the event then applied to the
  /// state in place) reads as the whole diff, and as the words' diff without whole lists.
  /// Returns whether the event was read ahead.
  @discardableResult
  static func expectSameReadAhead(_ state: ListState, _ event: Event, _ what: String) -> Bool {
    var touched = TouchedItems(limit: max(1_024, state.numberOfAllItems / 4))
    touched.note(event, before: state)
    var next = state
    let faulted = (try? next.apply(event)) == nil
    let full = Differ.diff(state, next)
    let words = Differ.diff(state, next, touched: touched, context: 2, selectionLists: false)
    for lists in [true, false] {
      guard let before = DiffBefore(state, event: event, touched: touched, selectionLists: lists)
      else {
        // Only an event that may move an item already there is not read ahead.
        #expect(!touched.ids.allSatisfy { !touched.mayMove($0) || !state.contains($0) }, "\(what)")
        return false
      }
      for context in [0, 2] {
        guard
          let ahead = Differ.diff(
            before, next, touched: touched, context: context, selectionLists: lists)
        else {
          // Only a delete or a move that faulted asks for a list not read ahead.
          #expect(faulted, "\(what): read ahead, the diff must answer")
          return false
        }
        #expect(
          ahead == (lists ? full.foldingUnchanged(longerThan: context) : words)
            || (!lists && context != 2), "\(what) context \(context) lists \(lists)")
      }
    }
    return true
  }

  @Test(arguments: [1, 2, 3, 4, 5, 6] as [UInt64])
  func readingTheStateBeforeAheadOfTheEventAgreesOnEveryEvent(seed: UInt64) {
    var events: [Event] = []
    SampleSession.generate(events: 800, seed: seed, maxItems: 300) { events.append($0) }
    var s = ListState()
    var readAhead = 0
    for (i, e) in events.enumerated() {
      if Self.expectSameReadAhead(s, e, "event \(i + 1) (\(e.op)) seed \(seed)") {
        readAhead += 1
      }
      try? s.apply(e)
    }
    // All but batches, replaces and what faults: most events (~80 % of these sessions).
    #expect(readAhead > events.count * 3 / 4, "\(readAhead) of \(events.count) read ahead")
  }

  @Test(arguments: [1, 2, 3, 4] as [UInt64])
  func agreesWithTheWholeDiffOnGeneratedSessions(seed: UInt64) {
    var events: [Event] = []
    SampleSession.generate(events: 1_500, seed: seed, maxItems: 400) { events.append($0) }
    var states = [ListState()]
    var s = ListState()
    for e in events {
      try? s.apply(e)
      states.append(s)
    }
    var rng = SplitMix64(seed: seed)
    for _ in 0..<60 {
      let from = rng.below(events.count + 1)
      let span = [0, 1, 1, 2, 3, 8, 40, 300][rng.below(8)]
      let to = min(events.count, from + span)
      var touched = TouchedItems()
      var b = states[from]
      for e in events[from..<to] {
        touched.note(e, before: b)
        try? b.apply(e)
      }
      Self.expectSame(states[from], states[to], touched, "\(from)→\(to) seed \(seed)")
      // The same touched items serve the diff backwards.
      Self.expectSame(states[to], states[from], touched, "\(to)→\(from) seed \(seed)")
    }
  }

  @Test func handmadeMovesBatchesAndSections() throws {
    let base: [Event] = [
      Event(.appendSections(["s", "t"])),
      Event(
        .appendItems(
          [
            OutlineNode("a", children: ["a1", "a2", OutlineNode("a3", children: ["a31"])]),
            "b", "c", OutlineNode("d", children: ["d1"]), "e",
          ], section: "s", parent: nil)),
      Event(.appendItems(["x", "y"], section: "t", parent: nil)),
      Event(.configure(multipleSelection: true)),
      Event(.expand(["a", "d"])),
      Event(.select(["a1", "b", "x"])),
    ]
    var start = ListState()
    for e in base { try? start.apply(e) }
    let scenarios: [[Event]] = [
      [Event(.moveItem("e", .before("a")))],
      // One move where the fewest moves may name an untouched neighbour.
      [Event(.moveItem("a", .after("b")))],
      [Event(.moveItem("c", .before("b")))],
      [Event(.moveItem("a1", .after("a2")))],
      [Event(.moveItem("a", .after("e"))), Event(.moveItem("b", .after("a")))],
      // Swap two items around an untouched one: the untouched one is reported moved.
      [Event(.moveItem("b", .after("d"))), Event(.moveItem("d", .before("c")))],
      [Event(.moveItem("a2", .after("x")))],
      [Event(.deleteItems(["a"])), Event(.appendItems(["a"], section: "t", parent: nil))],
      [
        Event(
          .batch([
            Event(.moveItem("a31", .after("d1"))), Event(.deleteItems(["d"])),
            Event(.appendItems(["d"], section: "s", parent: nil)),
          ]))
      ],
      [Event(.replaceChildren(parent: "a", items: ["a3", "a1", "new"]))],
      [Event(.applySectionSnapshot(section: "t", items: [OutlineNode("y", children: ["x"])]))],
      [Event(.deleteSections(["s"]))],
      [Event(.moveSection("t", .before("s"))), Event(.collapse(["a"]))],
      [Event(.deleteAllItems), Event(.appendItems(["b"], section: "t", parent: nil))],
      [Event(.update(item: "c", title: "C", fields: ["k": "v"])), Event(.deselect(nil))],
      [Event(.configure(multipleSelection: false))],
      [Event(.insertItems(["n1", "n2"], .after("b"))), Event(.insertItems(["n0"], .before("a")))],
      // A batch that faults changes nothing.
      [Event(.batch([Event(.deleteItems(["b"])), Event(.expand(["nope"]))]))],
    ]
    for (i, events) in scenarios.enumerated() {
      var touched = TouchedItems()
      var end = start
      for e in events {
        touched.note(e, before: end)
        try? end.apply(e)
      }
      Self.expectSame(start, end, touched, "scenario \(i)")
      if events.count == 1 { Self.expectSameReadAhead(start, events[0], "scenario \(i)") }
      #expect(
        Differ.diff(start, applying: events)
          == Differ.diff(start, end).foldingUnchanged(longerThan: 2), "scenario \(i)")
    }
  }

  @Test func timelineDiffMatchesStatesAtBothPoints() throws {
    var events: [Event] = []
    SampleSession.generate(events: 3_000, seed: 5, maxItems: 500) { events.append($0) }
    let (timeline, _) = try record(events, "diff")
    for (from, to) in [(0, 1), (1_000, 1_001), (2_999, 3_000), (1_500, 700), (10, 2_900), (7, 7)] {
      let expected = Differ.diff(try timeline.state(at: from), try timeline.state(at: to))
      let fast = try Differ.diff(timeline, from: from, to: to, context: 2)
      #expect(fast == expected.foldingUnchanged(longerThan: 2), "\(from)→\(to)")
    }
  }

  /// Adjacent diffs find ids by scanning unless an event names many: both ways must give
  /// the whole comparison's answer, the way back through the id table included.
  @Test func adjacentDiffsOfEventsNamingFewOrManyIdsMatchTheStates() throws {
    let many = (0..<40).map { "item-\($0)" }
    var events: [Event] = [
      Event(.configure(multipleSelection: true)),
      Event(.appendSections(["s"])),
      Event(
        .appendItems(
          [OutlineNode("p", children: many.map { OutlineNode($0) })], section: nil, parent: nil)),
      Event(.expand(["p"])),
      Event(.select(Array(many.prefix(20)))),
      Event(.collapse(["p"])),
      Event(.expand(["p"])),
      Event(.select(["item-3"])),
      Event(.deleteItems(Array(many.suffix(18)))),
      Event(.batch(many.prefix(20).map { Event(.update(item: $0, title: "t", fields: nil)) })),
      Event(.moveItem("item-1", .after("item-5"))),
    ]
    SampleSession.generate(events: 300, seed: 8, maxItems: 200) { events.append($0) }
    let (timeline, _) = try record(events, "few-or-many")
    for from in 0..<(events.count - 1) {
      for to in [from + 1, min(from + 9, events.count)] {
        let expected = Differ.diff(try timeline.state(at: from), try timeline.state(at: to))
        let fast = try Differ.diff(timeline, from: from, to: to, context: 2)
        #expect(fast == expected.foldingUnchanged(longerThan: 2), "\(from)→\(to)")
      }
    }
  }

  /// A move to another list and a delete are read ahead without sibling lists; when such a
  /// move faults (into its own subtree) the diff asks for a list it did not read, and the
  /// timeline seeks the state before again: every adjacent diff still reads as the states.
  @Test func aMoveThatFaultsAfterBeingReadAheadSeeksTheStateBeforeAgain() throws {
    let events: [Event] = [
      Event(.appendSections(["s"])),
      Event(
        .appendItems(
          [OutlineNode("p", children: ["c1", "c2"]), "q", "r"], section: nil, parent: nil)),
      Event(.expand(["p"])),
      Event(.moveItem("p", .after("c1"))),  // into its own subtree: a fault
      Event(.moveItem("q", .after("c2"))),  // to another list
      Event(.deleteItems(["r", "nope"])),  // names an absent id: kept whole
      Event(.deleteItems(["c1"])),
      Event(.moveItem("c2", .before("q"))),  // within its list
      Event(.batch([Event(.moveItem("q", .after("p"))), Event(.deleteItems(["c2"]))])),
    ]
    var states = [ListState()]
    var faults: [Int] = []
    for (i, e) in events.enumerated() {
      var s = states[i]
      if (try? s.apply(e)) == nil { faults.append(i + 1) }
      states.append(s)
    }
    #expect(faults == [4])
    // Read ahead, the faulting move cannot answer: the caller compares the states.
    var touched = TouchedItems()
    touched.note(events[3], before: states[3])
    let before = try #require(
      DiffBefore(states[3], event: events[3], touched: touched, selectionLists: true))
    #expect(Differ.diff(before, states[4], touched: touched) == nil)
    let (timeline, _) = try record(events, "read-ahead-faults")
    for from in 0..<events.count {
      let expected = Differ.diff(states[from], states[from + 1])
      for lists in [true, false] {
        let fast = try Differ.diff(
          timeline, from: from, to: from + 1, context: 2, selectionLists: lists)
        if lists {
          #expect(fast == expected.foldingUnchanged(longerThan: 2), "\(from)→\(from + 1)")
        } else {
          #expect(fast.changeCount == expected.changeCount, "\(from)→\(from + 1)")
        }
      }
    }
  }

  @Test func anAdjacentDiffReadsAFewItemsOfALargeList() throws {
    var events: [Event] = []
    SampleSession.generate(
      events: 2_300, seed: 3, maxItems: 25_000, opening: .outline(items: 20_000, shape: .uuid)
    ) { events.append($0) }
    var state = ListState()
    for e in events.prefix(2_000) { try? state.apply(e) }
    #expect(state.numberOfAllItems >= 20_000)
    var worst = 0
    for (i, e) in events[2_000..<2_200].enumerated() {
      var touched = TouchedItems()
      touched.note(e, before: state)
      var next = state
      try? next.apply(e)
      let (fast, examined) = Differ.incremental(state, next, touched: touched, context: 2)
      // The whole comparison is slow in a debug build: check a few of them.
      if i % 100 == 0 {
        #expect(fast == Differ.diff(state, next).foldingUnchanged(longerThan: 2))
      }
      worst = max(worst, examined)
      state = next
    }
    // Sibling lists of a few hundred items at most, never the 20,000-item list.
    #expect(worst < 3_000, "read \(worst) items for one event")
  }

  /// An expand, select or update of an item in a long root list reads none of its
  /// siblings (the page's diff of such a step read a 46,841-item list); a move there still
  /// compares the list in order, and every diff reads as the whole one.
  @Test func flagAndContentEditsInALongListReadNoSiblings() throws {
    var state = ListState()
    try state.apply(Event(.configure(multipleSelection: true)))
    try state.apply(Event(.appendSections(["s"])))
    let roots = (0..<6_000).map { "root-\($0)" }
    try state.apply(Event(.appendItems(roots.map { OutlineNode($0) }, section: "s", parent: nil)))
    try state.apply(Event(.appendItems(["child-a", "child-b"], section: nil, parent: "root-7")))
    try state.apply(Event(.expand(["root-7"])))
    try state.apply(Event(.select(["child-b"])))
    let still: [Event] = [
      Event(.expand(["root-8"])), Event(.select(["root-9", "root-4000"])),
      Event(.update(item: "root-12", title: "twelve", fields: ["k": "v"])),
      Event(.reconfigureItems(["root-13"])), Event(.reloadItems(["root-14"])),
      Event(.deselect(["root-9"])), Event(.collapse(["root-7"])),
      Event(.batch([Event(.expand(["root-7"])), Event(.select(["child-a"]))])),
    ]
    let moving: [Event] = [
      Event(.moveItem("root-3", .after("root-5000"))),
      Event(
        .batch([
          Event(.deleteItems(["root-20"])),
          Event(.appendItems(["root-20"], section: "s", parent: nil)),
        ])),
      Event(.batch([Event(.expand(["root-30"])), Event(.moveItem("root-30", .before("root-0")))])),
    ]
    for (k, e) in (still + moving).enumerated() {
      var touched = TouchedItems()
      touched.note(e, before: state)
      var next = state
      try next.apply(e)
      Self.expectSame(state, next, touched, "event \(k) (\(e.op))")
      Self.expectSameReadAhead(state, e, "event \(k) (\(e.op))")
      let (_, examined) = Differ.incremental(state, next, touched: touched, context: 2)
      if k < still.count {
        #expect(examined < 100, "event \(k) (\(e.op)) read \(examined) items")
      } else {
        #expect(examined >= 6_000, "event \(k) (\(e.op)) compares the list in order")
      }
      state = next
    }
  }

  /// A change in a long selection: the diff built for the page's words (no whole lists)
  /// tells the same items added and removed, in display order, and the same counts.
  @Test func aLongSelectionIsToldByWhatChangedWithoutListingIt() throws {
    var state = ListState()
    try state.apply(Event(.configure(multipleSelection: true)))
    try state.apply(Event(.appendSections(["s", "t"])))
    let roots = (0..<40).map { "r\($0)" }
    try state.apply(Event(.appendItems(roots.map { OutlineNode($0) }, section: "s", parent: nil)))
    try state.apply(Event(.appendItems(["u0", "u1"], section: "t", parent: nil)))
    try state.apply(Event(.appendItems(["c0", "c1", "c2"], section: nil, parent: "r5")))
    try state.apply(Event(.expand(["r5"])))
    try state.apply(Event(.select(Array(roots.prefix(30)) + ["c1", "c2", "u1"])))
    let events: [Event] = [
      Event(.select(["r35", "u0", "r31"])), Event(.deselect(["r3", "u1"])),
      Event(.collapse(["r5"])), Event(.deleteItems(["r7", "r8"])),
      Event(.batch([Event(.select(["r39"])), Event(.deselect(["r0"]))])),
      Event(.moveItem("r9", .after("r39"))), Event(.deselect(nil)),
    ]
    for (k, e) in events.enumerated() {
      var touched = TouchedItems()
      touched.note(e, before: state)
      var next = state
      try next.apply(e)
      Self.expectSame(state, next, touched, "event \(k) (\(e.op))")
      Self.expectSameReadAhead(state, e, "event \(k) (\(e.op))")
      let full = Differ.diff(state, next)
      let words = Differ.diff(state, next, touched: touched, context: 2, selectionLists: false)
      #expect(words.selectionChanged == full.selectionChanged, "event \(k)")
      #expect(words.selectionAdded == full.selectionAdded, "event \(k)")
      #expect(words.selectionRemoved == full.selectionRemoved, "event \(k)")
      #expect(words.selectedCountBefore == full.selectedCountBefore, "event \(k)")
      #expect(words.selectedCountAfter == full.selectedCountAfter, "event \(k)")
      #expect(words.selectionBefore.isEmpty && words.selectionAfter.isEmpty, "event \(k)")
      #expect(full.selectionChanged == (k != 5), "event \(k)")
      state = next
    }
  }

  @Test func foldingCountsLongRunsAndKeepsShortOnes() throws {
    var a = ListState()
    try a.apply(Event(.appendSections(["s", "t"])))
    try a.apply(Event(.appendItems(["a", "b", "c", "d", "e", "f"], section: "s", parent: nil)))
    try a.apply(Event(.appendItems(["x", "y"], section: "t", parent: nil)))
    var b = a
    try b.apply(Event(.update(item: "e", title: "E", fields: nil)))
    let full = Differ.diff(a, b)
    #expect(full.rows.map(\.id) == ["a", "b", "c", "d", "e", "f", "x", "y"])
    let folded = full.foldingUnchanged(longerThan: 2)
    // a-d: four unchanged, counted; f and the two of section t: listed.
    #expect(
      folded.rows == [
        DiffRow(section: "s", unchangedRun: 4), full.rows[4], full.rows[5], full.rows[6],
        full.rows[7],
      ])
    #expect(folded.foldingUnchanged(longerThan: 2) == folded)
    // A counted run stays counted when folded again with a longer context.
    #expect(folded.foldingUnchanged(longerThan: 10).rows == folded.rows)
    #expect(full.foldingUnchanged(longerThan: 10) == full)
    #expect(full.foldingUnchanged(longerThan: 0).rows.map(\.unchangedRun) == [4, 0, 1, 2])
  }
}
