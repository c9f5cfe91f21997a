import Foundation
import ListTapeModel
import ListTapeRead
import ListTapeSamples
import Testing

@testable import ListTapeInvestigate
@testable import ListTapeStore

/// A generated session with a three-event bug planted at three places: a section, an item
/// with a child in it, and the expansion that shows the child.
func plantedShrinkSession(events: Int, seed: UInt64) -> [Event] {
  var list: [Event] = []
  SampleSession.generate(events: events, seed: seed, maxItems: 600) { list.append($0) }
  let bug: [(Int, ListOperation)] = [
    (events / 10, .appendSections(["bug"])),
    (
      events / 2,
      .appendItems(
        [OutlineNode("bug-parent", children: ["bug-child"])], section: "bug", parent: nil)
    ),
    (events * 9 / 10, .expand(["bug-parent"])),
  ]
  for (at, op) in bug.reversed() {
    list.insert(Event(op, time: list[at - 1].time), at: at)
  }
  return list
}

/// The final state of `events` folded from the empty list.
func folded(_ events: [Event]) -> ListState {
  var s = ListState()
  for e in events { try? s.apply(e) }
  return s
}

@Suite struct ShrinkTests {
  /// The result keeps events of the log in order, unchanged; satisfies the predicate; and
  /// every single removal breaks it (tried one by one here, independently of Shrink).
  static func expectMinimal(
    _ result: ShrinkResult, of events: [Event], _ holds: (ListState) -> Bool, _ what: String
  ) {
    #expect(result.kept == result.kept.sorted(), "\(what)")
    #expect(result.kept.map { events[$0 - 1] } == result.events, "\(what)")
    #expect(holds(folded(result.events)), "\(what): the result does not satisfy the predicate")
    for i in result.events.indices {
      var without = result.events
      without.remove(at: i)
      #expect(!holds(folded(without)), "\(what): event \(result.kept[i]) can go")
    }
    #expect(!result.events.contains { if case .mark = $0.operation { true } else { false } })
  }

  @Test(arguments: [
    #"visible("bug-child")"#, #"visible("bug-child") and count(sections) == 6"#,
    #"parent("bug-child") == "bug-parent""#, "count(sections) == 6",
    "count(visible) > 40", #"exists("bug-child") and count(items) >= 25"#,
  ])
  func shrinksToAOneMinimalLog(_ expression: String) throws {
    let events = plantedShrinkSession(events: 1_500, seed: 4)
    let (timeline, _) = try record(events, "shrink")
    let query = try Query(expression)
    let result = try #require(try Shrink.run(timeline, where: query))
    Self.expectMinimal(result, of: events, query.holds, expression)
    #expect(result.original == events.count)
    if expression == #"visible("bug-child")"# {
      #expect(
        result.events.map(\.operation) == [
          .appendSections(["bug"]),
          .appendItems(
            [OutlineNode("bug-parent", children: ["bug-child"])], section: "bug", parent: nil),
          .expand(["bug-parent"]),
        ])
      // Only the events that name the bug's items (and the section edits) were tried.
      #expect(result.slice?.held == true)
      #expect(result.tests < 40)
    }
  }

  @Test func withoutRelevanceTheSearchStillFindsTheBug() throws {
    let events = plantedShrinkSession(events: 1_500, seed: 8)
    let (timeline, _) = try record(events, "opaque")
    let query = try Query(#"visible("bug-child")"#)
    var calls = 0
    let result = try #require(
      try Shrink.run(timeline) { s, _ in
        calls += 1
        return query.holds(in: s)
      })
    Self.expectMinimal(result, of: events, query.holds, "opaque predicate")
    #expect(result.kept.count == 3)
    #expect(result.slice == nil)
    #expect(calls == result.tests)
    // Far fewer than one test per event: chunks double and halve.
    #expect(result.tests < 150, "\(result.tests) tests")
  }

  @Test func batchesStayWhole() throws {
    var events = plantedShrinkSession(events: 1_500, seed: 2)
    events.insert(
      Event(
        .batch([
          Event(.appendSections(["b2"])), Event(.mark("in the batch")),
          Event(.appendItems(["b-item"], section: "b2", parent: nil)),
        ]), time: events[700].time), at: 700)
    let (timeline, _) = try record(events, "batch")
    let query = try Query(#"exists("b-item") and visible("bug-child")"#)
    let result = try #require(try Shrink.run(timeline, where: query))
    Self.expectMinimal(result, of: events, query.holds, "batch")
    #expect(result.kept.contains(701))
  }

  @Test func refusesWhenTheLastStateDoesNotSatisfy() throws {
    let (timeline, _) = try record(plantedShrinkSession(events: 500, seed: 1), "never")
    let query = try Query(#"exists("nothing")"#)
    #expect(try Shrink.run(timeline, where: query) == nil)
  }

  @Test func aPredicateThatThrowsEndsTheSearchWithItsError() throws {
    struct Stop: Error {}
    let (timeline, _) = try record(plantedShrinkSession(events: 500, seed: 1), "stop")
    var calls = 0
    do {
      _ = try Shrink.run(timeline) { _, _ throws(Stop) in
        calls += 1
        if calls == 3 { throw Stop() }
        return true
      }
      Issue.record("the search went on past the error")
    } catch {
      if case .timeline(let e) = error { Issue.record("not the check's error: \(e)") }
    }
    #expect(calls == 3)
  }
}

@Suite struct WhatIfTests {
  /// Faults of each event folded in order, by event number (1-based).
  static func faults(_ events: [(Int, Event)]) -> (ListState, [Int: ListFault], [ListState]) {
    var s = ListState()
    var out: [Int: ListFault] = [:]
    var states: [ListState] = []
    for (n, e) in events {
      do throws(ListFault) {
        try s.apply(e)
      } catch {
        out[n] = error
      }
      states.append(s)
    }
    return (s, out, states)
  }

  /// Checks `WhatIf.run` without `ranges` at `point` against folding the log's events
  /// (`numbered` by their event numbers) here from the start: both lists, every state,
  /// every fault.
  static func expectAgrees(
    _ timeline: Timeline, _ numbered: [(Int, Event)], without ranges: [ClosedRange<Int>],
    at point: Int, _ what: String
  ) throws {
    let report = try WhatIf.run(timeline, without: ranges, at: point)
    let removed = { (n: Int) in ranges.contains { $0.contains(n) } }
    let (_, realFaults, realStates) = Self.faults(numbered)
    let (_, otherFaults, _) = Self.faults(numbered.filter { !removed($0.0) })
    var otherAfter: [ListState] = []
    var s = ListState()
    for (n, e) in numbered {
      if !removed(n) { try? s.apply(e) }
      otherAfter.append(s)
    }
    let first = numbered.indices.first { realStates[$0] != otherAfter[$0] }.map { numbered[$0].0 }
    let what = "\(what) without \(ranges) at \(point)"
    #expect(report.firstDifference == first, "\(what)")
    if let first { #expect(removed(first), "\(what)") }
    let appeared = otherFaults.keys.filter { realFaults[$0] == nil }.sorted()
    let vanished = realFaults.keys.filter { otherFaults[$0] == nil }.sorted()
    #expect(report.appeared.map(\.event) == appeared, "\(what)")
    #expect(report.vanished.map(\.event) == vanished, "\(what)")
    #expect(report.vanished.allSatisfy { $0.removed == removed($0.event) }, "\(what)")
    #expect(report.appeared.allSatisfy { otherFaults[$0.event] == $0.fault }, "\(what)")
    let at = numbered.lastIndex { $0.0 <= point }
    let a = at.map { realStates[$0] } ?? ListState()
    let b = at.map { otherAfter[$0] } ?? ListState()
    let expected = Differ.diff(a, b)
    #expect(report.diff == expected.foldingUnchanged(longerThan: 2), "\(what)")
    #expect(report.start == timeline.checkpointSeq(atOrBefore: report.without[0].lowerBound - 1))
  }

  @Test(arguments: [1, 2, 3, 4, 5, 6] as [UInt64])
  func agreesWithFoldingTheEditedList(seed: UInt64) throws {
    var events: [Event] = []
    SampleSession.generate(events: 900, seed: seed, maxItems: 300) { events.append($0) }
    let (timeline, path) = try record(events, "whatif")
    var rng = SplitMix64(seed: seed &* 77)
    for round in 0..<6 {
      var ranges: [ClosedRange<Int>] = []
      for _ in 0..<(1 + rng.below(3)) {
        let a = 1 + rng.below(events.count)
        ranges.append(a...min(events.count, a + [0, 0, 1, 5, 40][rng.below(5)]))
      }
      let point = [events.count, rng.below(events.count + 1), ranges[0].lowerBound][rng.below(3)]
      try Self.expectAgrees(
        timeline, Array(zip(1..., events)), without: ranges, at: point,
        "seed \(seed) round \(round)")
    }
    // The counterfactual log: every other event, times kept, and a mark in place of each
    // removed one, so every event keeps its number.
    let out = path + "-without.ltape"
    let written = try WhatIf.write(
      timeline, without: [500...500, 10...12], mark: "what-if: without 10-12, 500", to: out)
    var expected = events
    for i in [9, 10, 11, 499] {
      expected[i] = Event(.mark("what-if: without 10-12, 500"), time: events[i].time)
    }
    #expect(written == expected.count)
    var got: [Event] = []
    try Timeline(path: out).forEachEvent { _, e in
      got.append(e)
      return true
    }
    #expect(got == expected)
    #expect(throws: StoreError.self) {
      try WhatIf.write(timeline, without: [1...1], mark: "m", to: out)
    }
  }

  /// The real history folds on the log's records and renumbers its ids at each dictionary
  /// restart, while the counterfactual one keeps ids the log no longer defines: removals
  /// before, between and across restarts give the answers of folding the events here.
  @Test(arguments: [7, 8] as [UInt64])
  func agreesAcrossDictionaryRestarts(seed: UInt64) throws {
    var events: [Event] = []
    SampleSession.generate(events: 3_000, seed: seed, maxItems: 120) { events.append($0) }
    let (timeline, _) = try record(events, "restarts", restartSlack: 8)
    // Restarts with room around them for the removals.
    let restarts = timeline.reader.restartSeqs.map { Int($0) }.filter {
      $0 > 30 && $0 + 40 <= events.count
    }
    #expect(restarts.count >= 3, "\(restarts)")
    let numbered = Array(zip(1..., events))
    for (k, r) in restarts.prefix(3).enumerated() {
      try Self.expectAgrees(
        timeline, numbered, without: [(r - 30)...(r - 20), (r + 5)...(r + 5)],
        at: events.count, "seed \(seed) restart \(k)")
      try Self.expectAgrees(
        timeline, numbered, without: [(r - 2)...(r + 2)], at: r + 40,
        "seed \(seed) restart \(k)")
    }
  }

  /// Across events a salvage lost, both histories go on without them: the real one is not
  /// re-anchored at the recovery point after the gap (the recorded state holds the lost
  /// events' changes, which the counterfactual one cannot), so the report is that of
  /// folding the events the salvaged log still reads, and says it is not exact.
  @Test func aSalvagedLogGivesBothHistoriesWithoutTheLostEvents() throws {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent(
      "whatif-salvage-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: dir) }
    let original = dir.appendingPathComponent("original.ltape").path
    // Frames of 2 events and no parity, so that damaging one loses it; a recovery point
    // (a restart and its checkpoint) at event 1,200.
    var options = Recorder.options(.never)
    options.maxEventsPerFrame = 2
    options.maxEventsBetweenCheckpoints = 1_000_000
    options.parity = nil
    options.recoveryPointRatio = 0
    let recorder = try Recorder.open(path: original, options: options)
    recorder.restartSlack = 1 << 30
    var count = 0
    try SampleSession.generate(events: 2_000, seed: 12, maxItems: 300) { e in
      _ = try recorder.record(e)
      count += 1
      if count == 1_200 { try recorder.restartDictionary() }
    }
    try recorder.close()
    // The payloads of the frames holding events 800...860, damaged.
    var frames: [(offset: Int, length: Int)] = []
    try Timeline(path: original).reader.forEachFrame(from: 800, through: 860) { view in
      if view.firstSeq >= 800 && view.firstSeq <= 860 {
        frames.append((Int(view.offset), Int(view.length)))
      }
      return true
    }
    #expect(frames.count >= 20)
    var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: original)))
    for f in frames {
      for i in (f.offset + 40)..<(f.offset + f.length) { bytes[i] ^= 0x5A }
    }
    let damaged = dir.appendingPathComponent("damaged.ltape").path
    try Data(bytes).write(to: URL(fileURLWithPath: damaged))
    let salvaged = dir.appendingPathComponent("salvaged.ltape").path
    _ = try Timeline.salvage(damaged, to: salvaged)
    let timeline = try Timeline(path: salvaged)
    timeline.buildsIndex = false
    #expect(!timeline.gaps.isEmpty)
    var numbered: [(Int, Event)] = []
    try timeline.forEachEvent { n, e in
      numbered.append((n, e))
      return true
    }
    // The recorded state past the recovery point holds the lost events' changes; the fold
    // of the events read does not.
    var read = ListState()
    for (n, e) in numbered where n <= 1_500 { try? read.apply(e) }
    #expect(try timeline.state(at: 1_500) != read)
    for (without, point) in [([500...500], 1_500), ([300...320], 2_000), ([700...790], 1_199)] {
      try Self.expectAgrees(timeline, numbered, without: without, at: point, "salvaged")
      #expect(!(try WhatIf.run(timeline, without: without, at: point)).exact)
    }
  }

  @Test func historiesThatAgreeAgainStopEarly() throws {
    let events: [Event] =
      [
        Event(.appendSections(["s"])),
        Event(.appendItems([OutlineNode("x", children: ["y"])], section: "s", parent: nil)),
        Event(.expand(["x"])), Event(.collapse(["x"])), Event(.select(["y"])),
      ] + (0..<50).map { Event(.update(item: "x", title: "t\($0)", fields: nil)) }
    let (timeline, _) = try record(events, "agree")
    // Without the expand, selecting y faults (hidden); without expand and collapse the
    // states agree again after 4, and the select faults in both.
    let one = try WhatIf.run(timeline, without: [3...3], at: 55)
    #expect(one.firstDifference == 3)
    #expect(one.appeared.map(\.event) == [])
    #expect(one.vanished.map(\.event) == [])
    let two = try WhatIf.run(timeline, without: [3...4], at: 55)
    #expect(two.firstDifference == 3)
    #expect(two.diff.isEmpty)
    let none = try WhatIf.run(timeline, without: [10...20], at: 15)
    #expect(none.firstDifference == 10)
    #expect(!none.diff.isEmpty)
    #expect(throws: StoreError.self) { try WhatIf.run(timeline, without: [0...2], at: 5) }
    #expect(throws: StoreError.self) { try WhatIf.run(timeline, without: [50...60], at: 5) }
    #expect(throws: StoreError.self) { try WhatIf.run(timeline, without: [5...5], at: 56) }
    #expect(try WhatIf.run(timeline, without: [], at: 5).diff.isEmpty)
    #expect(WhatIf.merged([9...12, 1...2, 3...4, 10...20]) == [1...4, 9...20])
  }
}

@Suite struct ManyLogsLibraryTests {
  @Test func everyWorkerCountGivesTheSameAnswersInOrder() throws {
    var paths: [String] = []
    for seed in 1...6 as ClosedRange<UInt64> {
      var events = plantedShrinkSession(events: 600, seed: seed)
      if seed % 2 == 0 { events.removeAll { $0.operation == .expand(["bug-parent"]) } }
      paths.append(try record(events, "many\(seed)").1)
    }
    let query = try Query(#"visible("bug-child")"#)
    var answers: [[Int?]] = []
    for workers in [1, 2, 4] {
      var got: [Int?] = []
      var order: [String] = []
      let matched = ManyLogs.find(query, in: paths, workers: workers) { result in
        if case .success(let m) = result {
          got.append(m.event)
          order.append(m.path)
        }
      }
      #expect(order == paths)
      #expect(matched == 3)
      answers.append(got)
    }
    #expect(answers[0] == answers[1])
    #expect(answers[0] == answers[2])
    // One log at a time, by the full scan.
    for (path, answer) in zip(paths, answers[0]) {
      var first: Int?
      _ = try Find.changes(try Timeline(path: path), query: query) { change, _ in
        if first == nil && change.to == .bool(true) { first = change.event }
      }
      #expect(answer == first)
    }
  }
}
