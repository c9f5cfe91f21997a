import Foundation
import ListTapeModel
import ListTapeRead
import ListTapeSamples
import Testing

@testable import ListTapeInvestigate
@testable import ListTapeStore

/// A fresh temporary path for a log, removed by the caller.
func temporaryLogPath() -> String {
  let dir = FileManager.default.temporaryDirectory.appendingPathComponent(
    "listtape-tests-\(UUID().uuidString)")
  try? FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
  return dir.appendingPathComponent("log.ltape").path
}

/// Records `events` into a fresh log with a checkpoint every `checkpointEvery` events (tight
/// by default), and a dictionary restart once dead ids outnumber live ones by
/// `restartSlack` when given, and opens it.
func record(
  _ events: [Event], _ name: String = "log", checkpointEvery: UInt64 = 700,
  restartSlack: Int? = nil
) throws -> (Timeline, String) {
  let path = temporaryLogPath() + "-" + name
  var options = Recorder.options(.never)
  options.maxEventsBetweenCheckpoints = checkpointEvery
  options.minCheckpointSpacingBytes = 0
  let recorder = try Recorder.open(path: path, options: options)
  if let restartSlack { recorder.restartSlack = restartSlack }
  for e in events { _ = try recorder.record(e) }
  try recorder.close()
  return (try Timeline(path: path), path)
}

/// A long random session with one planted bug: at event `planted` a sixth section appears.
func plantedSession(events: Int = 6_000, planted: Int = 4_321, seed: UInt64 = 9) -> [Event] {
  var list: [Event] = []
  SampleSession.generate(events: events - 1, seed: seed, maxItems: 800) { list.append($0) }
  let time = list[planted - 2].time ?? 0
  list.insert(Event(.appendSections(["zzz-bug"]), time: time), at: planted - 1)
  return list
}

@Suite struct InvestigateTests {
  @Test func bisectFindAndDivergeLocateThePlantedBug() throws {
    let events = plantedSession()
    let (timeline, _) = try record(events, "a")
    let query = try Query("count(sections) == 6")
    let result = try Bisect.run(timeline) { _, state in query.holds(in: state) ? .bad : .good }
    #expect(result.first == 4_321)
    let scanned = try Bisect.run(timeline, scanInterval: true) { _, state in
      query.holds(in: state) ? .bad : .good
    }
    #expect(scanned.first == 4_321)
    #expect(scanned.seeks <= result.seeks)
    #expect(result.contradictions.isEmpty)
    #expect(result.probes.count <= 40)
    // The boundary: false just before, true at the answer.
    #expect(!query.holds(in: try timeline.state(at: 4_320)))
    #expect(query.holds(in: try timeline.state(at: 4_321)))

    var changes: [Int] = []
    let found = try Find.changes(timeline, query: query) { change, _ in changes.append(change.event)
    }
    #expect(found.initial == .bool(false))
    #expect(changes == [4_321])

    var without = events
    without.remove(at: 4_320)
    let (other, _) = try record(without, "b")
    let d = try Diverge.find(timeline, other)
    #expect(d.event == 4_321)
    #expect(d.firstDifferentRecord == 4_321)
    let again = try Diverge.find(timeline, timeline)
    #expect(again.event == nil)
  }

  /// Diverge reads both logs a window at a time, and a window of events naming many items
  /// holds few of them: each window stays within its ids (beside its last event), every
  /// event comes once and in order, and the divergence found is the same.
  @Test func divergeHoldsFewEventsOfManyItems() throws {
    var ops: [ListOperation] = [
      .appendSections(["s"]),
      .appendItems([OutlineNode("a"), OutlineNode("b")], section: "s", parent: nil),
    ]
    for k in 0..<40 {
      ops.append(.reconfigureItems((0..<5_000).map { $0 % 2 == 0 ? "a" : "b" }))
      if k == 30 { ops.append(.select(["a"])) }
    }
    let events = ops.enumerated().map { Event($1, time: 1_000 + Int64($0)) }
    let (timeline, _) = try record(events, "wide")
    var stream = Diverge.EventStream(
      timeline, decoder: try timeline.decoder(after: 0), from: 1, through: .max,
      windowIDs: 12_000)
    var seen: [Event] = []
    var largest = 0
    while let e = try stream.next() {
      seen.append(e)
      largest = max(largest, stream.window.reduce(0) { $0 + $1.operation.itemIDCount })
    }
    // Each window stops at the event that brings it to 12,000 ids (three of 5,000 each).
    #expect(largest >= 12_000 && largest < 12_000 + 5_000)
    let same = seen == events
    #expect(same, "the stream's events differ from those recorded")
    var other = events
    other.remove(at: 2 + 31)
    let (b, _) = try record(other, "wide-b")
    let d = try Diverge.find(timeline, b)
    #expect(d.event == 2 + 32)
    #expect(d.firstDifferentRecord == 2 + 32)
  }

  @Test func bisectWarnsWhenThePredicateIsNotMonotonic() throws {
    var events: [Event] = [
      Event(.appendSections(["s"])),
      Event(.appendItems([OutlineNode("x", children: ["y"])], section: nil, parent: nil)),
    ]
    for n in 3...100 {
      switch n {
      case 10, 90: events.append(Event(.expand(["x"])))
      case 60: events.append(Event(.collapse(["x"])))
      default: events.append(Event(.reloadItems(["y"])))
      }
    }
    let (timeline, _) = try record(events)
    let query = try Query(#"expanded("x")"#)
    let result = try Bisect.run(timeline) { _, s in query.holds(in: s) ? .bad : .good }
    #expect(result.first == 10)
    #expect(!result.contradictions.isEmpty)
  }

  @Test func bisectStepsAroundSkippedEvents() throws {
    let (timeline, _) = try record(plantedSession(events: 3_000, planted: 2_000))
    let query = try Query("count(sections) == 6")
    let exact = try Bisect.run(timeline) { n, s in
      n % 7 == 3 ? .skip : (query.holds(in: s) ? .bad : .good)
    }
    #expect(exact.first == 2_000)
    let vague = try Bisect.run(timeline) { n, s in
      n == 1_999 ? .skip : (query.holds(in: s) ? .bad : .good)
    }
    #expect(vague.candidates == 1_999...2_000)
  }

  @Test func bisectReportsAPredicateThatNeverHolds() throws {
    let (timeline, _) = try record(plantedSession(events: 500, planted: 100))
    let query = try Query(#"exists("nope")"#)
    let result = try Bisect.run(timeline) { _, s in query.holds(in: s) ? .bad : .good }
    #expect(result.first == nil)
  }

  @Test func diffByIdentity() throws {
    var a = ListState()
    try a.appendSections(["s"])
    a.setAllowsMultipleSelection(true)
    try a.appendItems(
      [OutlineNode("p", expanded: true, children: ["a", "b", "c"]), "q"], toSection: "s")
    try a.select(["a"])
    var b = a
    b.deleteItems(["b"])
    try b.moveItem("c", beforeItem: "a")
    try b.insertItems(["n"], afterItem: "q")
    try b.collapse(["p"])
    try b.updateItem("q", title: "Q", fields: nil)
    let d = Differ.diff(a, b)
    #expect(d.deleted.map(\.id) == ["b"])
    #expect(d.inserted.map(\.id) == ["n"])
    #expect(d.inserted.first?.place == ItemPlace(section: "s", parent: nil, after: "q"))
    #expect(d.moved.map(\.id) == ["c"])
    #expect(d.collapsed == ["p"])
    #expect(d.titles.first?.to == "Q")
    #expect(d.selectionChanged)
    #expect(Differ.diff(a, a).isEmpty)
    // Every item of the new state in order, each with its own changes.
    #expect(d.rows.map(\.id) == ["p", "c", "a", "q", "n"])
    #expect(d.rows.first { $0.id == "p" }?.changes == [.collapsed])
    #expect(d.rows.first { $0.id == "a" }?.changes == [])
    #expect(
      d.rows.last?.changes == [.inserted(at: ItemPlace(section: "s", parent: nil, after: "q"))])
    #expect(d.selectionBefore == ["a"] && d.selectionAfter == [])
  }

  @Test func historyFollowsOneItem() throws {
    let events: [Event] = [
      Event(.appendSections(["s"])),
      Event(.appendItems([OutlineNode("p", children: ["x"])], section: nil, parent: nil)),
      Event(.appendItems(["other"], section: nil, parent: nil)), Event(.expand(["p"])),
      Event(.update(item: "x", title: "X", fields: nil)), Event(.deleteItems(["p"])),
    ]
    let (timeline, _) = try record(events)
    var seen: [Int] = []
    _ = try History.of(item: "x", in: timeline) { seen.append($0.event) }
    #expect(seen == [2, 4, 5, 6])
  }

  /// Over a log long enough to be read on the second thread, history lists exactly the
  /// events that name the item (by scalars: "e" + accent is another item) or change it.
  @Test func historyOfALongLogKeepsCanonicallyEquivalentItemsApart() throws {
    var events: [Event] = []
    SampleSession.generate(events: 20_000, seed: 4, maxItems: 2_000) { events.append($0) }
    let mine = "\u{E9}"
    let other = "e\u{301}"
    // Positions (event numbers) where the two items are created and edited.
    let plan: [(Int, ListOperation)] = [
      (500, .appendSections(["mine"])),
      (
        501,
        .appendItems(
          [OutlineNode(mine, children: ["kid"]), OutlineNode(other)], section: "mine", parent: nil)
      ),
      (9_000, .expand([mine])), (9_001, .expand([other])), (12_000, .select([other])),
      (15_000, .update(item: mine, title: "E", fields: nil)), (15_001, .collapse([other])),
      (18_000, .deleteItems(["kid"])),
    ]
    for (n, op) in plan { events.insert(Event(op), at: n - 1) }
    let (timeline, _) = try record(events)
    var seen: [Int] = []
    var named: [Int] = []
    let count = try History.of(item: mine, in: timeline) { entry in
      seen.append(entry.event)
      if entry.named { named.append(entry.event) }
    }
    #expect(count == seen.count)
    #expect(named == [501, 9_000, 15_000])
    // Deleting its child (18,000) leaves its own place, flags and content as they were.
    #expect(seen == [501, 9_000, 15_000])
  }

  @Test func cutBranchesAPastState() throws {
    let (timeline, path) = try record(plantedSession(events: 2_000, planted: 1_500))
    let out = path + "-cut"
    #expect(try timeline.cut(through: 1_234, to: out, fsync: .never) == 1_234)
    let cut = try Timeline(path: out)
    #expect(cut.eventCount == 1_234)
    #expect(try cut.state(at: 1_234) == timeline.state(at: 1_234))
    let exists = #expect(throws: StoreError.self) { try timeline.cut(through: 10, to: out) }
    guard case .outputExists(path: out)? = exists else {
      Issue.record("expected outputExists, got \(String(describing: exists))")
      return
    }
  }
}

@Suite struct QueryTests {
  @Test(arguments: [
    (#"visible("a") and"#, 17), (#"count(nope)"#, 7), (#"level("a") < "b""#, 12),
    (#"visible(a)"#, 9), (#"exists("a") or 3"#, 13), (#"row("a") == null"#, 10), ("", 1),
    (#"parent("a") == "p" )"#, 20),
  ])
  func malformedExpressionsNameTheColumn(text: String, column: Int) {
    #expect(throws: QueryError.self) { try Query(text) }
    do {
      _ = try Query(text)
    } catch {
      #expect(error.column == column, "\(error)")
    }
  }

  @Test func evaluatesEveryFunction() throws {
    var s = ListState()
    try s.appendSections(["one", "two"])
    try s.appendItems([OutlineNode("p", expanded: true, children: ["c"]), "q"], toSection: "one")
    try s.select(["c"])
    let cases: [(String, QueryValue)] = [
      (#"visible("c")"#, .bool(true)), (#"expanded("p")"#, .bool(true)),
      (#"selected("c")"#, .bool(true)), (#"exists("zz")"#, .bool(false)),
      ("count(visible)", .int(3)), (#"count(visible, "two")"#, .int(0)),
      ("count(items)", .int(3)), ("count(selected)", .int(1)), ("count(sections)", .int(2)),
      (#"level("c")"#, .int(1)), (#"row("q")"#, .int(2)), (#"row("zz")"#, .int(-1)),
      (#"parent("c")"#, .string("p")), (#"parent("p") == null"#, .bool(true)),
      (#"not visible("c") or level("c") >= 1 and row("c") != -1"#, .bool(true)),
      (#"(count(items) > 2) == true"#, .bool(true)),
    ]
    for (text, expected) in cases {
      #expect(try Query(text).evaluate(s) == expected, "\(text)")
    }
  }

  /// A script's `a or b or c ...` over many ids: the chain was a tree as deep as it was long,
  /// and evaluating or freeing 18,000 `or`s overflowed the stack (exit 139).
  @Test func aLongChainOfAndsAndOrsNeitherRecursesNorChangesItsMeaning() throws {
    var s = ListState()
    try s.appendSections(["one"])
    try s.appendItems(["a", "b"], toSection: "one")
    let misses = Array(repeating: #"exists("zz")"#, count: 300_000)
    let anyOf = try Query((misses + [#"exists("b")"#]).joined(separator: " or "))
    #expect(anyOf.evaluate(s) == .bool(true))
    #expect(try Query(misses.joined(separator: " or ")).evaluate(s) == .bool(false))
    let hits = Array(repeating: #"exists("a")"#, count: 300_000)
    #expect(try Query(hits.joined(separator: " and ")).evaluate(s) == .bool(true))
    let allOf = try Query((hits + [#"exists("zz")"#]).joined(separator: " and "))
    #expect(allOf.evaluate(s) == .bool(false))
    // `and` binds tighter than `or` inside a chain: false or (true and false) or true.
    let mixed = #"exists("zz") or exists("a") and exists("zz") or exists("b")"#
    #expect(try Query(mixed).evaluate(s) == .bool(true))
    let noTrailingTrue = #"exists("zz") or exists("a") and exists("zz")"#
    #expect(try Query(noTrailingTrue).evaluate(s) == .bool(false))
    #expect(anyOf.relevance?.items.count == 300_001)
  }
}

/// The search with a check that is neither a query nor cheap: skips, and a check that
/// aborts. (`--run` commands are the CLI's: Tests/ListTapeCLITests/BisectTests.swift.)
@Suite struct BisectCheckTests {
  @Test func skippedProbesStillFindTheBug() throws {
    let (timeline, _) = try record(plantedSession(events: 1_500, planted: 1_000))
    let result = try Bisect.run(timeline) { n, s in
      n == 500 ? .skip : s.sectionIdentifiers.contains("zzz-bug") ? .bad : .good
    }
    #expect(result.first == 1_000)
  }

  @Test func aCheckThatThrowsAbortsTheSearch() throws {
    struct Aborted: Error {}
    let (timeline, _) = try record(plantedSession(events: 300, planted: 200))
    let thrown = #expect(throws: BisectError<Aborted>.self) {
      _ = try Bisect.run(timeline) { _, _ throws(Aborted) in throw Aborted() }
    }
    guard case .check? = thrown else {
      Issue.record("expected the check's error, got \(String(describing: thrown))")
      return
    }
  }
}

@Suite struct DiffIdentityTests {
  /// "é" as one code point and as e + combining accent are two identifiers (JSON strings),
  /// so replacing one with the other is a delete and an insert, not "unchanged".
  @Test func canonicallyEquivalentSpellingsAreDifferentItems() throws {
    var a = ListState()
    try a.appendSections(["s"])
    try a.appendItems(["\u{E9}"], toSection: "s")
    var b = ListState()
    try b.appendSections(["s"])
    try b.appendItems(["e\u{301}"], toSection: "s")
    let d = Differ.diff(a, b)
    #expect(d.deleted.map(\.id) == ["\u{E9}"])
    #expect(d.inserted.map(\.id) == ["e\u{301}"])
    #expect(!d.isEmpty)
  }
}
