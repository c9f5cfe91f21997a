import Foundation
import ListTapeInvestigate
import ListTapeJSON
import ListTapeModel
import ListTapeRead
import ListTapeSamples
import ListTapeStore

/// Issue 17's figures (shrink, many logs) and issue 14's adjacent diff, through the release
/// `listtape` binary where the issue says "from the command line".
enum InvestigateBench {
  static let directory = ReplayBench.directory
  static let bug = #"visible("bug-child")"#

  static func run(quick: Bool) {
    do {
      print("## Investigation: shrink, many logs, adjacent diffs\n")
      print("| figure | value | required |")
      print("|---|---:|---|")
      try shrinkFigures(quick: quick)
      try manyLogsFigures(quick: quick)
      try diffFigures(quick: quick)
      print()
    } catch {
      print("investigate benchmark failed: \(error)")
    }
  }

  static func row(_ figure: String, _ value: String, _ required: String, _ met: Bool?) {
    let verdict = met.map { $0 ? " — met" : " — NOT met" } ?? ""
    print("| \(figure) | \(value) | \(required)\(verdict) |")
  }

  // MARK: Shrink

  /// A session of `count` events with a three-event bug planted at 10%, 50% and 90%: a
  /// section, an item with a child in it, and the expansion that shows the child.
  static func plantedLog(events count: Int) throws -> String {
    let path = directory + "/shrink-\(count).ltape"
    if FileManager.default.fileExists(atPath: path) { return path }
    let planted: [Int: ListOperation] = [
      count / 10: .appendSections(["bug"]),
      count / 2: .appendItems(
        [OutlineNode("bug-parent", children: ["bug-child"])], section: "bug", parent: nil),
      count * 9 / 10: .expand(["bug-parent"]),
    ]
    let recorder = try Recorder.open(path: path + ".tmp", fsync: .never)
    var n = 0
    try SampleSession.generate(events: count - 3, seed: 21) { event in
      n += 1
      if let op = planted[n] {
        _ = try recorder.record(Event(op, time: event.time))
        n += 1
      }
      _ = try recorder.record(event)
    }
    try recorder.close()
    try FileManager.default.moveItem(atPath: path + ".tmp", toPath: path)
    return path
  }

  /// Runs the release binary; returns its wall time, standard output and exit code.
  static func binary(_ args: [String]) throws -> (seconds: Double, out: String, code: Int32)? {
    let tool = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
      .appendingPathComponent("listtape").path
    guard FileManager.default.isExecutableFile(atPath: tool) else { return nil }
    let p = Process()
    p.executableURL = URL(fileURLWithPath: tool)
    p.arguments = args
    let out = Pipe()
    p.standardOutput = out
    p.standardError = FileHandle.nullDevice
    let start = Clock.now()
    try p.run()
    let data = out.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    return (Clock.now() - start, String(decoding: data, as: UTF8.self), p.terminationStatus)
  }

  /// `listtape shrink LOG ARGS -o OUT --json`: seconds and events kept.
  static func shrink(_ log: String, _ args: [String]) throws -> (seconds: Double, kept: Int)? {
    let out = directory + "/shrunk.ltape"
    try? FileManager.default.removeItem(atPath: out)
    guard let r = try binary(["shrink", log] + args + ["-o", out, "--json"]), r.code == 0,
      let o = try? JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [String: Any],
      let kept = o["kept"] as? Int
    else { return nil }
    return (r.seconds, kept)
  }

  static func shrinkFigures(quick: Bool) throws {
    let small = try plantedLog(events: 10_000)
    let large = try plantedLog(events: quick ? 200_000 : 1_000_000)
    func report(_ label: String, _ r: (seconds: Double, kept: Int)?, limit: Double) {
      guard let r else { return row(label, "failed (no release binary?)", "", false) }
      row(
        label, "\(r.kept) events in \(fmt(r.seconds)) s",
        "≤ 10 events in ≤ \(Int(limit)) s", r.kept <= 10 && r.seconds <= limit)
    }
    report(
      "shrink --where, 3-event bug in 10k events", try shrink(small, ["--where", bug]), limit: 10)
    report(
      "shrink --where, 3-event bug in \(quick ? "200k" : "1M") events",
      try shrink(large, ["--where", bug]), limit: 120)
    // The checker sees only the state JSON: is bug-child there with every ancestor expanded?
    let check = directory + "/check.py"
    try """
    import json, sys
    state = json.load(sys.stdin)
    items = {i["id"]: i for s in state["sections"] for i in s["items"]}
    node = items.get("bug-child")
    shown = node is not None
    while shown and node["parent"] is not None:
        node = items[node["parent"]]
        shown = node["expanded"]
    sys.exit(1 if shown else 0)
    """.write(toFile: check, atomically: true, encoding: .utf8)
    report(
      "shrink --run (python3 checker), 10k events",
      try shrink(small, ["--run", "python3 \(check)"]), limit: 60)
    // The search without the shortcut of the predicate's items (an opaque predicate), in
    // process: what --run costs without the checker's own time.
    let timeline = try Timeline(path: small)
    let query = try Query(bug)
    var result: ShrinkResult?
    let seconds = try Clock.measure {
      result = try Shrink.run(timeline) { state, _ in query.holds(in: state) }
    }
    if let result {
      row(
        "shrink, opaque predicate in process, 10k events",
        "\(result.kept.count) events, \(result.tests) tests, \(fmt(seconds)) s", "", nil)
    }
  }

  // MARK: Many logs

  /// `count` logs of `events` each, every 50th with a planted sixth section.
  static func fleet(count: Int, events: Int) throws -> String {
    let dir = directory + "/fleet-\(count)x\(events)"
    let done = dir + "/.complete"
    if FileManager.default.fileExists(atPath: done) { return dir }
    try? FileManager.default.removeItem(atPath: dir)
    try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    for i in 0..<count {
      let recorder = try Recorder.open(
        path: dir + "/user-\(String(format: "%04d", i)).ltape", fsync: .never)
      var n = 0
      try SampleSession.generate(events: events, seed: UInt64(1_000 + i), maxItems: 5_000) {
        event in
        n += 1
        if i % 50 == 7 && n == events / 2 {
          _ = try recorder.record(Event(.appendSections(["zzz-bug"]), time: event.time))
        }
        _ = try recorder.record(event)
      }
      try recorder.close()
    }
    _ = FileManager.default.createFile(atPath: done, contents: Data())
    return dir
  }

  static func manyLogsFigures(quick: Bool) throws {
    let (count, events) = quick ? (100, 2_000) : (1_000, 10_000)
    let dir = try fleet(count: count, events: events)
    let files = ManyLogs.files([dir]).files
    let query = try Query("count(sections) == 6")
    let cores = ProcessInfo.processInfo.activeProcessorCount
    var matched = 0
    var cpu: [Int: Double] = [:]
    func time(_ workers: Int) -> Double {
      Clock.best(of: 2) {
        let before = cpuSeconds()
        matched = ManyLogs.find(query, in: files, workers: workers) { _ in }
        cpu[workers] = cpuSeconds() - before
      }
    }
    let one = time(1)
    let all = time(cores)
    row(
      "find over \(count) logs of \(events.formatted()) events (\(matched) match), one core",
      "\(fmt(one)) s (CPU \(fmt(cpu[1] ?? 0)) s)", "", nil)
    // A busy machine with autogroup scheduling (Linux) shares the cores by session, not by
    // thread: there the wall time cannot drop, and the CPU time shows the overhead alone.
    row(
      "the same on \(cores) cores",
      "\(fmt(all)) s = \(fmt(all / one)) × one core (CPU \(fmt(cpu[cores] ?? 0)) s)",
      "≤ 0.6 ×", all / one <= 0.6)
    // Memory: a tenth of the logs against all of them, in child processes.
    if let few = try childFindPeak(dir, count / 10), let every = try childFindPeak(dir, count) {
      row(
        "find's peak memory above the process baseline, \(count / 10) logs → \(count) logs",
        "\(ReplayBench.mib(few)) → \(ReplayBench.mib(every))",
        "the same within 8 MiB (bounded by the states, not the logs)",
        every <= few + 8 << 20)
    }
  }

  /// User and system CPU time of this process so far, every thread included.
  static func cpuSeconds() -> Double {
    var usage = rusage()
    #if os(Linux)
    getrusage(RUSAGE_SELF.rawValue, &usage)
    #else
    getrusage(RUSAGE_SELF, &usage)
    #endif
    func seconds(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1e6 }
    return seconds(usage.ru_utime) + seconds(usage.ru_stime)
  }

  /// Peak resident bytes above the baseline of a child that searches the first `count` logs.
  static func childFindPeak(_ dir: String, _ count: Int) throws -> Int? {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
    p.arguments = ["__find-memory", dir, String(count)]
    let out = Pipe()
    p.standardOutput = out
    try p.run()
    let data = out.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    let values = String(decoding: data, as: UTF8.self).split(separator: " ").compactMap {
      Int($0.trimmingCharacters(in: .whitespacesAndNewlines))
    }
    return values.count == 2 ? values[1] - values[0] : nil
  }

  /// Child mode: searches the first `count` logs of `dir` on every core; prints baseline
  /// and peak resident bytes.
  static func findMemory(_ dir: String, _ count: Int) {
    let baseline = Memory.resident()
    let files = Array(ManyLogs.files([dir]).files.prefix(count))
    guard let query = try? Query("count(sections) == 6") else { return }
    _ = ManyLogs.find(query, in: files) { _ in }
    print(baseline, Memory.peak())
  }

  // MARK: Adjacent diffs

  /// A session opening with a 100k-item outline (ids of one shape), then edited.
  static func outlineLog(_ shape: IdShape, events: Int) throws -> String {
    let path = directory + "/diff-\(shape.rawValue)-\(events).ltape"
    if FileManager.default.fileExists(atPath: path) { return path }
    let recorder = try Recorder.open(path: path + ".tmp", fsync: .never)
    try SampleSession.generate(
      events: events, seed: 14, maxItems: 110_000,
      opening: .outline(items: 100_000, shape: shape)
    ) { _ = try recorder.record($0) }
    try recorder.close()
    try FileManager.default.moveItem(atPath: path + ".tmp", toPath: path)
    return path
  }

  static func median(_ xs: [Double]) -> Double {
    let s = xs.sorted()
    return s.isEmpty ? .nan : s[s.count / 2]
  }

  /// `__diff LOG`: where an adjacent diff's time goes on a large list, at 20 random points
  /// (medians): the seek, copying the state, noting the touched items, comparing.
  static func diffParts(_ path: String) throws {
    let timeline = try Timeline(path: path)
    let events = timeline.eventCount
    var rng = SplitMix64(seed: 7)
    var parts: [[Double]] = Array(repeating: [], count: 5)
    var touchedCount: [Int] = []
    for _ in 0..<20 {
      let n = events / 2 + rng.below(events / 2 - 1)
      var a = ListState()
      var decoder = timeline.startDecoder()
      parts[0].append(try Clock.measure { (a, decoder) = try timeline.seek(to: n) })
      let e = try timeline.event(n + 1)
      var touched = TouchedItems()
      parts[1].append(Clock.measure { touched.note(e, before: a) })
      // As `listtape diff` does: a copy of the state, then a fold of the event on entries.
      var folded = a
      parts[2].append(
        try Clock.measure {
          try timeline.fold(&folded, &decoder, from: n + 1, through: n + 1) { _, _, _, _ in true }
        })
      // As the page's model does: the event applied by its ids (the string table built).
      var b = a
      parts[3].append(Clock.measure { try? b.apply(e) })
      parts[4].append(Clock.measure { _ = Differ.diff(a, b, touched: touched, context: 2) })
      touchedCount.append(touched.count)
    }
    let names = [
      "seek", "note touched", "copy + fold on entries (the CLI's)", "copy + apply by ids", "diff",
    ]
    for (name, times) in zip(names, parts) {
      print("\(name): \(fmt(median(times) * 1000)) ms (max \(fmt((times.max() ?? 0) * 1000)))")
    }
    print(
      "touched items: median \(touchedCount.sorted()[touchedCount.count / 2]), max \(touchedCount.max() ?? 0)"
    )
  }

  static func diffFigures(quick: Bool) throws {
    let events = quick ? 200_000 : 1_000_000
    for shape in IdShape.allCases {
      let path = try outlineLog(shape, events: events)
      let timeline = try Timeline(path: path)
      var rng = SplitMix64(seed: 99)
      let points = (0..<15).map { _ in events / 2 + rng.below(events / 2 - 1) }
      var cli: [Double] = []
      var library: [Double] = []
      var alone: [Double] = []
      var whole: [Double] = []
      var same = true
      for n in points {
        if let r = try binary(["diff", path, "--from", String(n), "--to", String(n + 1)]) {
          cli.append(r.seconds)
        }
        library.append(
          try Clock.measure { _ = try Differ.diff(timeline, from: n, to: n + 1, context: 2) })
        // The comparison alone, from the two states, against comparing them whole.
        let a = try timeline.state(at: n)
        let e = try timeline.event(n + 1)
        var touched = TouchedItems()
        touched.note(e, before: a)
        var b = a
        try? b.apply(e)
        var fast: StateDiff?
        alone.append(Clock.measure { fast = Differ.diff(a, b, touched: touched, context: 2) })
        var full: StateDiff?
        if whole.count < 3 {
          whole.append(Clock.measure { full = Differ.diff(a, b) })
          same = same && fast == full?.foldingUnchanged(longerThan: 2)
        }
      }
      let items = try timeline.state(at: events).numberOfAllItems
      row(
        "diff --from N --to N+1, \(shape.rawValue) ids, \(items.formatted()) items, "
          + "median of \(cli.count), end to end",
        cli.isEmpty ? "no release binary" : "\(fmt(median(cli) * 1000)) ms", "≤ 30 ms",
        cli.isEmpty ? nil : median(cli) <= 0.030)
      row(
        "  in process: seek + fold + diff / the diff alone / the whole-state diff",
        "\(fmt(median(library) * 1000)) / \(fmt(median(alone) * 1000)) / "
          + "\(fmt(median(whole) * 1000)) ms",
        "output identical to the whole-state diff", same)
    }
  }
}
