import Foundation
import ListTapeLog
import ListTapeModel
import ListTapeRead
import ListTapeSamples
import ListTapeStore

/// Issue 21's figures through the command line, each a fresh `listtape` process as a person
/// runs it, on the three-shape 1M-event sessions (`listtape generate --outline 100000`,
/// recorded by `listtape record`). With `LISTTAPE_BASE=/path/to/old/listtape` every figure
/// is also measured with that binary in the same run, on the same files, side by side.
enum TimeBench {
  static let events = 1_000_000
  static let outline = 100_000

  struct Tool {
    var name: String
    var path: String
  }

  /// The `listtape` beside this bench, then LISTTAPE_BASE's when it names one.
  static func tools() -> [Tool] {
    let here = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
      .appendingPathComponent("listtape").path
    var tools = [Tool(name: "new", path: here)]
    if let base = ProcessInfo.processInfo.environment["LISTTAPE_BASE"],
      FileManager.default.isExecutableFile(atPath: base)
    {
      tools.append(Tool(name: "old", path: base))
    }
    return tools
  }

  static func run(quick: Bool) {
    let count = quick ? 200_000 : events
    let tools = Self.tools()
    print(
      "## Issues 21, 28 and 29: time travel through the command line (\(count.formatted()) events)\n"
    )
    print(
      "Load when the group started: \(loadAverage()). Each figure: new, then old; wall "
        + "time (what a person waits) with the CPU time of the same runs in parentheses.\n")
    print("| figure | shape | " + tools.map(\.name).joined(separator: " | ") + " | required |")
    print("|---|---|" + tools.map { _ in "---:|" }.joined() + "---|")
    do {
      for shape in IdShape.allCases {
        try figures(shape, count: count, tools: tools)
      }
    } catch {
      print("time benchmark failed: \(error)")
    }
    print("\nLoad when the group ended: \(loadAverage()).\n")
  }

  /// The 10M-event UUID log's figures (`time10m`): replay, its memory, `show` with the
  /// index from fresh processes, the in-process seek, and the index. The log is made once
  /// (`listtape generate --events 10000000 --outline 100000 --shape uuid --max-items
  /// 110000`, recorded) unless LISTTAPE_10M names one.
  static func run10M() {
    let tools = Self.tools()
    let here = tools[0].path
    let env = ProcessInfo.processInfo.environment
    let log = env["LISTTAPE_10M"] ?? ReplayBench.directory + "/time-uuid-10000000.ltape"
    print("## Issues 28 and 29 on the 10M-event UUID log\n")
    print("Load when the group started: \(loadAverage()).\n")
    print("| figure | log | " + tools.map(\.name).joined(separator: " | ") + " | required |")
    print("|---|---|" + tools.map { _ in "---:|" }.joined() + "---|")
    do {
      if !FileManager.default.fileExists(atPath: log) {
        try FormatBench.shell(
          "'\(here)' generate --events 10000000 --outline 100000 --shape uuid "
            + "--max-items 110000 | '\(here)' record '\(log).tmp' && mv '\(log).tmp' '\(log)'")
      }
      let reader = try LogReader(path: log)
      let count = Int(reader.eventCount)
      var values: [String] = []
      var peaks: [String] = []
      var rateOK = true
      var peakOK = true
      try? FileManager.default.removeItem(atPath: log + ".idx")
      // The tools in turn, as on the 1M sessions: run one tool after the other, the first
      // paid for the host's slower moments (docs/performance.md, the twenty-seventh stop).
      let replays = try inTurn(tools, rounds: 3) { t in try time(t.path, ["replay", log]) }
      for (k, t) in tools.enumerated() {
        let s = median(replays.wall[k])
        values.append(
          String(
            format: "%.2fM events/s (CPU %.2f s)", Double(count) / s / 1e6,
            median(replays.cpu[k])))
        let mib = try peakMiB(t.path, ["replay", log])
        peaks.append(String(format: "%.1f MiB", mib))
        if k == 0 {
          rateOK = Double(count) / s >= 3e6
          peakOK = mib <= 88.4
        }
      }
      rowText("`replay`", "10M uuid", values, "≥ 3M events/s — " + met(rateOK))
      rowText("`replay` peak resident size", "10M uuid", peaks, "≤ 88.4 MiB — " + met(peakOK))
      try indexFigures(log, "10M uuid", tools: tools)
      var rng = SplitMix64(seed: 28)
      let points = (0..<15).map { _ in 150_000 + Int(rng.next() % UInt64(count - 150_001)) }
      // The binaries take turns at each N, as in the 1M group.
      var times = [[Double]](repeating: [], count: tools.count)
      var cpus = times
      for n in points {
        for (k, t) in tools.enumerated() {
          lastCPU.removeAll()
          times[k].append(try time(t.path, ["show", log, "--at", "\(n)", "--json"]))
          cpus[k].append(cpuMedian())
        }
      }
      let shows = tools.indices.map {
        ms(median(times[$0])) + " (CPU " + ms(median(cpus[$0])) + ")"
      }
      let showOK = median(times[0]) <= 0.1
      rowText(
        "`show --at N --json` with the index, median of 15 (events folded, median: "
          + "\(medianFold(log, points)))", "10M uuid", shows,
        "≤ 100 ms — " + met(showOK))
    } catch {
      print("10M benchmark failed: \(error)")
    }
    print("\nLoad when the group ended: \(loadAverage()).\n")
  }

  static func loadAverage() -> String {
    (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8))
      .map { $0.split(separator: " ").prefix(3).joined(separator: " ") } ?? "unknown"
  }

  static func row(_ figure: String, _ shape: IdShape, _ values: [String], _ required: String) {
    print("| \(figure) | \(shape) | " + values.joined(separator: " | ") + " | \(required) |")
  }

  static func met(_ ok: Bool) -> String { ok ? "met" : "NOT met" }

  /// CPU seconds (user + system) of every child process that ended so far.
  static func childCPU() -> Double {
    var usage = rusage()
    #if os(Linux)
    getrusage(RUSAGE_CHILDREN.rawValue, &usage)
    #else
    getrusage(RUSAGE_CHILDREN, &usage)
    #endif
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
      + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
  }

  /// CPU seconds of the runs `time` made for each value printed (on a busy machine the
  /// wall time mostly measures the neighbours; the CPU time less so).
  nonisolated(unsafe) static var lastCPU: [Double] = []

  /// Wall time of one run of `tool args` (stdin from `input` when given, output dropped);
  /// its CPU time goes to `lastCPU`.
  static func time(_ tool: String, _ args: [String], input: String? = nil) throws -> Double {
    let run = try spawn(tool, args, input: input)
    lastCPU.append(run.cpu)
    return run.wall
  }

  struct SpawnFailed: Error {
    var tool: String
    var code: Int32
  }

  /// One run of `tool args`: wall seconds, CPU seconds and peak resident KiB of the child
  /// alone (that one counts this process's size when spawned by it: see `peakMiB`). On Linux by posix_spawn and wait4 (Foundation's `Process` notices an exit on
  /// a 50 ms tick, which rounded every wall time up to it); elsewhere by `Process`.
  static func spawn(_ tool: String, _ args: [String], input: String?) throws -> (
    wall: Double, cpu: Double, peakKiB: Int
  ) {
    #if os(Linux)
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, input ?? "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
    let argv: [UnsafeMutablePointer<CChar>?] = ([tool] + args).map { strdup($0) } + [nil]
    let envp: [UnsafeMutablePointer<CChar>?] =
      ProcessInfo.processInfo.environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer {
      for p in argv { free(p) }
      for p in envp { free(p) }
    }
    var pid: pid_t = 0
    let start = Clock.now()
    let rc = posix_spawn(&pid, tool, &actions, nil, argv, envp)
    guard rc == 0 else { throw SpawnFailed(tool: tool, code: rc) }
    var status: Int32 = 0
    var usage = rusage()
    while wait4(pid, &status, 0, &usage) < 0 && errno == EINTR {}
    let wall = Clock.now() - start
    let cpu =
      Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
      + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    return (wall, cpu, usage.ru_maxrss)
    #else
    let cpu = childCPU()
    let p = Process()
    p.executableURL = URL(fileURLWithPath: tool)
    p.arguments = args
    p.standardOutput = FileHandle.nullDevice
    p.standardError = FileHandle.nullDevice
    if let input { p.standardInput = FileHandle(forReadingAtPath: input) }
    let start = Clock.now()
    try p.run()
    p.waitUntilExit()
    return (Clock.now() - start, childCPU() - cpu, 0)
    #endif
  }

  static func median(_ xs: [Double]) -> Double { xs.sorted()[xs.count / 2] }

  /// Runs `run` (one timed child, its wall seconds returned) for each tool in turn, `rounds`
  /// times over, after `first` in each round, so that every tool's runs meet the host's
  /// drift alike: each tool's wall and CPU seconds, run by run.
  static func inTurn(
    _ tools: [Tool], rounds: Int, first: () throws -> Void = {},
    _ run: (Tool) throws -> Double
  ) throws -> (wall: [[Double]], cpu: [[Double]]) {
    var wall = [[Double]](repeating: [], count: tools.count)
    var cpu = [[Double]](repeating: [], count: tools.count)
    for _ in 0..<rounds {
      try first()
      for (k, t) in tools.enumerated() {
        lastCPU.removeAll()
        wall[k].append(try run(t))
        cpu[k].append(cpuMedian())
      }
    }
    return (wall, cpu)
  }

  /// The median CPU time of the runs since `lastCPU` was last emptied, and empties it.
  static func cpuMedian() -> Double {
    defer { lastCPU.removeAll() }
    return lastCPU.isEmpty ? 0 : median(lastCPU)
  }

  static func ms(_ s: Double) -> String { String(format: "%.0f ms", s * 1000) }

  /// The size of the file at `path`, through symlinks.
  static func fileSize(_ path: String) -> Int {
    let target = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
    return ((try? FileManager.default.attributesOfItem(atPath: target))?[.size] as? Int) ?? 0
  }

  /// The peak resident size of one run of `tool args`, in MiB, by /usr/bin/time (a child
  /// spawned from this large process would count this process's size at exec in its own).
  static func peakMiB(_ tool: String, _ args: [String]) throws -> Double {
    let report = ReplayBench.directory + "/peak.txt"
    _ = try spawn("/usr/bin/time", ["-f", "%M", "-o", report, tool] + args, input: nil)
    let text = (try? String(contentsOfFile: report, encoding: .utf8)) ?? ""
    let kib = text.split(separator: "\n").last.flatMap { Double($0) } ?? 0
    return kib / 1024
  }

  /// The index's size and build time against a replay, and where a seek's time goes, in
  /// this process (the new code only: the figures are the library's).
  static func indexFigures(_ log: String, _ shape: String, tools: [Tool])
    throws
  {
    let none = tools.dropFirst().map { _ in "—" }
    let m = try IndexRatio.measure(log)
    let sizeRatio = Double(fileSize(log + ".idx")) / Double(fileSize(log))
    rowText(
      "index size ÷ log size", shape,
      [String(format: "%.2f × (%.1f MB)", sizeRatio, Double(fileSize(log + ".idx")) / 1e6)]
        + none, "≤ 2 × — " + met(sizeRatio <= 2))
    rowText(
      "index build ÷ replay, in process, best of 3", shape,
      [String(format: "%.2f × (%.2f s ÷ %.2f s)", m.build / m.replay, m.build, m.replay)]
        + none, "≤ 1.25 × — " + met(m.build <= 1.25 * m.replay))
    // 101 events: the median of 21 drew its events' distances past their seek points from
    // a sample whose median sat at 0.7 of the spacing past its point (docs/performance.md, the
    // twenty-eighth stop).
    let samples = 101
    let parts = try SeekParts.measure(log, samples: samples)
    let load = parts.load
    rowText(
      "state load at a seek point (inflate + load), in process, median of \(samples)", shape,
      [ms1(load) + " (inflate alone " + ms1(parts.inflate) + ")"] + none,
      "≤ 5 ms — " + met(load <= 0.005))
    rowText(
      "state at a random event, in process, median of \(samples)", shape,
      [
        ms1(parts.seek) + " (dictionary " + ms1(parts.dictionary)
          + ", \(parts.folded) events folded; points \(medianSpacing(log)) apart)"
      ]
        + none, "≤ 20 ms on the 10M log — " + met(parts.seek <= 0.02))
  }

  /// The median number of events between the seek points of `log`'s index.
  static func medianSpacing(_ log: String) -> Int {
    guard let index = (try? LogReader(path: log))?.index else { return 0 }
    let seqs = index.seekPoints.map { Int($0.seq) }
    let gaps = zip(seqs.dropFirst(), seqs).map { $0 - $1 }
    return gaps.isEmpty ? 0 : gaps.sorted()[gaps.count / 2]
  }

  /// The median distance of the events `points` past the index's seek point a seek to each
  /// starts from: what the sample asks the fold to do (half the spacing for a fair one).
  static func medianFold(_ log: String, _ points: [Int]) -> Int {
    guard let index = (try? LogReader(path: log))?.index, !points.isEmpty else { return 0 }
    let folds = points.map { n in n - Int(index.seekPoint(atOrBefore: UInt64(n - 1))?.seq ?? 0) }
    return folds.sorted()[folds.count / 2]
  }

  static func rowText(
    _ figure: String, _ shape: String, _ values: [String], _ required: String
  ) {
    print("| \(figure) | \(shape) | " + values.joined(separator: " | ") + " | \(required) |")
  }

  static func ms1(_ s: Double) -> String { String(format: "%.1f ms", s * 1000) }

  static func figures(_ shape: IdShape, count: Int, tools: [Tool]) throws {
    let dir = ReplayBench.directory
    let jsonl = dir + "/time-\(shape)-\(count).jsonl"
    let log = dir + "/time-\(shape)-\(count).ltape"
    let new = tools[0].path
    if !FileManager.default.fileExists(atPath: log) {
      try FormatBench.shell(
        "'\(new)' generate --events \(count) --seed 14 --outline \(outline) --shape \(shape) "
          + "--max-items 110000 > '\(jsonl)' && gzip -6 -k -f '\(jsonl)' "
          + "&& '\(new)' record '\(log).tmp' < '\(jsonl)' && mv '\(log).tmp' '\(log)'")
    }
    let index = log + ".idx"

    // Replay against gzip -dc of the same JSON Lines, in rounds (gzip, then each tool's
    // replay), so that each ratio compares runs made at the same moment: this host's speed
    // drifts by more than the figures' margins between runs a minute apart.
    let rounds = 7
    var gunzips: [Double] = []
    let gunzipRun = {
      gunzips.append(try time("/bin/sh", ["-c", "gzip -dc '\(jsonl).gz' > /dev/null"]))
    }
    let (replays, cpus) = try inTurn(tools, rounds: rounds, first: gunzipRun) { t in
      try time(t.path, ["replay", log])
    }
    let gunzip = median(gunzips)
    var values: [String] = []
    var ratios: [String] = []
    var rateOK = true
    var ratioOK = true
    for k in tools.indices {
      let s = median(replays[k])
      let ratio = median(zip(replays[k], gunzips).map { $0 / $1 })
      values.append(
        String(format: "%.2fM events/s (CPU %.2f s)", Double(count) / s / 1e6, median(cpus[k])))
      ratios.append(String(format: "%.2f ×", ratio))
      if k == 0 {
        rateOK = Double(count) / s >= 3e6
        ratioOK = ratio <= 1.0
      }
    }
    row("`replay`", shape, values, "≥ 3M events/s — " + met(rateOK))
    row(
      "`replay` ÷ `gzip -dc` (\(ms(gunzip))), median of \(rounds) pairs", shape, ratios,
      "≤ 1.0 × — " + met(ratioOK))

    var peaks: [String] = []
    var peakOK = true
    for (k, t) in tools.enumerated() {
      let mib = try peakMiB(t.path, ["replay", log])
      peaks.append(String(format: "%.1f MiB", mib))
      if k == 0 { peakOK = mib <= 88.4 }
    }
    row("`replay` peak resident size", shape, peaks, "≤ 88.4 MiB (issue 3) — " + met(peakOK))
    let sizeRatio = Double(fileSize(log)) / Double(fileSize(jsonl + ".gz"))
    let sizeBound = shape == .short ? 0.65 : 0.5
    row(
      "log size ÷ gzip -6 of the JSON Lines", shape,
      [String(format: "%.3f ×", sizeRatio)] + tools.dropFirst().map { _ in "—" },
      String(format: "≤ %.2f × — ", sizeBound) + met(sizeRatio <= sizeBound))

    // Seeks and adjacent diffs from fresh processes at random events past the opening: 25,
    // where 9 drew events whose median lay three quarters of the seek spacing past their points.
    var rng = SplitMix64(seed: 21)
    let points = (0..<25).map { _ in 150_000 + Int(rng.next() % UInt64(count - 150_001)) }
    for withIndex in [false, true] {
      if withIndex {
        let timeline = try Timeline(path: log)
        try timeline.buildIndex()
      }
      // The binaries take turns at each N (new, old, new, old ...), so that a host whose
      // speed drifts during the rows moves both alike.
      var showTimes = [[Double]](repeating: [], count: tools.count)
      var diffTimes = showTimes
      var showCPU = showTimes
      var diffCPU = showTimes
      for n in points {
        for (k, t) in tools.enumerated() {
          lastCPU.removeAll()
          if !withIndex { try? FileManager.default.removeItem(atPath: index) }
          showTimes[k].append(try time(t.path, ["show", log, "--at", "\(n)", "--json"]))
          showCPU[k].append(cpuMedian())
          if !withIndex { try? FileManager.default.removeItem(atPath: index) }
          diffTimes[k].append(
            try time(t.path, ["diff", log, "--from", "\(n)", "--to", "\(n + 1)"]))
          diffCPU[k].append(cpuMedian())
        }
      }
      let shows = tools.indices.map {
        ms(median(showTimes[$0])) + " (CPU " + ms(median(showCPU[$0])) + ")"
      }
      let diffs = tools.indices.map {
        ms(median(diffTimes[$0])) + " (CPU " + ms(median(diffCPU[$0])) + ")"
      }
      let showOK = median(showTimes[0]) <= (withIndex ? 0.05 : 0.1)
      let diffOK = median(diffTimes[0]) <= 0.03
      let kind =
        withIndex
        ? "with the index (events folded, median: \(medianFold(log, points)))" : "without an index"
      row(
        "`show --at N --json` \(kind), median of \(points.count)", shape, shows,
        (withIndex ? "≤ 50 ms" : "≤ 100 ms") + " — " + met(showOK))
      row(
        "`diff --from N --to N+1` \(kind), median of \(points.count)", shape, diffs,
        "≤ 30 ms — " + met(diffOK))
    }
    try pausedSeeks(log, shape, points: Array(points.suffix(5)), tools: tools)
    try secondShows(log, shape, points: Array(points.prefix(5)), tools: tools)
    try indexFigures(log, "\(shape)", tools: tools)
    try? FileManager.default.removeItem(atPath: index)

    // export --parquet, in events per CPU-second of the exporting process: the median of
    // three runs per tool, the tools taken in turn (one run moves by ±20 % on this host).
    let exportOut = dir + "/time-export-\(shape)"
    let exportCPU = try inTurn(tools, rounds: 3) { t in
      try? FileManager.default.removeItem(atPath: exportOut)
      defer { try? FileManager.default.removeItem(atPath: exportOut) }
      return try time(t.path, ["export", log, "--parquet", "-o", exportOut])
    }.cpu
    var exports: [String] = []
    var exportOK = true
    for k in tools.indices {
      let cpu = median(exportCPU[k])
      exports.append(String(format: "%.2fM events/CPU-s", Double(count) / cpu / 1e6))
      if k == 0 { exportOK = Double(count) / cpu >= 1e6 }
    }
    row("`export --parquet`, median of 3", shape, exports, "≥ 1M events/CPU-s — " + met(exportOK))

    // Building the outline by its appendItems events: a replay that stops after them.
    var opening = 0
    var built = ListState()
    var counting = true
    ShapesBench.generate(shape, events: 200_000) { e in
      guard counting else { return }
      if case .appendItems = e.operation {
        try? built.apply(e)
        opening += 1
      } else if opening > 0 {
        counting = false
      } else {
        try? built.apply(e)
        opening += 1
      }
    }
    let items = built.numberOfAllItems
    // A run is ~40 ms: the median of seven, the tools in turn, so that one slow moment of
    // the host does not decide the figure.
    let (buildWall, buildCPU) = try inTurn(tools, rounds: 7) { t in
      try time(t.path, ["replay", log, "--to", "\(opening)"])
    }
    var builds: [String] = []
    var buildOK = true
    for k in tools.indices {
      let s = median(buildWall[k])
      builds.append(
        String(
          format: "%.2f µs/item (CPU %.2f)", s / Double(items) * 1e6,
          median(buildCPU[k]) / Double(items) * 1e6))
      if k == 0 { buildOK = s / Double(items) <= 0.5e-6 }
    }
    row(
      "building the \(items.formatted())-item outline by its \(opening.formatted()) events, "
        + "median of 7", shape, builds, "≤ 0.5 µs/item — " + met(buildOK))

    // Recording the JSON Lines: the median of three runs per tool, the tools in turn.
    let recordOut = dir + "/time-record-\(shape).ltape"
    let (recordWall, recordCPU) = try inTurn(tools, rounds: 3) { t in
      try? FileManager.default.removeItem(atPath: recordOut)
      try? FileManager.default.removeItem(atPath: recordOut + ".idx")
      defer { try? FileManager.default.removeItem(atPath: recordOut) }
      return try time(t.path, ["record", recordOut], input: jsonl)
    }
    var records: [String] = []
    var recordOK = true
    for k in tools.indices {
      let s = median(recordWall[k])
      records.append(
        String(
          format: "%.0fk lines/s (CPU %.1f s)", Double(count) / s / 1e3, median(recordCPU[k])))
      if k == 0 { recordOK = Double(count) / s >= 300e3 }
    }
    row("`listtape record`, median of 3", shape, records, "≥ 300k lines/s — " + met(recordOK))
  }
}

extension TimeBench {
  /// Seeks at a person's pace: `show` and `diff` with the index, each run 3 s after the
  /// command before it, the tools in turn. A fresh process after a pause touches memory the
  /// host took back meanwhile (this host returns freed memory to its hypervisor within
  /// ~2 s), which the back-to-back rows above do not see (docs/performance.md, "The
  /// thirtieth stop").
  static func pausedSeeks(_ log: String, _ shape: IdShape, points: [Int], tools: [Tool])
    throws
  {
    let timeline = try Timeline(path: log)
    if timeline.indexBytes == nil { try timeline.buildIndex() }
    var shows = [[Double]](repeating: [], count: tools.count)
    var diffs = shows
    for n in points {
      for (k, t) in tools.enumerated() {
        Thread.sleep(forTimeInterval: 3)
        shows[k].append(try time(t.path, ["show", log, "--at", "\(n)", "--json"]))
        Thread.sleep(forTimeInterval: 3)
        diffs[k].append(try time(t.path, ["diff", log, "--from", "\(n)", "--to", "\(n + 1)"]))
      }
    }
    row(
      "`show --at N --json` with the index, each 3 s after the command before, median of "
        + "\(points.count)", shape, tools.indices.map { ms(median(shows[$0])) },
      "≤ 50 ms — " + met(median(shows[0]) <= 0.05))
    row(
      "`diff --from N --to N+1` with the index, each 3 s after the command before, median of "
        + "\(points.count)", shape, tools.indices.map { ms(median(diffs[$0])) },
      "≤ 30 ms — " + met(median(diffs[0]) <= 0.03))
  }

  /// A person's second command on a log without an index: `show` at N from a fresh copy's
  /// state (no index), its builder let run (`LISTTAPE_BACKGROUND_INDEX=1`: the bench's
  /// children write to no terminal), then `show` at another N. A tool from before the
  /// builder writes no index: its second `show` folds from the log's checkpoints again.
  static func secondShows(_ log: String, _ shape: IdShape, points: [Int], tools: [Tool])
    throws
  {
    let index = log + ".idx"
    var seconds = [[Double]](repeating: [], count: tools.count)
    var waits: [Double] = []
    for (j, n) in points.enumerated() {
      let next = points[(j + 1) % points.count]
      for (k, t) in tools.enumerated() {
        try? FileManager.default.removeItem(atPath: index)
        let start = Date()
        _ = try time(
          "/bin/sh",
          ["-c", "LISTTAPE_BACKGROUND_INDEX=1 exec '\(t.path)' show '\(log)' --at \(n) --json"])
        // Waits for the builder's index (at most a minute; a few seconds for an old tool,
        // which may have no builder), then for its process to end.
        let limit: TimeInterval = k == 0 ? 60 : 5
        while !FileManager.default.fileExists(atPath: index),
          Date().timeIntervalSince(start) < limit
        {
          Thread.sleep(forTimeInterval: 0.01)
        }
        if k == 0 { waits.append(Date().timeIntervalSince(start)) }
        Thread.sleep(forTimeInterval: 0.2)
        seconds[k].append(try time(t.path, ["show", log, "--at", "\(next)", "--json"]))
      }
    }
    try? FileManager.default.removeItem(atPath: index)
    let values = tools.indices.map { ms(median(seconds[$0])) }
    row(
      "`show --at N --json` after a first `show` on the log without an index (index there "
        + "\(ms(median(waits))) after the first began), median of \(points.count)", shape, values,
      "≤ 50 ms (with the index) — " + met(median(seconds[0]) <= 0.05))
  }
}

/// `listtape-bench __index-ratio LOG`: building LOG's index file (any old one removed
/// first) against a replay of LOG, in this process, wall and CPU time (both threads), best
/// of three each.
enum IndexRatio {
  /// Building `path`'s index (any old one removed first) and replaying it, in this
  /// process, best of three: wall and CPU seconds (both threads) of each.
  static func measure(_ path: String, spacing: Int? = nil) throws -> (
    build: Double, buildCPU: Double,
    replay: Double, replayCPU: Double
  ) {
    func cpu() -> Double { InvestigateBench.cpuSeconds() }
    var builds: [(Double, Double)] = []
    var replays: [(Double, Double)] = []
    for _ in 0..<3 {
      try? FileManager.default.removeItem(atPath: path + ".idx")
      let timeline = try Timeline(path: path)
      if let spacing {
        timeline.indexSpacing = spacing
        timeline.spacesPointsByItems = false
      }
      var c = cpu()
      var t = Clock.now()
      try timeline.buildIndex()
      builds.append((Clock.now() - t, cpu() - c))
      let fresh = try Timeline(path: path)
      c = cpu()
      t = Clock.now()
      _ = try fresh.replay(through: .max) { _, _, _ in true }
      replays.append((Clock.now() - t, cpu() - c))
    }
    let b = builds.min { $0.0 < $1.0 } ?? (0, 0)
    let r = replays.min { $0.0 < $1.0 } ?? (0, 0)
    return (b.0, b.1, r.0, r.1)
  }

  static func run(_ path: String, spacing: Int? = nil) throws {
    let m = try measure(path, spacing: spacing)
    print(
      String(
        format: "index build %.2f s (CPU %.2f s), replay %.2f s (CPU %.2f s): %.2f × (CPU %.2f ×)",
        m.build, m.buildCPU, m.replay, m.replayCPU, m.build / m.replay,
        m.buildCPU / m.replayCPU))
  }
}
