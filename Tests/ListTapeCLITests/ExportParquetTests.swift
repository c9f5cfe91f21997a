import Foundation
import ListTapeLog
import Testing

/// Whether python3 can import `module`; in CI (`CI` set) the tests run regardless, so a
/// package .ci/run failed to install fails them instead of skipping them.
func pythonHas(_ module: String) -> Bool {
  if let ci = ProcessInfo.processInfo.environment["CI"], !ci.isEmpty { return true }
  return (try? Python.run(["-c", "import \(module)"]).code) == 0
}

/// Runs python3 (from the PATH) on the repository's scripts.
enum Python {
  static let fleet = CLI.packageRoot.appendingPathComponent("Tools/fleet")

  static func run(_ args: [String], seconds: Double = 600) throws -> RunResult {
    let dir = try TempDir()
    let outURL = dir.url.appendingPathComponent("stdout")
    let errURL = dir.url.appendingPathComponent("stderr")
    _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
    _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
    let process = Process()
    process.executableURL = URL(fileURLWithPath: findTool("python3") ?? "/usr/bin/python3")
    process.arguments = args
    process.environment = CLI.baseEnvironment
    process.standardInput = FileHandle.nullDevice
    process.standardOutput = try FileHandle(forWritingTo: outURL)
    process.standardError = try FileHandle(forWritingTo: errURL)
    try process.run()
    guard waitForExit(process, seconds: seconds) else {
      throw RecordFailed(message: "python3 \(args) hung")
    }
    return RunResult(
      out: String(decoding: try Data(contentsOf: outURL), as: UTF8.self),
      err: String(decoding: try Data(contentsOf: errURL), as: UTF8.self),
      code: process.terminationStatus)
  }

  /// What `Tools/fleet/count.py ENGINE DIR` counts in an export.
  static func count(_ engine: String, _ dir: String) throws -> [String: Any] {
    let r = try run([fleet.appendingPathComponent("count.py").path, engine, dir])
    guard r.code == 0 else {
      throw RecordFailed(message: "count.py \(engine) exited \(r.code): \(r.err.suffix(2000))")
    }
    return try json(r.out)
  }

  /// One pyarrow expression's value (`t`: the events table, `s`: the sessions table), as
  /// JSON.
  static func pyarrow(_ dir: String, _ expression: String) throws -> Any {
    let script = """
      import json, sys, pyarrow.parquet as pq
      t = pq.read_table(sys.argv[1] + '/events.parquet')
      s = pq.read_table(sys.argv[1] + '/sessions.parquet')
      print(json.dumps(\(expression), default=str))
      """
    let r = try run(["-c", script, dir])
    guard r.code == 0 else { throw RecordFailed(message: "pyarrow: \(r.err.suffix(2000))") }
    return try JSONSerialization.jsonObject(with: Data(r.out.utf8), options: .fragmentsAllowed)
  }

  static func json(_ text: String) throws -> [String: Any] {
    try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
  }
}

/// `listtape export LOG... --parquet -o OUT`: the tables as engines read them, checked
/// against `listtape stats` and `find --faults` on the same logs; and the edges.
@Suite struct ExportParquetTests {
  /// The four samples (1.0 logs) and three generated sessions (2.0, one in a
  /// subdirectory), exported once with row groups of 1,000 events.
  static let fleet: Result<(logs: String, out: String), any Error> = Result {
    let temp = try TempDir()
    keep.append(temp)
    let logs = temp.path("logs")
    try FileManager.default.createDirectory(
      atPath: logs + "/more", withIntermediateDirectories: true)
    for name in CLI.sampleNames {
      try FileManager.default.copyItem(
        atPath: CLI.samples.appendingPathComponent(name + ".ltape").path,
        toPath: logs + "/\(name).ltape")
    }
    for (seed, name) in [(21, "gen-a"), (22, "gen-b"), (23, "more/gen-c")] {
      let generated = try CLI.run(["generate", "--events", "3000", "--seed", String(seed)])
      let r = try CLI.run(["record", logs + "/\(name).ltape"], input: Data(generated.out.utf8))
      guard r.code == 0 else { throw RecordFailed(message: "record exited \(r.code)") }
    }
    let out = temp.path("tables")
    let r = try CLI.run(["export", logs, "--parquet", "-o", out, "--row-group-rows", "1000"])
    guard r.code == 0 else { throw RecordFailed(message: "export exited \(r.code): \(r.err)") }
    return (logs, out)
  }

  nonisolated(unsafe) private static var keep: [TempDir] = []

  /// The logs of the fleet, as `find` and `stats` name them.
  static func logPaths(_ logs: String) -> [String] {
    (CLI.sampleNames + ["gen-a", "gen-b", "more/gen-c"]).map { logs + "/\($0).ltape" }.sorted()
  }

  /// Checks what `engine` counts against `listtape stats` and `find --faults`, log by log,
  /// and the faults by kind against `stats` over the whole directory.
  func agrees(_ engine: String, rowGroups: Bool) throws {
    let (logs, out) = try Self.fleet.get()
    let counted = try Python.count(engine, out)
    let sessions = try #require(counted["sessions"] as? [String: [String: Any]])
    let events = try #require(counted["events"] as? [String: [String: Any]])
    let faultRows = try #require(counted["faults"] as? [[Any]])
    let paths = Self.logPaths(logs)
    #expect(Set(sessions.keys) == Set(paths))
    #expect(Set(events.keys) == Set(paths))
    var totalEvents = 0
    for path in paths {
      let stats = try Python.json(try CLI.run(["stats", path, "--json"]).out)
      let n = try #require(stats["events"] as? Int)
      totalEvents += n
      let marks = (stats["ops"] as? [String: Int])?["mark"] ?? 0
      let session = try #require(sessions[path])
      let rows = try #require(events[path])
      #expect(session["events"] as? Int == n, "\(engine) \(path)")
      #expect(session["faults"] as? Int == stats["faults"] as? Int, "\(engine) \(path)")
      #expect(session["bytes"] as? Int == stats["bytes"] as? Int, "\(engine) \(path)")
      #expect(session["format"] as? Int == stats["format"] as? Int, "\(engine) \(path)")
      #expect(session["marks"] as? Int == marks, "\(engine) \(path)")
      #expect(session["first_ms"] as? Int == stats["firstTime"] as? Int, "\(engine) \(path)")
      #expect(session["last_ms"] as? Int == stats["lastTime"] as? Int, "\(engine) \(path)")
      #expect(session["damaged"] as? Bool == false)
      #expect(rows["rows"] as? Int == n, "\(engine) \(path)")
      #expect(rows["max_event"] as? Int == n, "\(engine) \(path)")
      #expect(rows["faults"] as? Int == stats["faults"] as? Int, "\(engine) \(path)")
      #expect(rows["marks"] as? Int == marks, "\(engine) \(path)")
      #expect(rows["first_ms"] as? Int == stats["firstTime"] as? Int, "\(engine) \(path)")
      #expect(rows["last_ms"] as? Int == stats["lastTime"] as? Int, "\(engine) \(path)")
      // Every fault `find --faults` lists, and no other, with its op and reason.
      let find = try CLI.run(["find", path, "--faults", "--json"])
      let listed = try find.out.split(separator: "\n").map { line -> String in
        let f = try Python.json(String(line))
        return "\(f["event"] ?? "") \(f["op"] ?? "") \(f["reason"] ?? "")"
      }
      let read = faultRows.filter { $0.first as? String == path }.map {
        "\($0[1]) \($0[2]) \($0[4])"
      }
      #expect(read.sorted() == listed.sorted(), "\(engine) \(path)")
      #expect(!listed.isEmpty)
    }
    // Faults by kind: the sessions' columns added up, as `stats` adds up many logs.
    let many = try Python.json(try CLI.run(["stats", logs, "--json"]).out)
    #expect(many["events"] as? Int == totalEvents)
    var kinds: [String: Int] = [:]
    for session in sessions.values {
      for (kind, n) in session["faultsByKind"] as? [String: Int] ?? [:] {
        kinds[kind, default: 0] += n
      }
    }
    #expect(kinds == many["faultsByReason"] as? [String: Int], "\(engine)")
    if rowGroups {
      // 1,000 events per row group: each of the 3,000-event logs fills three.
      let expected = (totalEvents + 999) / 1000
      #expect(counted["row_groups"] as? Int ?? 0 >= expected, "\(engine)")
    }
  }

  @Test(.enabled(if: pythonHas("pyarrow"), "pyarrow is not installed (pip install pyarrow)"))
  func pyarrowCountsWhatStatsAndFindCount() throws {
    try agrees("pyarrow", rowGroups: true)
  }

  @Test(.enabled(if: pythonHas("duckdb"), "duckdb is not installed (pip install duckdb)"))
  func duckDBCountsWhatStatsAndFindCount() throws {
    try agrees("duckdb", rowGroups: true)
  }

  @Test(.enabled(if: pythonHas("chdb"), "chdb is not installed (pip install chdb)"))
  func clickHouseCountsWhatStatsAndFindCount() throws {
    try agrees("chdb", rowGroups: false)
  }

  /// docs/fleet.md's first query ("sessions whose first fault is a hidden-item selection")
  /// answers what `find --faults` says of each log.
  @Test(.enabled(if: pythonHas("duckdb"), "duckdb is not installed (pip install duckdb)"))
  func theDocumentedDuckDBQueryAgreesWithFind() throws {
    let (logs, out) = try Self.fleet.get()
    let doc = try String(
      contentsOf: CLI.packageRoot.appendingPathComponent("docs/fleet.md"), encoding: .utf8)
    let start = try #require(doc.range(of: "```sql\n"))
    let end = try #require(doc.range(of: "```", range: start.upperBound..<doc.endIndex))
    let sql = doc[start.upperBound..<end.lowerBound].replacingOccurrences(
      of: "'tables/events.parquet'", with: "'\(out)/events.parquet'")
    #expect(sql.contains("having arg_min(fault, event) = 'hiddenItem'"))
    let r = try Python.run([
      "-c", "import duckdb, json, sys; print(json.dumps(duckdb.sql(sys.argv[1]).fetchall()))",
      sql,
    ])
    #expect(r.code == 0, "\(r.err)")
    let rows = try #require(
      try JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [[Any]])
    let answered = Set(rows.map { "\($0[0]) \($0[1])" })
    var expected: Set<String> = []
    for path in Self.logPaths(logs) {
      let find = try CLI.run(["find", path, "--faults", "--json"])
      guard let line = find.out.split(separator: "\n").first else { continue }
      let first = try Python.json(String(line))
      if (first["reason"] as? String)?.hasSuffix("is not visible (an ancestor is collapsed)")
        == true
      {
        expected.insert("\(path) \(first["event"] ?? "")")
      }
    }
    #expect(!expected.isEmpty)
    #expect(answered == expected)
  }

  /// Each column of the handmade session's rows, by event.
  /// A row read back by pyarrow as one line: values apart by spaces, null as `-`, lists in
  /// brackets.
  static func text(_ row: [Any]) -> String {
    row.map { v in
      if v is NSNull { return "-" }
      if let list = v as? [String] { return "[" + list.joined(separator: ",") + "]" }
      return "\(v)"
    }.joined(separator: " ")
  }

  @Test(.enabled(if: pythonHas("pyarrow"), "pyarrow is not installed (pip install pyarrow)"))
  func rowsSayWhatEachEventDid() throws {
    let dir = try TempDir()
    var lines = Handmade.lines
    lines.append(#"{"op":"select","items":["mouse","Weather"]}"#)  // a fault: single mode
    lines.append(
      #"{"op":"batch","events":[{"op":"mark","label":"in"},{"op":"deleteItems","items":["Weather"]}]}"#
    )
    let log = try Handmade.record(in: dir, lines: lines)
    let out = dir.path("out")
    let r = try CLI.run(["export", log, "--parquet", "-o", out])
    #expect(r.code == 0, "\(r.err)")
    #expect(r.out.isEmpty)
    #expect(
      r.err == "listtape: exported 14 events of 1 log to \(out) (events.parquet "
        + "\(size(out + "/events.parquet")) bytes, sessions.parquet "
        + "\(size(out + "/sessions.parquet")) bytes)\n")
    let rows = try #require(
      try Python.pyarrow(
        out,
        "[[r[c] for c in ['event','op','section','parent','anchor','ids','fault','label',"
          + "'sections','items','visible','selected','depth']] for r in t.to_pylist()]")
        as? [[Any]])
    #expect(
      rows.map(Self.text) == [
        "1 appendSections - - - [main] - - 1 0 0 0 -",
        "2 appendItems main - - [Communication,mic,phone,Devices,mouse,Weather] - - 1 6 3 0 1",
        "3 expand - - - [Communication] - - 1 6 5 0 1",
        "4 select - - - [mic] - - 1 6 5 1 1",
        "5 mark - - - [] - before 1 6 5 1 1",
        "6 deleteItems - - - [phone] - - 1 5 4 1 1",
        "7 appendItems - Devices - [keyboard] - - 1 6 4 1 1",
        "8 moveItem - - keyboard [mic] - - 1 6 3 0 1",  // mic hidden under Devices
        "9 expand - - - [Devices] - - 1 6 6 0 1",
        "10 collapse - - - [Communication] - - 1 6 6 0 1",
        "11 update - - - [Weather] - - 1 6 6 0 1",
        "12 select - - - [keyboard] - - 1 6 6 1 1",
        "13 select - - - [mouse,Weather] tooManySelected - 1 6 6 1 1",
        "14 batch - - - [Weather] - in 1 5 5 1 1",
      ])
    let session = try #require(
      try Python.pyarrow(out, "s.to_pylist()[0]") as? [String: Any])
    #expect(session["events"] as? Int == 14)
    #expect(session["faults"] as? Int == 1)
    #expect(session["faults_tooManySelected"] as? Int == 1)
    #expect(session["marks"] as? Int == 1)  // a mark inside a batch is not a mark event
    #expect(session["damaged"] as? Bool == false)
    #expect(session["damage"] is NSNull)
    #expect(session["items"] as? Int == 5)
    #expect(session["depth"] as? Int == 1)
  }

  /// Ids a 1.0 log's events name but the list never had are held as text, not as keys:
  /// they land in their own rows among keyed values and nulls, sites and labels too.
  @Test(.enabled(if: pythonHas("pyarrow"), "pyarrow is not installed (pip install pyarrow)"))
  func idsHeldAsTextLandInTheirRows() throws {
    let dir = try TempDir()
    let log = dir.path("form.ltape")
    try FileManager.default.copyItem(
      atPath: CLI.samples.appendingPathComponent("form.ltape").path, toPath: log)
    let lines = [
      #"{"op":"appendItems","items":["x1"],"parent":"nope","site":"A.swift:1"}"#,
      #"{"op":"mark","label":"m"}"#,
      #"{"op":"moveItem","item":"x2","after":"ghost"}"#,
      #"{"op":"insertItems","items":["x3"],"before":"ghost2","site":"B.swift:2 f()"}"#,
      #"{"op":"appendItems","items":["x4"],"section":"nosection"}"#,
    ]
    let recorded = try CLI.run(
      ["record", log], input: Data((lines.joined(separator: "\n") + "\n").utf8))
    #expect(recorded.code == 0, "\(recorded.err)")
    let out = dir.path("out")
    let r = try CLI.run(["export", log, "--parquet", "-o", out])
    #expect(r.code == 0, "\(r.err)")
    let rows = try #require(
      try Python.pyarrow(
        out,
        "[[r[c] for c in ['event','op','site','section','parent','anchor','ids','fault','label']]"
          + " for r in t.to_pylist()[-6:]]")
        as? [[Any]])
    #expect(
      rows.map(Self.text) == [
        "41 mark - - - - [] - form complete",
        "42 appendItems A.swift:1 - nope - [x1] missingParent -",
        "43 mark - - - - [] - m",
        "44 moveItem - - - ghost [x2] missingItem -",
        "45 insertItems B.swift:2 f() - - ghost2 [x3] missingAnchor -",
        "46 appendItems - nosection - - [x4] missingSection -",
      ])
  }

  /// The counts after each event are the list's as `show --json` prints it.
  @Test(.enabled(if: pythonHas("pyarrow"), "pyarrow is not installed (pip install pyarrow)"))
  func stateCountsAreShowsAtEveryEvent() throws {
    let (logs, out) = try Self.fleet.get()
    let log = logs + "/gen-a.ltape"
    let counted = try #require(
      try Python.pyarrow(
        out,
        "[[r['event'], r['sections'], r['items'], r['visible'], r['selected'], r['depth']] "
          + "for r in t.to_pylist() if r['log'] == '\(log)' and r['event'] % 250 == 0]")
        as? [[Any]])
    #expect(counted.count == 12)
    for row in counted {
      let n = try #require(row[0] as? Int)
      let show = try Python.json(try CLI.run(["show", log, "--at", String(n), "--json"]).out)
      let sections = try #require(show["sections"] as? [[String: Any]])
      let items = sections.flatMap { $0["items"] as? [[String: Any]] ?? [] }
      let visible = sections.reduce(0) { $0 + (($1["visible"] as? [Any])?.count ?? 0) }
      let depth = items.compactMap { $0["level"] as? Int }.max()
      #expect(row[1] as? Int == sections.count, "event \(n)")
      #expect(row[2] as? Int == items.count, "event \(n)")
      #expect(row[3] as? Int == visible, "event \(n)")
      #expect(row[4] as? Int == (show["selected"] as? [Any])?.count, "event \(n)")
      #expect((row[5] as? Int) == depth, "event \(n)")
    }
  }

  func size(_ path: String) -> String {
    let n =
      (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?
      .intValue ?? -1
    return n.formatted(.number.grouping(.automatic).locale(Locale(identifier: "en_US")))
  }

  // MARK: Edges

  /// A staging directory left beside OUT would be a partial output.
  func leftovers(in dir: TempDir) throws -> [String] {
    try FileManager.default.contentsOfDirectory(atPath: dir.url.path).filter {
      $0.contains(".partial-")
    }
  }

  /// An id met before and after a dictionary restart in one row group is held twice in its
  /// column's dictionary (the export does not hash ids it numbers): every engine reads the
  /// row's ids as recorded.
  @Test(.enabled(if: pythonHas("duckdb"), "duckdb is not installed (pip install duckdb)"))
  func idsRenumberedByARestartReadBackAsRecorded() throws {
    let dir = try TempDir()
    var lines = [FollowTests.opening, #"{"op":"appendItems","section":"main","items":["keep"]}"#]
    for round in 0..<5 {
      lines.append(#"{"op":"select","items":["keep"]}"#)
      lines += FollowTests.churn(round)
    }
    lines.append(#"{"op":"select","items":["keep"]}"#)
    let log = dir.path("churn.ltape")
    let r = try CLI.run(["record", log], input: Data((lines.joined(separator: "\n") + "\n").utf8))
    #expect(r.code == 0, "\(r.err)")
    #expect(try LogReader(path: log).restartSeq(after: 0) != nil, "no dictionary restart")
    let out = dir.path("out")
    #expect(try CLI.run(["export", log, "--parquet", "-o", out]).code == 0)
    let query = """
      import duckdb, json, sys
      rows = duckdb.sql("select event, op, ids from '" + sys.argv[1] + "/events.parquet' "
        + "order by event").fetchall()
      print(json.dumps([[e, o, i] for e, o, i in rows]))
      """
    let read = try Python.run(["-c", query, out])
    #expect(read.code == 0, "\(read.err)")
    let rows = try #require(
      try JSONSerialization.jsonObject(with: Data(read.out.utf8)) as? [[Any]])
    #expect(rows.count == lines.count)
    for (n, row) in rows.enumerated() {
      let line = try Python.json(lines[n])
      let ids = (line["items"] ?? line["sections"]) as? [String]
      #expect(row[0] as? Int == n + 1)
      #expect(row[1] as? String == line["op"] as? String, "event \(n + 1)")
      #expect(row[2] as? [String] == ids, "event \(n + 1)")
    }
  }

  @Test func anExistingOutputIsRefusedUnlessForced() throws {
    let dir = try TempDir()
    let log = try CLI.record(CLI.sample("symbols"), in: dir)
    let out = dir.path("out")
    try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: false)
    try Data("mine".utf8).write(to: URL(fileURLWithPath: out + "/events.parquet"))
    let refused = try CLI.run(["export", log, "--parquet", "-o", out])
    #expect(refused.code == 73)
    #expect(refused.err.hasPrefix("listtape: error: \(out) already exists"), "\(refused.err)")
    #expect(try String(contentsOfFile: out + "/events.parquet", encoding: .utf8) == "mine")
    let forced = try CLI.run(["export", log, "--parquet", "-o", out, "--force", "--json"])
    #expect(forced.code == 0, "\(forced.err)")
    let summary = try Python.json(forced.out)
    #expect(summary["events"] as? Int == 105)
    #expect(summary["logs"] as? Int == 1)
    let bytes = try Data(contentsOf: URL(fileURLWithPath: out + "/events.parquet"))
    #expect(bytes.prefix(4) == Data("PAR1".utf8) && bytes.suffix(4) == Data("PAR1".utf8))
    #expect(try leftovers(in: dir).isEmpty)
    // A file in the way is refused even with --force; a dangling symlink is in the way too.
    let file = dir.path("file")
    try Data("x".utf8).write(to: URL(fileURLWithPath: file))
    let notDirectory = try CLI.run(["export", log, "--parquet", "-o", file, "--force"])
    #expect(notDirectory.code == 73)
    #expect(notDirectory.err.contains("is not a directory"))
    let link = dir.path("link")
    try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: dir.path("gone"))
    #expect(try CLI.run(["export", log, "--parquet", "-o", link]).code == 73)
    #expect(try leftovers(in: dir).isEmpty)
  }

  @Test func aFileThatIsNotALogWritesNothing() throws {
    let dir = try TempDir()
    let junk = dir.path("notes.ltape")
    try Data("hello, this is not a log\n".utf8).write(to: URL(fileURLWithPath: junk))
    let out = dir.path("out")
    let r = try CLI.run(["export", junk, "--parquet", "-o", out])
    #expect(r.code == 2)
    #expect(r.out.isEmpty)
    #expect(r.err.hasPrefix("listtape: error: "), "\(r.err)")
    #expect(r.err.contains("notes.ltape"))
    #expect(r.err.lines.filter { !$0.isEmpty }.count == 1)
    #expect(!FileManager.default.fileExists(atPath: out))
    #expect(try leftovers(in: dir).isEmpty)
    // Several logs, none readable: each named, then the error; nothing written either.
    let other = dir.path("other.ltape")
    try Data("nor is this\n".utf8).write(to: URL(fileURLWithPath: other))
    let none = try CLI.run(["export", junk, other, "--parquet", "-o", out])
    #expect(none.code == 2)
    #expect(none.err.contains("listtape: warning: skipped \(other): "))
    #expect(
      none.err.hasSuffix("listtape: error: no log could be read; nothing written to \(out)\n"))
    #expect(!FileManager.default.fileExists(atPath: out))
    #expect(try leftovers(in: dir).isEmpty)
    let missing = try CLI.run(["export", dir.path("absent.ltape"), "--parquet", "-o", out])
    #expect(missing.code == 66)
    #expect(missing.err.contains("absent.ltape"))
    #expect(!FileManager.default.fileExists(atPath: out))
  }

  @Test func aJunkFileAmongLogsIsSkippedAndNamed() throws {
    let dir = try TempDir()
    try FileManager.default.createDirectory(
      atPath: dir.path("logs"), withIntermediateDirectories: false)
    _ = try CLI.record(CLI.sample("symbols"), in: dir, name: "logs/a.ltape")
    _ = try CLI.record(CLI.sample("form"), in: dir, name: "logs/b.ltape")
    try Data("not a log\n".utf8).write(to: URL(fileURLWithPath: dir.path("logs/junk.ltape")))
    let out = dir.path("out")
    let r = try CLI.run(["export", dir.path("logs"), "--parquet", "-o", out, "--json"])
    #expect(r.code == 2)
    #expect(r.err.contains("listtape: warning: skipped \(dir.path("logs/junk.ltape")): "))
    let summary = try Python.json(r.out)
    #expect(summary["logs"] as? Int == 2)
    #expect(summary["events"] as? Int == 105 + 41)
    #expect(
      (summary["skippedLogs"] as? [[String: Any]])?.first?["log"] as? String
        == dir.path("logs/junk.ltape"))
    #expect(FileManager.default.fileExists(atPath: out + "/sessions.parquet"))
  }

  /// A bad frame in the middle, and a torn tail: the events before the damage are
  /// exported, the damage is named on standard error and in the sessions row, exit 2.
  @Test(arguments: ["middle", "tail"])
  func aDamagedLogExportsItsReadablePart(_ where: String) throws {
    let dir = try TempDir()
    let generated = try CLI.run(["generate", "--events", "20000", "--seed", "3"])
    let log = dir.path("big.ltape")
    #expect(try CLI.run(["record", log], input: Data(generated.out.utf8)).code == 0)
    let whole = dir.path("whole")
    #expect(try CLI.run(["export", log, "--parquet", "-o", whole]).code == 0)
    var bytes = try Data(contentsOf: URL(fileURLWithPath: log))
    if `where` == "middle" {
      bytes[bytes.count / 2] ^= 0x5A
    } else {
      bytes.removeLast(7)
    }
    try bytes.write(to: URL(fileURLWithPath: log))
    let stats = try CLI.run(["stats", log, "--json"])
    #expect(stats.code == 2)
    let readable = try #require(try Python.json(stats.out)["events"] as? Int)
    #expect(readable > 0 && readable < 20_000)
    let out = dir.path("out")
    let r = try CLI.run(["export", log, "--parquet", "-o", out, "--json"])
    #expect(r.code == 2)
    let warning = `where` == "middle" ? "damaged frame at byte " : "torn tail at byte "
    #expect(r.err.hasPrefix("listtape: warning: \(warning)"), "\(r.err)")
    let summary = try Python.json(r.out)
    #expect(summary["events"] as? Int == readable)
    #expect(summary["damagedLogs"] as? [String] == [log])
    if pythonHas("pyarrow") {
      let session = try #require(try Python.pyarrow(out, "s.to_pylist()[0]") as? [String: Any])
      #expect(session["damaged"] as? Bool == true)
      #expect((session["damage"] as? String)?.hasPrefix(warning) == true)
      #expect(session["events"] as? Int == readable)
      #expect(try Python.pyarrow(out, "t.num_rows") as? Int == readable)
    }
  }

  /// A salvaged log reads whole with lost ranges: exported with a warning, exit 2 (as
  /// `stats` does, under the damaged-log policy), and the numbers it lost counted in
  /// `lost_events`.
  @Test(.enabled(if: pythonHas("pyarrow"), "pyarrow is not installed (pip install pyarrow)"))
  func aSalvagedLogCountsWhatItLost() throws {
    let dir = try TempDir()
    // About 580 KB: room for a burst wider than the parity repairs, well before the end.
    let generated = try CLI.run(["generate", "--events", "100000", "--seed", "3"])
    let log = dir.path("big.ltape")
    #expect(try CLI.run(["record", log], input: Data(generated.out.utf8)).code == 0)
    let whole = dir.path("whole")
    #expect(try CLI.run(["export", log, "--parquet", "-o", whole]).code == 0)
    var bytes = try Data(contentsOf: URL(fileURLWithPath: log))
    // Wider than the parity frames repair (docs/log-format.md): events are lost.
    let start = bytes.count / 4
    for i in start..<min(bytes.count - 64, start + 80 * 1024) { bytes[i] = 0 }
    try bytes.write(to: URL(fileURLWithPath: log))
    let salvaged = dir.path("salvaged.ltape")
    #expect(try CLI.run(["salvage", log, "-o", salvaged]).code == 0)
    let stats = try CLI.run(["stats", salvaged, "--json"])
    let events = try #require(try Python.json(stats.out)["events"] as? Int)
    let out = dir.path("out")
    let r = try CLI.run(["export", salvaged, "--parquet", "-o", out])
    #expect(stats.code == 2)
    #expect(r.code == stats.code)
    #expect(r.err.contains("listtape: warning: salvaged log: events "), "\(r.err)")
    let session = try #require(try Python.pyarrow(out, "s.to_pylist()[0]") as? [String: Any])
    let lost = try #require(session["lost_events"] as? Int)
    let rows = try #require(try Python.pyarrow(out, "t.num_rows") as? Int)
    #expect(lost > 0)
    #expect(session["events"] as? Int == events)
    #expect(rows + lost == events)
    #expect(session["damaged"] as? Bool == false)
    // Each event the salvaged log kept names the ids the whole log's row names: across the
    // recovery point the fold re-anchored at, and the dictionary restarts on either side.
    let compare = """
      import json, sys, pyarrow.parquet as pq
      cols = ['event', 'op', 'section', 'parent', 'anchor', 'ids']
      whole = {r['event']: r for r in pq.read_table(sys.argv[1] + '/events.parquet', columns=cols).to_pylist()}
      kept = pq.read_table(sys.argv[2] + '/events.parquet', columns=cols).to_pylist()
      print(json.dumps([len(kept), [r['event'] for r in kept if whole.get(r['event']) != r][:5]]))
      """
    let compared = try Python.run(["-c", compare, whole, out])
    #expect(compared.code == 0, "\(compared.err)")
    let verdict = try #require(
      try JSONSerialization.jsonObject(with: Data(compared.out.utf8)) as? [Any])
    #expect(verdict.first as? Int == rows)
    #expect((verdict.last as? [Int])?.isEmpty == true, "rows unlike the whole log's: \(verdict)")
  }

  @Test(arguments: [
    (["--swift", "a.ltape", "b.ltape"], "'--swift' takes one log"),
    (["--parquet", "a.ltape"], "Missing '-o, --output <out>'"),
    (["--parquet", "a.ltape", "-o", "x", "--at", "3"], "'--at' goes with '--swift'"),
    (["--parquet", "a.ltape", "-o", "-"], "'-o -' (standard output) cannot hold them"),
    (["--parquet", "--swift", "a.ltape", "-o", "x"], "cannot be used together"),
    (["a.ltape"], "Missing '--swift' or '--parquet'"),
    (["a.ltape", "--swift", "--json"], "go with '--parquet'"),
    (["a.ltape", "--parquet", "-o", "x", "--row-group-rows", "0"], "--row-group-rows"),
  ])
  func usageErrors(_ args: [String], _ message: String) throws {
    let r = try CLI.run(["export"] + args)
    #expect(r.code == 64)
    #expect(r.err.hasPrefix("Error: "), "\(r.err)")
    #expect(r.err.contains(message), "\(r.err)")
  }
}

/// PySpark's tests, one at a time: each starts a JVM that takes a core for a minute.
@Suite(.serialized) struct ExportSparkTests {
  @Test(
    .enabled(
      if: pythonHas("pyspark") && toolAvailable("java"),
      "pyspark or java is missing (pip install pyspark; Java 17)"))
  func sparkCountsWhatStatsAndFindCount() throws {
    try ExportParquetTests().agrees("spark", rowGroups: false)
  }

  // MARK: The Spark job

  /// `Tools/fleet/find_job.py` in local mode finds what `listtape find DIR` finds.
  @Test(
    .enabled(
      if: pythonHas("pyspark") && toolAvailable("java"),
      "pyspark or java is missing (pip install pyspark; Java 17)"))
  func sparkJobFindsWhatFindFinds() throws {
    let (logs, _) = try ExportParquetTests.fleet.get()
    let dir = try TempDir()
    let junk = dir.path("junk.ltape")
    try Data("not a log\n".utf8).write(to: URL(fileURLWithPath: junk))
    let expression = "count(selected) > 0 and count(items) > 20"
    let find = try CLI.run(["find", "--where", expression, logs, junk, "--json"])
    #expect(find.code == 0)
    var expected: Set<String> = []
    for line in find.out.split(separator: "\n") {
      let o = try Python.json(String(line))
      guard let log = o["log"] as? String else { continue }
      if let n = o["event"] as? Int {
        expected.insert("\(log) \(n) \(o["op"] as? String ?? "-")")
      } else if let problem = o["problem"] as? String {
        expected.insert("\(log) error \(problem)")
      }
    }
    #expect(expected.count >= 4)
    let job = try Python.run([
      Python.fleet.appendingPathComponent("find_job.py").path, "--master", "local[1]",
      "--listtape", CLI.binary.path, "--where", expression, "--partitions", "5", logs, junk,
    ])
    #expect(job.code == 0, "\(job.err.suffix(3000))")
    var found: Set<String> = []
    for line in job.out.split(separator: "\n") {
      let o = try Python.json(String(line))
      let log = try #require(o["log"] as? String)
      if let error = o["error"] as? String {
        found.insert("\(log) error \(error)")
      } else {
        found.insert("\(log) \(o["event"] as? Int ?? -1) \(o["op"] as? String ?? "-")")
      }
    }
    #expect(found == expected)
  }
}
