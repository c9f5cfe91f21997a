import Foundation
import Testing

@Suite struct BisectTests {
  @Test func locatesThePlantedBugExactly() throws {
    let logs = try Planted.logs.get()
    let r = try CLI.run(["bisect", logs.buggy, "--where", "count(sections) == 6"])
    #expect(r.code == 0, "\(r.err)")
    let lines = r.out.lines.map(String.init)
    #expect(lines.first == "first event where count(sections) == 6 holds: 12345")
    #expect(lines.dropFirst().first == "boundary: false at 12344, true at 12345")
    #expect(
      lines.contains { $0.hasPrefix("#12345  ") && $0.hasSuffix("  appendSections  zzz-bug") })
    #expect(lines.contains { $0.hasPrefix("event 12345 of 20001  appendSections  ") })
    #expect(lines.contains("zzz-bug  0 items, 0 visible"))
    // Every probe on standard error, in order, with its purpose; no warning.
    let probes = r.err.lines.filter { $0.hasPrefix("probe ") }
    #expect(probes.first == "probe 20001: bad (boundary)")
    // --where ends with one forward scan through the last checkpoint interval.
    #expect(probes.contains("probe 12344: good (scan)"))
    #expect(probes.contains("probe 12345: bad (scan)"))
    #expect(probes.count <= 40)
    #expect(!r.err.contains("warning"))
  }

  @Test func jsonLinesForEveryProbeAndTheResult() throws {
    let logs = try Planted.logs.get()
    let r = try CLI.run(["bisect", logs.buggy, "--where", "count(sections) == 6", "--json"])
    #expect(r.code == 0)
    #expect(r.err.isEmpty)
    let objects = try r.out.lines.filter { !$0.isEmpty }.map {
      try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
    }
    let result = try #require(objects.last)
    #expect(result["first"] as? Int == Planted.event)
    #expect(result["monotonic"] as? Bool == true)
    #expect(result["probes"] as? Int == objects.count - 1)
    let boundary = try #require(result["boundary"] as? [String: Any])
    #expect(boundary["before"] as? String == "good")
    #expect(boundary["at"] as? String == "bad")
    #expect(result["op"] as? String == "appendSections")
    let event = try #require(result["recorded"] as? [String: Any])
    #expect(event["op"] as? String == "appendSections")
    let state = try #require(result["state"] as? [String: Any])
    #expect(state["event"] as? Int == Planted.event)
    for probe in objects.dropLast() {
      #expect(probe["event"] is Int)
      #expect(["good", "bad", "skip"].contains(probe["verdict"] as? String ?? ""))
    }
  }

  @Test func exitsOneWhenThePredicateNeverHolds() throws {
    let logs = try Planted.logs.get()
    let r = try CLI.run(["bisect", logs.clean, "--where", "count(sections) == 6"])
    #expect(r.code == 1)
    #expect(r.out == "count(sections) == 6 never holds: false at the last event 20000\n")
    #expect(r.err == "probe 20000: good (boundary)\n")
  }

  @Test func warnsWhenThePredicateIsNotMonotonic() throws {
    let dir = try TempDir()
    let path = try CLI.record(CLI.sample("symbols"), in: dir)
    let r = try CLI.run(["bisect", path, "--where", #"expanded("header.communication")"#])
    #expect(r.code == 0)
    #expect(r.out.hasPrefix(#"first event where expanded("header.communication") holds: 3"#))
    #expect(
      r.err.contains("listtape: warning: expanded(\"header.communication\") is not monotonic"))
    #expect(
      r.err.contains(
        "List every change with: listtape find \(path) --where 'expanded(\"header.communication\")'"
      ))
    let json = try CLI.run([
      "bisect", path, "--where", #"expanded("header.communication")"#, "--json",
    ])
    let last = try #require(json.out.lines.filter { !$0.isEmpty }.last)
    let result = try #require(
      try JSONSerialization.jsonObject(with: Data(last.utf8)) as? [String: Any])
    #expect(result["monotonic"] as? Bool == false)
    #expect((result["contradictions"] as? [Int])?.isEmpty == false)
  }

  @Test func runWithSkipVerdictsStillFindsTheBug() throws {
    let logs = try Planted.logs.get()
    // Every event ≡ 1 (mod 5) cannot be judged (including the last, 20001).
    let check = #"[ $((LISTTAPE_EVENT % 5)) = 1 ] && exit 125; grep -q zzz-bug && exit 1; exit 0"#
    let r = try CLI.run(["bisect", logs.buggy, "--run", check])
    #expect(r.code == 0, "\(r.err)")
    #expect(r.out.hasPrefix("first bad event: 12345\nboundary: good at 12344, bad at 12345\n"))
    #expect(r.err.contains("probe 20001: skip (boundary)\n"))
    #expect(r.err.contains("probe 20000: bad (boundary)\n"))
  }

  @Test func skipsThatHideTheAnswerGiveTheCandidates() throws {
    let dir = try TempDir()
    let path = try CLI.record(CLI.sample("symbols"), in: dir)
    let check =
      #"[ "$LISTTAPE_EVENT" = 23 ] && exit 125; grep -q '"header.devices"' && exit 3; exit 0"#
    let r = try CLI.run(["bisect", path, "--run", check])
    #expect(r.code == 0)
    #expect(
      r.out.hasPrefix(
        "first bad event: one of 23...24 (skipped events hide which; bad at 24)\n"
          + "boundary: skipped at 23, bad at 24\n"))
    let json = try CLI.run(["bisect", path, "--run", check, "--json"])
    let last = try #require(json.out.lines.filter { !$0.isEmpty }.last)
    let result = try #require(
      try JSONSerialization.jsonObject(with: Data(last.utf8)) as? [String: Any])
    #expect(result["candidates"] as? [Int] == [23, 24])
    #expect(result["first"] as? Int == 24)
  }

  @Test(arguments: ["exit 128", "exit 200", "kill -9 $$"])
  func aCheckThatAbortsStopsTheBisect(_ check: String) throws {
    let dir = try TempDir()
    let path = try CLI.record(CLI.sample("symbols"), in: dir)
    let r = try CLI.run(["bisect", path, "--run", check])
    #expect(r.code == 74)
    #expect(r.out.isEmpty)
    #expect(r.err.hasPrefix("listtape: error: bisect aborted: '\(check)' "), "\(r.err)")
  }

  @Test func aChattyCheckDoesNotCorruptTheOutput() throws {
    let dir = try TempDir()
    let path = try CLI.record(CLI.sample("symbols"), in: dir)
    let check = #"echo noise; grep -q '"header.devices"' && exit 1; exit 0"#
    let r = try CLI.run(["bisect", path, "--run", check, "--json"])
    #expect(r.code == 0)
    #expect(r.err.contains("noise"))
    for line in r.out.lines where !line.isEmpty {
      #expect(throws: Never.self) { try JSONSerialization.jsonObject(with: Data(line.utf8)) }
    }
    // The check sees the event number and the log in its environment.
    let env = try CLI.run([
      "bisect", path, "--run", #"[ "$LISTTAPE_LOG" = "\#(path)" ] && [ "$LISTTAPE_EVENT" -lt 24 ]"#,
    ])
    #expect(env.out.hasPrefix("first bad event: 24\n"))
  }

  static let malformed: [(String, Int)] = [
    ("count(items) >", 15),
    ("visible(mic)", 9),
    (#"count(selected) > "a""#, 17),
    (#"expanded("x") or or"#, 18),
    ("count(bogus)", 7),
    (#"(visible("a")"#, 14),
  ]

  @Test(arguments: malformed)
  func malformedExpressionsNameTheColumn(_ expression: String, _ column: Int) throws {
    // Checked before the log is read: the log need not exist.
    let r = try CLI.run(["bisect", "missing.ltape", "--where", expression])
    #expect(r.code == 64)
    #expect(r.out.isEmpty)
    let first = try #require(r.err.lines.first)
    #expect(
      first.hasPrefix("Error: The expression for '--where <expr>' is malformed: column \(column): ")
    )
    #expect(r.err.contains("\nUsage: listtape bisect <log>"))
    #expect(r.err.contains("See 'listtape bisect --help'"))
  }

  @Test func usageErrors() throws {
    let neither = try CLI.run(["bisect", "x.ltape"])
    #expect(neither.code == 64)
    #expect(neither.err.hasPrefix("Error: Give one of '--where <expr>' or '--run <cmd>'"))
    let both = try CLI.run(["bisect", "x.ltape", "--where", "count(items) > 1", "--run", "true"])
    #expect(both.code == 64)
    let notBoolean = try CLI.run(["bisect", "x.ltape", "--where", "count(items)"])
    #expect(notBoolean.code == 64)
    #expect(
      notBoolean.err.hasPrefix(
        "Error: The expression for '--where <expr>' is not a predicate: column 1:"))
  }
}
