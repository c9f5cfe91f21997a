import Foundation
import Testing

/// Sites (issue 30) through the built binary: recorded, given back, refused when malformed.
@Suite struct SiteCommandTests {
  /// A session with sites on most events, one inside a batch, one fault (event 5).
  static let session = """
    {"op":"appendSections","sections":["main"],"t":1000,"site":"ListVC.swift:10 viewDidLoad()"}
    {"op":"appendItems","items":["a","b","c"],"t":2000,"site":"ListVC.swift:20 load()"}
    {"op":"expand","items":["a"],"t":3000}
    {"op":"batch","events":[{"op":"deleteItems","items":["b"],"t":3500,"site":"ListVC.swift:30 delete(_:)"},{"op":"mark","label":"m"}],"t":4000,"site":"ListVC.swift:40 commit()"}
    {"op":"select","items":["zz"],"t":5000,"site":"ListVC.swift:50 tap(_:)"}
    {"op":"deleteItems","items":["a"],"t":6000,"site":"ListVC.swift:30 delete(_:)"}

    """

  /// A log of `session` in `dir`.
  static func log(_ dir: TempDir) throws -> String {
    let path = dir.path("sites.ltape")
    let r = try CLI.run(["record", path], input: Data(session.utf8))
    #expect(r.code == 0, "\(r.err)")
    return path
  }

  @Test func recordKeepsSitesAndEventsJSONGivesThemBackExactly() throws {
    let dir = try TempDir()
    let path = try Self.log(dir)
    let r = try CLI.run(["events", path, "--json"])
    #expect(r.code == 0)
    #expect(r.out == Self.session)
    // Recording the output again gives the same lines (sites included).
    let again = dir.path("again.ltape")
    #expect(try CLI.run(["record", again], input: Data(r.out.utf8)).code == 0)
    #expect(try CLI.run(["events", again, "--json"]).out == Self.session)
  }

  @Test func malformedSitesAreRejectedWithTheirLineAndField() throws {
    let dir = try TempDir()
    let path = dir.path("bad.ltape")
    let input = """
      {"op":"appendSections","sections":["main"],"site":7}
      {"op":"appendSections","sections":["s2"],"site":""}
      {"op":"appendSections","sections":["s3"],"site":{"file":"A.swift"}}
      {"op":"batch","events":[{"op":"mark","label":"x","site":false}]}
      {"op":"appendSections","sections":["s4"],"site":null}
      {"op":"appendSections","sections":["s5"],"site":"A.swift:1"}

      """
    let r = try CLI.run(["record", path], input: Data(input.utf8))
    #expect(r.code == 65)
    #expect(r.err.contains(#"listtape: line 1: field "site" must be a string, found integer"#))
    #expect(r.err.contains(#"listtape: line 2: field "site" must not be empty"#))
    #expect(r.err.contains(#"listtape: line 3: field "site" must be a string, found object"#))
    #expect(
      r.err.contains(
        #"listtape: line 4: event 1 of the batch: field "site" must be a string, found boolean"#))
    #expect(r.err.contains("recorded 2 events to \(path) (4 malformed lines, 0 faults"))
    let events = try CLI.run(["events", path, "--json"])
    #expect(events.out.lines.filter { !$0.isEmpty }.count == 2)
    #expect(events.out.contains(#""site":"A.swift:1""#))
  }

  static let load = "at ListVC.swift:20 load()"
  static let commit = "at ListVC.swift:40 commit()"
  static let tap = "at ListVC.swift:50 tap(_:)"
  static let delete = "at ListVC.swift:30 delete(_:)"

  /// The lines of a command's standard output, which must succeed with `code`.
  static func lines(_ arguments: [String], code: Int32 = 0) throws -> [String] {
    let r = try CLI.run(arguments + ["--color", "never"])
    #expect(r.code == code, "\(arguments): \(r.err)")
    return r.out.lines.filter { !$0.isEmpty }.map(String.init)
  }

  /// The JSON objects of a command's standard output.
  static func objects(_ arguments: [String], code: Int32 = 0) throws -> [[String: Any]] {
    try lines(arguments + ["--json"], code: code).map {
      try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
    }
  }

  /// A long session whose sites are coded against the model the frames share (layout 3):
  /// `show` and `events` from the middle give each event's recorded site, without the
  /// index and from it (which stores no model), and `show --json` (which reads no site)
  /// prints the same state as for the session without sites.
  @Test func seeksIntoALongSessionGiveEachEventsSite() throws {
    let dir = try TempDir()
    let generated = try CLI.run([
      "generate", "--events", "30000", "--seed", "9", "--sites", "60", "--site-model", "screens",
    ])
    #expect(generated.code == 0)
    let lines = generated.out.lines.filter { !$0.isEmpty }.map(String.init)
    let path = dir.path("long.ltape")
    #expect(try CLI.run(["record", path], input: Data(generated.out.utf8)).code == 0)
    let bare = dir.path("bare.ltape")
    let plain = try CLI.run(["generate", "--events", "30000", "--seed", "9"])
    #expect(try CLI.run(["record", bare], input: Data(plain.out.utf8)).code == 0)
    for indexed in [false, true] {
      // Seek points every 5,000 events: each seek below starts from one.
      let spacing = ["LISTTAPE_INDEX_SPACING": "5000"]
      if indexed {
        #expect(try CLI.run(["__build-index", path], environment: spacing).code == 0)
      }
      for n in [2, 12_345, 29_999] {
        let object = try #require(
          JSONSerialization.jsonObject(with: Data(lines[n - 1].utf8)) as? [String: Any])
        let site = try #require(object["site"] as? String)
        let show = try Self.lines(["show", path, "--at", "\(n)"])
        #expect(show[0].hasSuffix("at \(site)"), "show --at \(n), index \(indexed)")
        let events = try CLI.run(["events", path, "--from", "\(n)", "--to", "\(n)", "--json"])
        #expect(events.out == lines[n - 1] + "\n", "events --from \(n), index \(indexed)")
        let json = try CLI.run(["show", path, "--at", "\(n)", "--json"])
        let expected = try CLI.run(["show", bare, "--at", "\(n)", "--json"])
        #expect(json.code == 0 && json.out == expected.out, "show --json --at \(n)")
      }
    }
  }

  @Test func eventsShowAndHistoryPrintEachEventsSite() throws {
    let dir = try TempDir()
    let path = try Self.log(dir)
    let events = try Self.lines(["events", path])
    #expect(events.count == 6)
    #expect(events[0].hasSuffix("at ListVC.swift:10 viewDidLoad()"))
    #expect(!events[2].contains(" at "))
    #expect(events[3].hasSuffix(Self.commit))
    let show = try Self.lines(["show", path, "--at", "4"])
    #expect(show[0].hasPrefix("event 4 of 6  batch") && show[0].hasSuffix(Self.commit))
    #expect(!(try Self.lines(["show", path, "--at", "3"]))[0].contains(" at "))
    let history = try Self.lines(["history", path, "--item", "a"])
    #expect(history[0].hasPrefix("#2") && history[0].hasSuffix(Self.load))
    #expect(history[4].hasPrefix("#6") && history[4].hasSuffix(Self.delete))
    let json = try Self.objects(["history", path, "--item", "a"])
    #expect(
      json.map { $0["site"] as? String } == [
        "ListVC.swift:20 load()", nil, "ListVC.swift:30 delete(_:)",
      ])
  }

  @Test func bisectAndFindNameTheSiteOfWhatTheyFind() throws {
    let dir = try TempDir()
    let path = try Self.log(dir)
    let expr = #"not exists("b") and exists("c")"#
    let bisect = try Self.lines(["bisect", path, "--where", expr])
    #expect(bisect.contains { $0.hasPrefix("event 4 of 6  batch") && $0.hasSuffix(Self.commit) })
    let result = try #require(try Self.objects(["bisect", path, "--where", expr]).last)
    #expect(result["first"] as? Int == 4)
    #expect(result["site"] as? String == "ListVC.swift:40 commit()")

    let faults = try Self.lines(["find", path, "--faults"])
    #expect(faults[0] == #"event 5: select: no item "zz"  "# + Self.tap)
    let faultJSON = try Self.objects(["find", path, "--faults"])
    #expect(faultJSON.first?["site"] as? String == "ListVC.swift:50 tap(_:)")
    let replay = try Self.lines(["replay", path], code: 3)
    #expect(replay[0] == #"event 5: select: no item "zz"  "# + Self.tap)

    let changes = try Self.lines(["find", path, "--where", #"exists("a")"#])
    #expect(changes[1].hasPrefix("event 2: false → true") && changes[1].hasSuffix(Self.load))
    #expect(changes[2].hasPrefix("event 6: true → false") && changes[2].hasSuffix(Self.delete))
    let changeJSON = try Self.objects(["find", path, "--where", #"exists("a")"#])
    #expect(
      changeJSON.prefix(2).map { $0["site"] as? String } == [
        "ListVC.swift:20 load()", "ListVC.swift:30 delete(_:)",
      ])
    // Across logs too.
    let many = try Self.lines(["find", "--where", #"exists("a")"#, path, path], code: 0)
    #expect(many[0].hasSuffix(Self.load))
  }

  @Test func divergeAndWhatIfNameTheSitesOfTheEventsThatMatter() throws {
    let dir = try TempDir()
    let path = try Self.log(dir)
    let other = dir.path("other.ltape")
    let lines =
      Self.session.split(separator: "\n").prefix(5).joined(separator: "\n")
      + "\n" + #"{"op":"deleteItems","items":["c"],"t":6000,"site":"Other.swift:7 purge()"}"# + "\n"
    #expect(try CLI.run(["record", other], input: Data(lines.utf8)).code == 0)
    let diverge = try Self.lines(["diverge", path, other])
    #expect(diverge.contains { $0.contains("#6") && $0.hasSuffix(Self.delete) })
    #expect(diverge.contains { $0.contains("#6") && $0.hasSuffix("at Other.swift:7 purge()") })
    let divergeJSON = try #require(try Self.objects(["diverge", path, other]).first)
    let a = try #require(divergeJSON["a"] as? [String: Any])
    let b = try #require(divergeJSON["b"] as? [String: Any])
    #expect(a["site"] as? String == "ListVC.swift:30 delete(_:)")
    #expect(b["site"] as? String == "Other.swift:7 purge()")

    let whatIf = try Self.lines(["what-if", path, "--without", "4"])
    #expect(
      whatIf.contains {
        $0.hasPrefix("first difference: after event 4") && $0.hasSuffix(Self.commit)
      })
    let report = try #require(try Self.objects(["what-if", path, "--without", "1"]).first)
    #expect(report["site"] as? String == "ListVC.swift:10 viewDidLoad()")
    let appeared = try #require(report["faultsAppeared"] as? [[String: Any]])
    #expect(appeared.first?["site"] as? String == "ListVC.swift:20 load()")
  }

  @Test func recordWarnsWithTheSiteAndTheHTMLPageShowsIt() throws {
    let dir = try TempDir()
    let path = dir.path("warn.ltape")
    let r = try CLI.run(["record", path], input: Data(Self.session.utf8))
    #expect(r.err.contains(#"listtape: warning: event 5: select: no item "zz"  "# + Self.tap))
    let html = dir.path("page.html")
    #expect(try CLI.run(["html", path, "-o", html]).code == 0)
    // The page carries the log; its events list says each event's site, as `events` does.
    guard chromiumAvailable() else { return }
    let dom = try Chromium.dumpDOM(html, hash: "#event=5").dom
    #expect(dom.contains(Self.commit), "\(dom.suffix(3000))")
    #expect(dom.contains(Self.tap))
  }

  /// The `site` column of `export --parquet`, read back by DuckDB with docs/fleet.md's query
  /// that ranks sites by faults across a directory of logs.
  @Test(.enabled(if: pythonHas("duckdb"), "duckdb is not installed (pip install duckdb)"))
  func parquetHasASiteColumnThatDuckDBRanksByFaults() throws {
    let dir = try TempDir()
    let logs = dir.path("logs")
    try FileManager.default.createDirectory(atPath: logs, withIntermediateDirectories: true)
    for name in ["a", "b"] {
      let r = try CLI.run(["record", "\(logs)/\(name).ltape"], input: Data(Self.session.utf8))
      #expect(r.code == 0)
    }
    let extra = #"{"op":"expand","items":["nope"],"t":7000,"site":"Other.swift:9 open()"}"#
    #expect(try CLI.run(["record", "\(logs)/b.ltape"], input: Data((extra + "\n").utf8)).code == 0)
    let out = dir.path("tables")
    let export = try CLI.run(["export", "--parquet", logs, "-o", out])
    #expect(export.code == 0, "\(export.err)")
    func query(_ sql: String) throws -> [[Any]] {
      let r = try Python.run([
        "-c", "import duckdb, json, sys; print(json.dumps(duckdb.sql(sys.argv[1]).fetchall()))",
        sql.replacingOccurrences(of: "'tables/events.parquet'", with: "'\(out)/events.parquet'"),
      ])
      #expect(r.code == 0, "\(r.err)")
      return try #require(try JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [[Any]])
    }
    let sites = try query(
      "select event, site from 'tables/events.parquet' where log like '%a.ltape' order by event")
    #expect(
      sites.map { $0[1] as? String } == [
        "ListVC.swift:10 viewDidLoad()", "ListVC.swift:20 load()", nil, "ListVC.swift:40 commit()",
        "ListVC.swift:50 tap(_:)", "ListVC.swift:30 delete(_:)",
      ])
    let doc = try String(
      contentsOf: CLI.packageRoot.appendingPathComponent("docs/fleet.md"), encoding: .utf8)
    let marker = try #require(doc.range(of: "select site, count(*) as faults"))
    let end = try #require(doc.range(of: "```", range: marker.upperBound..<doc.endIndex))
    let ranked = try query(String(doc[marker.lowerBound..<end.lowerBound]))
    #expect(ranked.count == 2)
    #expect(ranked.first?[0] as? String == "ListVC.swift:50 tap(_:)")
    #expect(ranked.first?[1] as? Int == 2)
    #expect(ranked.first?[2] as? Int == 2)
    #expect(ranked.last?[0] as? String == "Other.swift:9 open()")
  }

  /// scrub's event bar names the site of the event shown, and of no other.
  @Test(.enabled(if: toolAvailable("tmux"), "tmux is not installed (apt-get install tmux)"))
  func scrubShowsTheSiteInTheEventBar() throws {
    let dir = try TempDir()
    let path = try Self.log(dir)
    let tmux = try TmuxSession(ScrubTests.command(path))
    let last = try tmux.waitFor("event 6 of 6")
    #expect(last.contains(Self.delete + "  deleteItems  a"))
    try tmux.keys("Left", "Left")
    let fourth = try tmux.waitFor("event 4 of 6")
    #expect(fourth.contains(Self.commit + "  batch  2 events: deleteItems, mark"))
    try tmux.keys("Left")
    let third = try tmux.waitFor("event 3 of 6")
    #expect(!third.contains(" at "), "\(third)")
    try tmux.keys("q")
    try tmux.waitFor("EXIT=0")
  }
}
