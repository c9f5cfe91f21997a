import Foundation
import ListTapeInvestigate
import ListTapeJSON
import ListTapeLog
import ListTapeModel
import ListTapeRead
import ListTapeSamples
import ListTapeStore

/// Issue 14's figures for every id shape: the same session (a 100k-item outline, then a
/// person's edits) with short, path-like and UUID identifiers, recorded, replayed, sought,
/// built and diffed; then the deep-outline log.
enum ShapesBench {
  /// One shape's figures.
  struct Figures {
    var recordRate = 0.0
    var replayRate = 0.0
    var seekMedian = 0.0
    var buildPerItem = 0.0
    var rebuildPerItem = 0.0
    var diffMedian = 0.0
    var logBytes = 0
    var gzipBytes = 0
    var items = 0
  }

  static let outlineItems = 100_000

  static func run(quick: Bool) {
    let events = quick ? 200_000 : 1_000_000
    let seekEvents = quick ? 1_000_000 : 10_000_000
    print(
      "## Id shapes: one \(events.formatted())-event session, a \(outlineItems.formatted())-item "
        + "outline, three spellings of its ids\n")
    var figures: [(IdShape, Figures)] = []
    do {
      for shape in IdShape.allCases {
        figures.append((shape, try measure(shape, events: events, seekEvents: seekEvents)))
      }
    } catch {
      print("shapes benchmark failed: \(error)")
      return
    }
    report(figures, seekEvents: seekEvents)
    do {
      try deepOutline(events: 100_000)
    } catch {
      print("deep outline benchmark failed: \(error)")
    }
  }

  /// The session `SampleSession` makes with this opening.
  static func generate(_ shape: IdShape, events: Int, _ emit: (Event) throws -> Void) rethrows {
    try SampleSession.generate(
      events: events, seed: 14, maxItems: 110_000,
      opening: .outline(items: outlineItems, shape: shape), emit)
  }

  static func measure(_ shape: IdShape, events count: Int, seekEvents: Int) throws -> Figures {
    var f = Figures()
    var events: [Event] = []
    events.reserveCapacity(count)
    generate(shape, events: count) { events.append($0) }

    // Size against gzip -6 of the same JSON Lines.
    let jsonl = ReplayBench.directory + "/shapes-\(shape)-\(count).jsonl"
    var w = JSONWriter(reservingCapacity: count * 100)
    for e in events {
      e.encode(to: &w)
      w.endLine()
    }
    _ = FileManager.default.createFile(atPath: jsonl, contents: Data(w.bytes))
    f.gzipBytes = try ReplayBench.gzipSize(jsonl)
    try? FileManager.default.removeItem(atPath: jsonl)

    // Recording through the Recorder (encode, append, fold, checkpoints).
    let log = ReplayBench.directory + "/shapes-\(shape)-\(count).ltape"
    try? FileManager.default.removeItem(atPath: log)
    let recordTime = try Clock.measure {
      let recorder = try Recorder.open(path: log, fsync: .never)
      for e in events { _ = try recorder.record(e) }
      try recorder.close()
    }
    f.recordRate = Double(count) / recordTime
    f.logBytes = ReplayBench.fileSize(log)

    // Full replay, best of three.
    let timeline = try Timeline(path: log)
    let replayTime = try Clock.best {
      _ = try timeline.replay(through: .max) { _, _, _ in true }
    }
    f.replayRate = Double(count) / replayTime

    // Building the outline by its events against rebuilding it from its checkpoint.
    let opening = openingLength(events)
    var built = ListState()
    let buildTime = Clock.best(of: 5) {
      var s = ListState()
      for e in events[..<opening] { try? s.apply(e) }
      built = s
    }
    f.items = built.numberOfAllItems
    let bytes = built.encoded()
    let rebuildTime = Clock.best(of: 5) { _ = try? ListState(encoded: bytes) }
    f.buildPerItem = buildTime / Double(f.items) * 1e6
    f.rebuildPerItem = rebuildTime / Double(f.items) * 1e6

    // Diff of two adjacent events at random points past the opening.
    var rng = Rng(seed: 99)
    var diffs: [Double] = []
    for _ in 0..<5 {
      let n = opening + rng.below(count - opening - 1)
      var state = try timeline.state(at: n)
      let before = state
      try? state.apply(events[n])
      diffs.append(Clock.measure { _ = Differ.diff(before, state) })
    }
    f.diffMedian = median(diffs)
    events = []

    // Seeks on a long log with the same opening (cached between runs).
    let large = ReplayBench.directory + "/shapes-\(shape)-\(seekEvents).ltape"
    if (try? Timeline(path: large))?.eventCount != seekEvents {
      try? FileManager.default.removeItem(atPath: large)
      let recorder = try Recorder.open(path: large, fsync: .never)
      try generate(shape, events: seekEvents) { _ = try recorder.record($0) }
      try recorder.close()
    }
    let long = try Timeline(path: large)
    var seekRng = Rng(seed: 42)
    var seeks: [Double] = []
    for _ in 0..<41 {
      let n = 1 + seekRng.below(long.eventCount)
      seeks.append(try Clock.measure { _ = try long.state(at: n) })
    }
    f.seekMedian = median(seeks)
    return f
  }

  /// Building and rebuilding alone, for profilers: `__build SHAPE [RUNS]` prints both, best of
  /// RUNS (5).
  static func buildOnly(_ name: String, runs: Int) {
    guard let shape = IdShape(rawValue: name) else { return print("unknown shape \(name)") }
    var events: [Event] = []
    generate(shape, events: 2 + outlineItems / 200) { events.append($0) }
    var built = ListState()
    let build = Clock.best(of: runs) {
      var s = ListState()
      for e in events { try? s.apply(e) }
      built = s
    }
    let bytes = built.encoded()
    let rebuild = Clock.best(of: runs) { _ = try? ListState(encoded: bytes) }
    let n = Double(built.numberOfAllItems)
    print(
      "\(shape): build \(fmt(build / n * 1e6)) µs/item, rebuild \(fmt(rebuild / n * 1e6)) µs/item "
        + "(\(built.numberOfAllItems) items, best of \(runs))")
  }

  /// One adjacent diff, for profilers: `__diff LOG N` diffs the states after events N and
  /// N + 1 and prints the time.
  static func diffOnly(_ path: String, at n: Int) throws {
    let timeline = try Timeline(path: path)
    let before = try timeline.state(at: n)
    let after = try timeline.state(at: n + 1)
    var changes = 0
    let time = Clock.measure { changes = Differ.diff(before, after).changeCount }
    print("diff of events \(n) and \(n + 1): \(changes) changes in \(fmt(time * 1000)) ms")
    let event = try timeline.event(n + 1)
    var examined = 0
    var s = before
    s.indexIDs()
    var next = s
    try? next.apply(event)
    let t2 = Clock.measure {
      var touched = TouchedItems(limit: max(1_024, s.numberOfAllItems / 4))
      touched.note(event, before: s)
      examined =
        Differ.incremental(
          s, next, touched: touched, context: 2, selectionLists: false
        ).examined
    }
    print("the page's diff (from the event): \(examined) items read in \(fmt(t2 * 1000)) ms")
  }

  /// Events up to and including the outline opening: the section event and the appends
  /// that build the outline (every event before the first that is not an `appendItems`).
  static func openingLength(_ events: [Event]) -> Int {
    var n = 1
    while n < events.count, case .appendItems = events[n].operation { n += 1 }
    return n
  }

  static func median(_ v: [Double]) -> Double { v.sorted()[v.count / 2] }

  static func report(_ figures: [(IdShape, Figures)], seekEvents: Int) {
    func row(_ name: String, _ value: (Figures) -> String, _ required: String = "") {
      print(
        "| \(name) | " + figures.map { value($0.1) }.joined(separator: " | ") + " | \(required) |")
    }
    print("| figure | " + figures.map { "\($0.0)" }.joined(separator: " | ") + " | required |")
    print("|---|" + String(repeating: "---:|", count: figures.count) + "---|")
    row("Recorder.record, events/s", { fmt0($0.recordRate) })
    row("full replay, events/s (best of 3)", { fmt0($0.replayRate) }, "≥ 3,000,000")
    row(
      "state at a random event of a \(seekEvents.formatted())-event log, median of 41, ms",
      { fmt($0.seekMedian * 1000) }, "≤ 20 ms")
    row("building the outline by its events, µs/item", { fmt($0.buildPerItem) })
    row("rebuilding it from its checkpoint, µs/item", { fmt($0.rebuildPerItem) })
    row(
      "build ÷ rebuild", { fmt($0.buildPerItem / $0.rebuildPerItem) + " ×" }, "≤ 1.5 ×")
    row("Differ.diff of two adjacent events, median of 5, ms", { fmt($0.diffMedian * 1000) })
    row("log ÷ gzip -6 of the JSON Lines", { fmt(Double($0.logBytes) / Double($0.gzipBytes)) })
    row("items after the opening", { $0.items.formatted() })
    print("")
    for (shape, f) in figures {
      let replayOK = f.replayRate >= 3e6
      let seekOK = f.seekMedian <= 0.020
      let build = f.buildPerItem / f.rebuildPerItem
      print(
        "\(shape): replay \(fmt0(f.replayRate)) events/s (≥ 3M: \(replayOK ? "met" : "NOT met")), "
          + "seek \(fmt(f.seekMedian * 1000)) ms (≤ 20 ms: \(seekOK ? "met" : "NOT met")), "
          + "build \(fmt(build)) × rebuild (≤ 1.5 ×: \(build <= 1.5 ? "met" : "NOT met"))")
    }
    let byShape = Dictionary(uniqueKeysWithValues: figures.map { ($0.0, $0.1) })
    if let short = byShape[.short], let uuid = byShape[.uuid] {
      let replay = short.replayRate / uuid.replayRate
      let seek = uuid.seekMedian / short.seekMedian
      print(
        "uuid against short: replay time \(fmt(replay)) × (≤ 1.3 ×: \(replay <= 1.3 ? "met" : "NOT met")), "
          + "seek \(fmt(seek)) × (≤ 1.3 ×: \(seek <= 1.3 ? "met" : "NOT met"))")
    }
    print("")
  }

  /// A log of `events` nested appends, each under the previous item: the events past
  /// level 255 fault, and recording plus replaying stays linear.
  static func deepOutline(events count: Int) throws {
    print("## Deep outline: \(count.formatted()) nested appends, each under the previous item\n")
    let path = ReplayBench.directory + "/deep-\(count).ltape"
    try? FileManager.default.removeItem(atPath: path)
    var faults = 0
    let record = try Clock.measure {
      let recorder = try Recorder.open(path: path, fsync: .never)
      _ = try recorder.record(Event(.appendSections(["S"])))
      _ = try recorder.record(Event(.appendItems([OutlineNode("d0")], section: "S", parent: nil)))
      for k in 1..<(count - 1) {
        let op = ListOperation.appendItems(
          [OutlineNode("d\(k)")], section: nil, parent: "d\(k - 1)")
        if try recorder.record(Event(op)) != nil { faults += 1 }
      }
      try recorder.close()
    }
    var deepest = 0
    let replay = try Clock.measure {
      let (state, _) = try Timeline(path: path).replay(through: .max) { _, _, _ in true }
      deepest = state.numberOfAllItems
    }
    let total = record + replay
    print("| figure | value | required |")
    print("|---|---:|---|")
    print("| record | \(fmt(record)) s (\(faults.formatted()) events fault) | |")
    print("| replay | \(fmt(replay)) s (\(deepest) items, levels 0-\(deepest - 1)) | |")
    print("| record + replay | \(fmt(total)) s | ≤ 3 s: \(total <= 3 ? "met" : "NOT met") |")
    print("")
  }
}
