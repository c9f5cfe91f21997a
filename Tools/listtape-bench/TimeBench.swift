import Foundation
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

  static func run(quick: Bool) {
    let count = quick ? 200_000 : events
    let here = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
      .appendingPathComponent("listtape").path
    var tools = [Tool(name: "new", path: here)]
    if let base = ProcessInfo.processInfo.environment["LISTTAPE_BASE"],
      FileManager.default.isExecutableFile(atPath: base)
    {
      tools.append(Tool(name: "old", path: base))
    }
    print("## Issue 21: time travel through the command line (\(count.formatted()) events)\n")
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
    let cpu = childCPU()
    defer { lastCPU.append(childCPU() - cpu) }
    let p = Process()
    p.executableURL = URL(fileURLWithPath: tool)
    p.arguments = args
    p.standardOutput = FileHandle.nullDevice
    p.standardError = FileHandle.nullDevice
    if let input { p.standardInput = FileHandle(forReadingAtPath: input) }
    let start = Clock.now()
    try p.run()
    p.waitUntilExit()
    return Clock.now() - start
  }

  static func median(_ xs: [Double]) -> Double { xs.sorted()[xs.count / 2] }

  /// The median CPU time of the runs since `lastCPU` was last emptied, and empties it.
  static func cpuMedian() -> Double {
    defer { lastCPU.removeAll() }
    return lastCPU.isEmpty ? 0 : median(lastCPU)
  }

  static func ms(_ s: Double) -> String { String(format: "%.0f ms", s * 1000) }

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

    // Replay against gzip -dc of the same JSON Lines, median of three.
    let gunzip = median(
      try (0..<3).map { _ in try time("/bin/sh", ["-c", "gzip -dc '\(jsonl).gz' > /dev/null"]) })
    var values: [String] = []
    var ratios: [String] = []
    var rateOK = true
    var ratioOK = true
    for (k, t) in tools.enumerated() {
      lastCPU.removeAll()
      let s = median(try (0..<3).map { _ in try time(t.path, ["replay", log]) })
      values.append(
        String(format: "%.2fM events/s (CPU %.2f s)", Double(count) / s / 1e6, cpuMedian()))
      ratios.append(String(format: "%.2f ×", s / gunzip))
      if k == 0 {
        rateOK = Double(count) / s >= 3e6
        ratioOK = s <= gunzip
      }
    }
    row("`replay`", shape, values, "≥ 3M events/s — " + met(rateOK))
    row("`replay` ÷ `gzip -dc` (\(ms(gunzip)))", shape, ratios, "≤ 1.0 × — " + met(ratioOK))

    // Seeks and adjacent diffs from fresh processes at random events past the opening.
    var rng = SplitMix64(seed: 21)
    let points = (0..<9).map { _ in 150_000 + Int(rng.next() % UInt64(count - 150_001)) }
    for withIndex in [false, true] {
      if withIndex {
        let timeline = try Timeline(path: log)
        try timeline.buildIndex()
      }
      var shows: [String] = []
      var diffs: [String] = []
      var showOK = true
      var diffOK = true
      for (k, t) in tools.enumerated() {
        var showTimes: [Double] = []
        var diffTimes: [Double] = []
        var showCPU: [Double] = []
        var diffCPU: [Double] = []
        for n in points {
          lastCPU.removeAll()
          if !withIndex { try? FileManager.default.removeItem(atPath: index) }
          showTimes.append(try time(t.path, ["show", log, "--at", "\(n)", "--json"]))
          showCPU.append(cpuMedian())
          if !withIndex { try? FileManager.default.removeItem(atPath: index) }
          diffTimes.append(
            try time(t.path, ["diff", log, "--from", "\(n)", "--to", "\(n + 1)"]))
          diffCPU.append(cpuMedian())
        }
        shows.append(ms(median(showTimes)) + " (CPU " + ms(median(showCPU)) + ")")
        diffs.append(ms(median(diffTimes)) + " (CPU " + ms(median(diffCPU)) + ")")
        if k == 0 {
          showOK = median(showTimes) <= (withIndex ? 0.05 : 0.1)
          diffOK = median(diffTimes) <= 0.03
        }
      }
      let kind = withIndex ? "with the index" : "without an index"
      row(
        "`show --at N --json` \(kind), median of 9", shape, shows,
        (withIndex ? "≤ 50 ms" : "≤ 100 ms") + " — " + met(showOK))
      row("`diff --from N --to N+1` \(kind), median of 9", shape, diffs, "≤ 30 ms — " + met(diffOK))
    }
    try? FileManager.default.removeItem(atPath: index)

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
    var builds: [String] = []
    var buildOK = true
    for (k, t) in tools.enumerated() {
      lastCPU.removeAll()
      let s = median(
        try (0..<3).map { _ in try time(t.path, ["replay", log, "--to", "\(opening)"]) })
      builds.append(
        String(
          format: "%.2f µs/item (CPU %.2f)", s / Double(items) * 1e6,
          cpuMedian() / Double(items) * 1e6))
      if k == 0 { buildOK = s / Double(items) <= 0.5e-6 }
    }
    row(
      "building the \(items.formatted())-item outline by its \(opening.formatted()) events",
      shape, builds, "≤ 0.5 µs/item — " + met(buildOK))

    // Recording the JSON Lines.
    var records: [String] = []
    var recordOK = true
    for (k, t) in tools.enumerated() {
      let out = dir + "/time-record-\(shape).ltape"
      try? FileManager.default.removeItem(atPath: out)
      try? FileManager.default.removeItem(atPath: out + ".idx")
      lastCPU.removeAll()
      let s = try time(t.path, ["record", out], input: jsonl)
      try? FileManager.default.removeItem(atPath: out)
      records.append(
        String(format: "%.0fk lines/s (CPU %.1f s)", Double(count) / s / 1e3, cpuMedian()))
      if k == 0 { recordOK = Double(count) / s >= 300e3 }
    }
    row("`listtape record`", shape, records, "≥ 300k lines/s — " + met(recordOK))
  }
}

/// `listtape-bench __index-ratio LOG`: building LOG's index file (any old one removed
/// first) against a replay of LOG, in this process, wall and CPU time (both threads), best
/// of three each.
enum IndexRatio {
  static func run(_ path: String) throws {
    func cpu() -> Double { InvestigateBench.cpuSeconds() }
    var builds: [(Double, Double)] = []
    var replays: [(Double, Double)] = []
    for _ in 0..<3 {
      try? FileManager.default.removeItem(atPath: path + ".idx")
      let timeline = try Timeline(path: path)
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
    print(
      String(
        format: "index build %.2f s (CPU %.2f s), replay %.2f s (CPU %.2f s): %.2f × (CPU %.2f ×)",
        b.0, b.1, r.0, r.1, b.0 / r.0, b.1 / r.1))
  }
}
