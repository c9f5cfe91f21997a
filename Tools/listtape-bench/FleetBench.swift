import Foundation
import ListTapeFleet
import ListTapeInvestigate
import ListTapeModel
import ListTapeRead
import ListTapeSamples
import ListTapeStore

/// Issue 24's figures: exporting logs as Parquet (events per second per core, bytes per
/// event beside the log's), and a fleet question asked of DuckDB over the exported tables
/// beside `listtape find` over the logs themselves.
enum FleetBench {
  static func run(quick: Bool) {
    do {
      print("## Fleet: Parquet export, DuckDB over the tables\n")
      print("| figure | value | required |")
      print("|---|---:|---|")
      try exportFigures(quick: quick)
      try fleetFigures(quick: quick)
      print()
    } catch {
      print("fleet benchmark failed: \(error)")
    }
  }

  static func row(_ figure: String, _ value: String, _ required: String, _ met: Bool?) {
    InvestigateBench.row(figure, value, required, met)
  }

  /// Exports `logs` into a fresh directory; returns the directory, event rows, and the
  /// wall and CPU seconds.
  static func export(_ logs: [String], workers: Int = 1) throws -> (
    dir: String, rows: Int, wall: Double, cpu: Double
  ) {
    let dir = NSTemporaryDirectory() + "listtape-bench-export-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    let cpu = InvestigateBench.cpuSeconds()
    let start = Clock.now()
    let export = try FleetExport(directory: dir)
    for log in logs { _ = try export.add(try Timeline(path: log), as: log) }
    try export.close()
    let wall = Clock.now() - start
    return (dir, Int(export.eventRows), wall, InvestigateBench.cpuSeconds() - cpu)
  }

  /// `export` of many logs, `workers` at a time, as the command line does it.
  static func exportParallel(_ logs: [String], workers: Int) throws -> (
    dir: String, rows: Int, wall: Double, cpu: Double
  ) {
    let dir = NSTemporaryDirectory() + "listtape-bench-export-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    let cpu = InvestigateBench.cpuSeconds()
    let start = Clock.now()
    let export = try FleetExport(directory: dir)
    try export.add(
      logs, workers: workers, open: { path throws(StoreError) in try Timeline(path: path) },
      report: { _, _ in })
    try export.close()
    let wall = Clock.now() - start
    return (dir, Int(export.eventRows), wall, InvestigateBench.cpuSeconds() - cpu)
  }

  static func size(_ path: String) -> Int {
    ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.intValue
      ?? 0
  }

  /// One long session per id shape: a 100,000-item outline built by events, then edits.
  static func exportFigures(quick: Bool) throws {
    let events = quick ? 200_000 : 1_000_000
    for shape in IdShape.allCases {
      let log = try InvestigateBench.outlineLog(shape, events: events)
      let timeline = try Timeline(path: log)
      let n = timeline.eventCount
      var replayCPU = Double.infinity
      let replay = Clock.best(of: 2) {
        let cpu = InvestigateBench.cpuSeconds()
        _ = try? timeline.replay(through: n) { _, _, _ in true }
        replayCPU = min(replayCPU, InvestigateBench.cpuSeconds() - cpu)
      }
      // The fold the export is made from: on dictionary entries, no `Event` per event.
      var foldCPU = Double.infinity
      let fold = Clock.best(of: 2) {
        let cpu = InvestigateBench.cpuSeconds()
        var state = ListState()
        var decoder = timeline.startDecoder()
        try? timeline.fold(&state, &decoder, from: 1, through: n) { _, _, _, _ in true }
        foldCPU = min(foldCPU, InvestigateBench.cpuSeconds() - cpu)
      }
      var best: (dir: String, rows: Int, wall: Double, cpu: Double)?
      for _ in 0..<2 {
        let run = try export([log])
        if let b = best, b.wall <= run.wall {
          try? FileManager.default.removeItem(atPath: run.dir)
        } else {
          if let b = best { try? FileManager.default.removeItem(atPath: b.dir) }
          best = run
        }
      }
      guard let best else { continue }
      defer { try? FileManager.default.removeItem(atPath: best.dir) }
      let perSecond = Double(n) / best.wall
      let perCPU = Double(n) / best.cpu
      row(
        "export --parquet, \(shape.rawValue) ids, \(n.formatted()) events",
        "\(fmt(best.wall)) s = \(fmt0(perSecond)) events/s; "
          + "\(fmt0(perCPU)) per CPU-second (\(fmt(best.cpu / best.wall)) cores busy)",
        "≥ 1M events/s per core", perCPU >= 1_000_000)
      row(
        "the replay by events alone (\(shape.rawValue))",
        "\(fmt(replay)) s, \(fmt0(Double(n) / replayCPU)) per CPU-second", "reported", nil)
      row(
        "the fold on entries alone (\(shape.rawValue)): what the export adds to it",
        "\(fmt(fold)) s = \(fmt0(Double(n) / fold)) events/s, "
          + "\(fmt0(Double(n) / foldCPU)) per CPU-second; the export adds "
          + "\(fmt((best.cpu - foldCPU) * 1e9 / Double(n))) ns of CPU per event",
        "reported", nil)
      let parquet = size(best.dir + "/" + FleetExport.eventsFile)
      let bytes = size(log)
      row(
        "events.parquet bytes per event beside the log's (\(shape.rawValue))",
        String(
          format: "%.2f vs %.2f (%.2f ×)", Double(parquet) / Double(n),
          Double(bytes) / Double(n), Double(parquet) / Double(bytes)),
        "reported", nil)
    }
  }

  /// The question DuckDB answers from the tables and `find` from the logs: the first event
  /// at which a sixth section exists, per session.
  static let sixSections =
    "select log, min(event) from '%@' where sections = 6 group by log order by log"
  /// The question: sessions whose first fault is of one kind.
  static let firstFault =
    "select log, arg_min(fault, event) as first from '%@' where fault is not null "
    + "group by log having first = 'hiddenItem' order by log"

  /// 1,000 logs of 10,000 events (as the many-log `find` figure uses), exported, then asked.
  static func fleetFigures(quick: Bool) throws {
    let (count, events) = quick ? (100, 2_000) : (1_000, 10_000)
    let files = ManyLogs.files([try InvestigateBench.fleet(count: count, events: events)]).files
    let run = try export(files)
    defer { try? FileManager.default.removeItem(atPath: run.dir) }
    let parquet = size(run.dir + "/" + FleetExport.eventsFile)
    let logBytes = files.reduce(0) { $0 + size($1) }
    row(
      "export --parquet of \(count) logs of \(events.formatted()) events, one core",
      "\(fmt(run.wall)) s = \(fmt0(Double(run.rows) / run.wall)) events/s "
        + "(\(fmt0(Double(run.rows) / run.cpu)) per CPU-second); "
        + String(
          format: "%.2f bytes/event vs the logs' %.2f", Double(parquet) / Double(run.rows),
          Double(logBytes) / Double(run.rows)),
      "≥ 1M events/s per core", Double(run.rows) / run.cpu >= 1_000_000)
    let cores = ProcessInfo.processInfo.activeProcessorCount
    let parallel = try exportParallel(files, workers: cores)
    try? FileManager.default.removeItem(atPath: parallel.dir)
    row(
      "the same on \(cores) cores (one log per core)",
      "\(fmt(parallel.wall)) s = \(fmt(parallel.wall / run.wall)) × one core "
        + "(\(fmt0(Double(parallel.rows) / parallel.cpu)) per CPU-second)",
      "reported", nil)
    let query = try Query("count(sections) == 6")
    var found: [String: Int] = [:]
    let find = Clock.best(of: 2) {
      found = [:]
      _ = ManyLogs.find(query, in: files) { result in
        if case .success(let m) = result, let e = m.event { found[m.path] = e }
      }
    }
    row(
      "`find --where 'count(sections) == 6'` over the \(count) logs, \(cores) cores",
      "\(fmt(find)) s, \(found.count) match", "", nil)
    let table = run.dir + "/" + FleetExport.eventsFile
    guard let six = duckDB(String(format: sixSections, table)) else {
      row("DuckDB over events.parquet", "skipped: python3 with duckdb not found", "", nil)
      return
    }
    let agrees =
      six.rows.count == found.count
      && six.rows.allSatisfy { r in r.count == 2 && found[r[0]] == Int(r[1]) }
    row(
      "DuckDB: the same question of events.parquet (\(six.rows.count) sessions)",
      "\(fmt(six.seconds)) s in the query, \(fmt(six.process)) s with Python's start",
      "the same sessions and events as find", agrees)
    if let first = duckDB(String(format: firstFault, table)) {
      row(
        "DuckDB: sessions whose first fault is hiddenItem (\(first.rows.count) of \(count))",
        "\(fmt(first.seconds)) s in the query, \(fmt(first.process)) s with Python's start",
        "reported", nil)
    }
  }

  /// Runs `sql` in DuckDB through python3: the rows (as text), the query's own seconds and
  /// the whole process's; nil without python3 or duckdb.
  static func duckDB(_ sql: String) -> (rows: [[String]], seconds: Double, process: Double)? {
    let script = """
      import duckdb, json, sys, time
      con = duckdb.connect()
      start = time.perf_counter()
      rows = con.execute(sys.argv[1]).fetchall()
      took = time.perf_counter() - start
      print(json.dumps({"seconds": took, "rows": [[str(v) for v in r] for r in rows]}))
      """
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    p.arguments = ["python3", "-c", script, sql]
    let out = Pipe()
    p.standardOutput = out
    p.standardError = FileHandle.nullDevice
    let start = Clock.now()
    guard (try? p.run()) != nil else { return nil }
    let data = out.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    let process = Clock.now() - start
    guard p.terminationStatus == 0,
      let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
      let seconds = object["seconds"] as? Double, let rows = object["rows"] as? [[String]]
    else { return nil }
    return (rows, seconds, process)
  }
}
