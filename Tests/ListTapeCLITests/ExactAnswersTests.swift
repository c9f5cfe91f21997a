import Foundation
import ListTapeJSON
import ListTapeLog
import ListTapeModel
import Testing

/// Issue 31.1: every answer says whether it is exact. On a salvaged log with a recovery
/// point after its gap (`RecoveredStatesTests.Fixture`: events A...B lost, exact again from
/// C), `bisect`, `diverge`, `what-if`, `shrink`, `events`, `diff`, `cut` and `export` say
/// in text and in `--json` (one key, `exact`) when what they print rests on a state that
/// is not the recorded one, and keep the log's event numbers.
@Suite struct ExactAnswersTests {
  typealias Fixture = RecoveredStatesTests.Fixture

  static func object(_ line: Substring) throws -> JSONObject {
    guard case .object(let o) = try JSONParser.parse(String(line)) else {
      throw RecordFailed(message: "not an object: \(line)")
    }
    return o
  }

  static func lastObject(_ out: String) throws -> JSONObject {
    try object(out.split(separator: "\n").last ?? "")
  }

  static func int(_ value: JSONValue?) -> Int? {
    if case .int(let n)? = value { return Int(n) }
    return nil
  }

  /// `[[a, b], …]` as ranges.
  static func ranges(_ value: JSONValue?) -> [ClosedRange<Int>] {
    guard case .array(let pairs)? = value else { return [] }
    return pairs.compactMap { pair in
      guard case .array(let ends) = pair, ends.count == 2, let a = int(ends[0]),
        let b = int(ends[1])
      else { return nil }
      return a...b
    }
  }

  /// `bisect --run` with a check that turns bad at event `k` (good before): its first bad
  /// event is `k` in the original.
  static func bisect(_ log: String, badFrom k: Int) throws -> RunResult {
    try CLI.run(["bisect", log, "--run", "test $LISTTAPE_EVENT -lt \(k)", "--json"])
  }

  @Test func bisectNeverJudgesAStateThatIsNotTheRecordedOne() throws {
    let f = try Fixture()
    let (a, c) = (f.gap.lowerBound, f.restored)
    // The answer inside the stretch the gap leaves inexact: the original knows it; the
    // salvaged log can only say it is one of A...C, and that this is not exact.
    let k = (f.gap.upperBound + c) / 2
    let original = try Self.lastObject(try Self.bisect(f.original, badFrom: k).out)
    #expect(Self.int(original["first"]) == k)
    #expect(original["exact"] == .bool(true))
    let r = try Self.bisect(f.salvaged, badFrom: k)
    #expect(r.code == 2, "\(r.err)")
    let lines = r.out.split(separator: "\n")
    let result = try Self.object(lines.last ?? "")
    #expect(result["exact"] == .bool(false))
    #expect(Self.int(result["first"]) == c)
    #expect(result["candidates"] == .array([.int(Int64(a)), .int(Int64(c))]))
    // No state after the gap and before C was judged: each probed one is a skip, labelled.
    for line in lines.dropLast() {
      let probe = try Self.object(line)
      let n = Self.int(probe["event"]) ?? -1
      if n >= a && n < c {
        #expect(probe["verdict"] == .string("skip"), "\(line)")
        #expect(probe["exact"] == .bool(false), "\(line)")
      } else {
        #expect(probe["exact"] == nil, "\(line)")
      }
    }
    let text = try CLI.run(["bisect", f.salvaged, "--run", "test $LISTTAPE_EVENT -lt \(k)"])
    #expect(text.out.contains("first bad event: one of \(a)...\(c)"), "\(text.out)")
    #expect(text.out.contains("not the recorded ones"), "\(text.out)")
    #expect(text.err.contains("skip (") && text.err.contains("not the recorded state)"))
    // Before the gap and after C the answers are the original's, and exact.
    for k in [a - 500, c + 700] {
      let salvaged = try Self.lastObject(try Self.bisect(f.salvaged, badFrom: k).out)
      #expect(Self.int(salvaged["first"]) == k, "\(k)")
      #expect(salvaged["exact"] == .bool(true), "\(k)")
      #expect(salvaged["candidates"] == .null, "\(k)")
    }
  }

  /// The forward scan `--where` uses, over the stretch: an item created in it and kept to
  /// the end makes `exists` turn true there (the original's answer); the salvaged log says
  /// it lies in A...C, not exact.
  @Test func bisectWhereScansPastTheStretchWithoutJudgingIt() throws {
    let f = try Fixture()
    let (a, c) = (f.gap.lowerBound, f.restored)
    var found: (id: String, first: Int)?
    for n in (f.gap.upperBound + 1)..<c where found == nil {
      guard case .appendItems(let nodes, _, _) = f.events[n - 1].operation else { continue }
      for id in nodes.map(\.id).prefix(1) {
        let changes = try CLI.run(["find", f.original, "--where", "exists(\"\(id)\")", "--json"])
          .out.split(separator: "\n").dropLast()
        if changes.count == 1, let only = changes.first,
          let at = Self.int(try Self.object(only)["event"]), at == n
        {
          found = (id, n)
        }
      }
    }
    let (id, first) = try #require(found, "an item created in the stretch and kept")
    let expression = "exists(\"\(id)\")"
    let original = try Self.lastObject(
      try CLI.run(["bisect", f.original, "--where", expression, "--json"]).out)
    #expect(Self.int(original["first"]) == first)
    let r = try CLI.run(["bisect", f.salvaged, "--where", expression, "--json"])
    let result = try Self.lastObject(r.out)
    #expect(result["exact"] == .bool(false), "\(r.out.suffix(400))")
    #expect(Self.int(result["first"]) == c)
    #expect(result["candidates"] == .array([.int(Int64(a)), .int(Int64(c))]))

    // find over several logs: the salvaged log's first match among its recorded states,
    // labelled; the original's, exact (no key).
    let many = try CLI.run(["find", "--where", expression, f.original, f.salvaged, "--json"])
    let lines = try many.out.split(separator: "\n").dropLast().map(Self.object)
    func line(of log: String) -> JSONObject? { lines.first { $0["log"] == .string(log) } }
    let fromOriginal = try #require(line(of: f.original))
    #expect(Self.int(fromOriginal["event"]) == first)
    #expect(fromOriginal["exact"] == nil)
    let fromSalvaged = try #require(line(of: f.salvaged))
    #expect((Self.int(fromSalvaged["event"]) ?? 0) >= c)
    #expect(fromSalvaged["exact"] == .bool(false))
    let text = try CLI.run(["find", "--where", expression, f.original, f.salvaged])
    #expect(text.out.contains("(not exact: states after events lost in a salvage"), "\(text.out)")
  }

  @Test func divergeOfALogAndItsSalvageNamesTheLostStretch() throws {
    let f = try Fixture()
    let (a, c) = (f.gap.lowerBound, f.restored)
    let text = try CLI.run(["diverge", f.original, f.salvaged])
    #expect(text.code == 2)
    #expect(!text.out.contains("never diverge"), "\(text.out)")
    #expect(!text.out.contains("the states are equal at every event"), "\(text.out)")
    #expect(text.out.contains("part at event \(a)"), "\(text.out)")
    #expect(text.out.contains("events \(a)...\(c - 1) are not the recorded ones"), "\(text.out)")
    #expect(!text.out.contains("past its last event"), "\(text.out)")
    #expect(text.out.contains("lost in a salvage"), "\(text.out)")
    let json = try Self.object(
      try CLI.run(["diverge", f.original, f.salvaged, "--json"]).out.dropLast())
    #expect(Self.int(json["event"]) == a)
    #expect(json["exact"] == .bool(false))
    #expect(Self.ranges(json["notCompared"]) == [a...(c - 1)])
    #expect(json["diff"] == .null)

    // A recording that differs from the original after C: the first difference among the
    // states compared, not exact (the stretch before it was not compared).
    let cut = f.dir.path("branch.ltape")
    let at = c + 1_000
    #expect(try CLI.run(["cut", f.original, "--to", "\(at)", "-o", cut]).code == 0)
    let extra = #"{"op":"appendSections","sections":["diverged"],"t":1}"# + "\n"
    #expect(try CLI.run(["record", cut], input: Data(extra.utf8)).code == 0)
    let later = try Self.object(
      try CLI.run(["diverge", f.salvaged, cut, "--json"]).out.dropLast())
    #expect(Self.int(later["event"]) == at + 1)
    #expect(later["exact"] == .bool(false))
    #expect(Self.ranges(later["notCompared"]) == [a...(c - 1)])
    // Against the original itself the same difference is exact.
    let exact = try Self.object(try CLI.run(["diverge", f.original, cut, "--json"]).out.dropLast())
    #expect(Self.int(exact["event"]) == at + 1)
    #expect(exact["exact"] == .bool(true))
    #expect(Self.ranges(exact["notCompared"]) == [])
  }

  /// `cut` and `what-if -o` write logs in which event N is the log's event N: lost events
  /// stay a gap, removed ones become marks, and the recovery point restores the states.
  @Test func cutAndWhatIfKeepTheLogsNumbers() throws {
    let f = try Fixture()
    let (a, c) = (f.gap.lowerBound, f.restored)
    let cut = f.dir.path("cut.ltape")
    let end = c + 2_000
    #expect(try CLI.run(["cut", f.salvaged, "--to", "\(end)", "-o", cut]).code == 0)
    let stats = try Self.object(try CLI.run(["stats", cut, "--json"]).out.dropLast())
    #expect(Self.int(stats["events"]) == end)
    #expect(Self.ranges(stats["lost"]).first?.lowerBound == a)
    for n in [a - 1, c, c + 1, end] {
      let here = try CLI.run(["show", cut, "--at", "\(n)", "--json"])
      #expect(here.code == 0, "\(n): \(here.err)")
      #expect(
        here.out == (try CLI.run(["show", f.original, "--at", "\(n)", "--json"])).out, "\(n)")
    }
    let inexact = try CLI.run(["show", cut, "--at", "\(f.inexact)", "--json"])
    #expect(inexact.out.hasSuffix(",\"exact\":false}\n"))
    let numbered = { (log: String) in
      try CLI.run(["events", log, "--numbered", "--from", "\(c - 5)", "--to", "\(c + 5)"]).out
    }
    #expect(try numbered(cut) == numbered(f.salvaged))

    // what-if -o: every number kept; a removal after C keeps the restored states.
    let out = f.dir.path("whatif.ltape")
    let without = c + 100
    let r = try CLI.run(["what-if", f.salvaged, "--without", "\(without)", "-o", out, "--json"])
    #expect(r.err.contains("so every event keeps its number"), "\(r.err)")
    let report = try Self.object(r.out.dropLast())
    #expect(report["exact"] == .bool(true))
    let fromOriginal = try Self.object(
      try CLI.run(["what-if", f.original, "--without", "\(without)", "--json"]).out.dropLast())
    #expect(report["firstDifference"] == fromOriginal["firstDifference"])
    #expect(report["diff"] == fromOriginal["diff"])
    let counterfactual = try Self.object(try CLI.run(["stats", out, "--json"]).out.dropLast())
    #expect(Self.int(counterfactual["events"]) == 40_000)
    let marked = try CLI.run([
      "events", out, "--numbered", "--from", "\(without)", "--to", "\(without)",
    ])
    #expect(marked.out.contains("#\(without) "), "\(marked.out)")
    #expect(marked.out.contains("mark"), "\(marked.out)")
    #expect(
      try CLI.run(["show", out, "--at", "\(c + 50)", "--json"]).out
        == (try CLI.run(["show", f.original, "--at", "\(c + 50)", "--json"])).out)
    // A removal before the gap: the replay crosses it, and says it is not exact.
    let before = try CLI.run([
      "what-if", f.salvaged, "--without", "\(a - 100)", "--at", "\(c + 10)",
    ])
    #expect(before.code == 2)
    #expect(before.out.contains("not exact:"), "\(before.out)")
    let beforeJSON = try Self.object(
      try CLI.run([
        "what-if", f.salvaged, "--without", "\(a - 100)", "--at", "\(c + 10)", "--json",
      ]).out.dropLast())
    #expect(beforeJSON["exact"] == .bool(false))
  }

  @Test func eventsAndShrinkSayWhatIsNotRecorded() throws {
    let f = try Fixture()
    let (a, c) = (f.gap.lowerBound, f.restored)
    let r = try CLI.run([
      "events", f.salvaged, "--json", "--numbered", "--from", "\(a - 3)", "--to", "\(c + 3)",
    ])
    #expect(r.code == 2)
    var seen = 0
    for line in r.out.split(separator: "\n") {
      let o = try Self.object(line)
      let n = try #require(Self.int(o["event"]))
      #expect(!f.gap.contains(n), "a lost event listed: \(n)")
      #expect((o["exact"] == .bool(false)) == (n > f.gap.upperBound && n < c), "\(line)")
      seen += 1
    }
    #expect(seen > 3)
    let text = try CLI.run([
      "events", f.salvaged, "--numbered", "--from", "\(a - 3)", "--to", "\(c + 3)",
    ])
    // The lost events, with any after them that do not decode (they name lost ids).
    let hole = try #require(text.out.lines.first { $0.hasPrefix("… events \(a)...") })
    #expect(hole.hasSuffix(": lost in a salvage, or unreadable after lost events"), "\(hole)")
    #expect(text.out.contains("(not the recorded state)"))
    #expect(text.out.contains("#\(c + 1) "))

    let shrink = try CLI.run([
      "shrink", f.salvaged, "--where", "count(sections) >= 1", "-o", f.dir.path("s.ltape"),
      "--json",
    ])
    #expect(shrink.code == 2, "\(shrink.err)")
    let summary = try Self.object(shrink.out.dropLast())
    #expect(summary["exact"] == .bool(false))
    let kept = try CLI.run([
      "shrink", f.salvaged, "--where", "count(sections) >= 1", "-o", f.dir.path("t.ltape"),
    ])
    #expect(kept.out.contains("not exact:"), "\(kept.out)")
    let intact = try Self.object(
      try CLI.run([
        "shrink", f.original, "--where", "count(sections) >= 1", "-o", f.dir.path("u.ltape"),
        "--json",
      ]).out.dropLast())
    #expect(intact["exact"] == .bool(true))
  }

  /// Every row a salvaged log's export has names the ids the original's row for that event
  /// names, the recovery point's own event too: it is read with the ids of the state the
  /// fold swaps out there, not the restored one's (which crashed the export, or named other
  /// ids, when its entries were read as the restored state's).
  @Test(.enabled(if: pythonHas("pyarrow"), "pyarrow is not installed (pip install pyarrow)"))
  func exportedRowsAreTheOriginalsAcrossARecoveryPoint() throws {
    let f = try Fixture()
    let salvaged = f.dir.path("salvaged-tables")
    let original = f.dir.path("original-tables")
    let r = try CLI.run(["export", "--parquet", f.salvaged, "-o", salvaged])
    #expect(r.code == 2, "\(r.err)")  // not exact: the stretch after the gap
    #expect(try CLI.run(["export", "--parquet", f.original, "-o", original]).code == 0)
    // The event's own columns (its fault differs where the state does, before the point).
    let rows =
      "{r['event']: [r[c] for c in ('op', 'site', 'section', 'parent', 'anchor', 'ids',"
      + " 'label')] for r in TABLE.to_pylist()}"
    let answer = try #require(
      try Python.pyarrow(
        salvaged,
        "(lambda a, b: {'rows': len(a), 'restored': \(f.restored) in a,"
          + " 'differ': sorted(n for n in a if a[n] != b.get(n))[:5]})("
          + rows.replacingOccurrences(of: "TABLE", with: "t") + ", "
          + rows.replacingOccurrences(
            of: "TABLE", with: "pq.read_table('\(original)/events.parquet')") + ")")
        as? [String: Any])
    #expect(answer["restored"] as? Bool == true, "the recovery point's own event has a row")
    #expect(answer["differ"] as? [Int] == [], "rows naming other ids than the original's")
    #expect((answer["rows"] as? Int ?? 0) > 30_000)
  }

  /// A listing that starts a few events before the recovery point reads there what one
  /// from before the gap reads: the seek's decoder enters the definitions of the frames
  /// after the gap as the long fold's does (it named the point's own event unreadable),
  /// also when the salvage lost the dictionary frame that began the segment (a writer
  /// cutting ahead lays the frames out so).
  @Test(arguments: [false, true])
  func aListingFromNearARecoveryPointReadsWhatALongOneReads(cutsAhead: Bool) throws {
    let f = try Fixture(cutsAhead: cutsAhead)
    if cutsAhead {
      let lost = try LogReader(path: f.salvaged).gaps.contains { $0.count == 0 }
      #expect(lost, "the layout loses a dictionary frame")
    }
    try listingsAgree(f)
  }

  private func listingsAgree(_ f: Fixture) throws {
    let c = f.restored
    func events(from: Int) throws -> [Substring] {
      let r = try CLI.run([
        "events", f.salvaged, "--numbered", "--from", "\(from)", "--to", "\(c + 2)",
      ])
      #expect(r.code == 2, "\(r.err)")  // lost events in the range
      return r.out.split(separator: "\n").filter {
        $0.hasPrefix("#") && Int($0.dropFirst().prefix { $0.isNumber }) ?? 0 >= c - 5
      }
    }
    let near = try events(from: c - 5)
    #expect(near == (try events(from: f.gap.lowerBound - 1)))
    #expect(near.contains { $0.hasPrefix("#\(c) ") }, "the point's own event is read")
  }

  @Test func diffAndExportLabelWhatIsNotRecorded() throws {
    let f = try Fixture()
    let c = f.restored
    let inexact = try Self.object(
      try CLI.run(["diff", f.salvaged, "--from", "\(f.inexact)", "--to", "\(c)", "--json"]).out
        .dropLast())
    #expect(inexact["exact"] == .bool(false))
    let text = try CLI.run(["diff", f.salvaged, "--from", "\(f.inexact)", "--to", "\(c)"])
    #expect(text.out.lines[0].hasSuffix("(not the recorded state)"), "\(text.out.lines[0])")
    #expect(!text.out.lines[1].contains("not the recorded"))
    let exact = try Self.object(
      try CLI.run(["diff", f.salvaged, "--from", "\(c)", "--to", "\(c + 10)", "--json"]).out
        .dropLast())
    #expect(exact["exact"] == .bool(true))
    let swift = try CLI.run(["export", f.salvaged, "--swift", "--at", "\(f.inexact)"])
    #expect(swift.code == 2)
    #expect(swift.out.contains("NOT the recorded"), "\(swift.out.prefix(300))")
    let tables = try CLI.run([
      "export", "--parquet", f.salvaged, "-o", f.dir.path("tables"), "--json",
    ])
    #expect(try Self.object(tables.out.dropLast())["exact"] == .bool(false))
    let whole = try CLI.run([
      "export", "--parquet", f.original, "-o", f.dir.path("tables2"), "--json",
    ])
    #expect(try Self.object(whole.out.dropLast())["exact"] == .bool(true))
  }
}
