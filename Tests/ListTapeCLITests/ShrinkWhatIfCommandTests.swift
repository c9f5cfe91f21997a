import Foundation
import ListTapeModel
import Testing

@testable import listtape

/// A generated session with a three-event bug planted in it: section "bug" at event 301,
/// "bug-parent" with its child "bug-child" at 1,502, and the expansion that shows the child
/// at 2,703.
enum PlantedBug {
  static let lines: Result<[String], any Error> = Result {
    let generated = try CLI.run(["generate", "--events", "3000", "--seed", "5"])
    guard generated.code == 0 else { throw RecordFailed(message: "generate failed") }
    var lines = generated.out.split(separator: "\n").map(String.init)
    lines.insert(#"{"op":"expand","items":["bug-parent"],"t":1764400900000}"#, at: 2_700)
    lines.insert(
      #"{"op":"appendItems","items":[{"id":"bug-parent","children":["bug-child"]}],"section":"bug","t":1764400500000}"#,
      at: 1_500)
    lines.insert(#"{"op":"appendSections","sections":["bug"],"t":1764400100000}"#, at: 300)
    return lines
  }

  static func record(in dir: TempDir, name: String = "bug.ltape") throws -> String {
    try Handmade.record(in: dir, name: name, lines: try lines.get())
  }
}

@Suite struct ShrinkCommandTests {
  /// Every event of a log, as JSON Lines.
  static func events(_ log: String) throws -> [String] {
    let r = try CLI.run(["events", log, "--json"])
    return r.out.split(separator: "\n").map(String.init)
  }

  /// Whether the state after the last of `lines` satisfies `expression`, by recording them
  /// and asking `find` for the expression's value at event 0 and every change after.
  static func holds(_ lines: [String], _ expression: String, in dir: TempDir) throws -> Bool {
    let path = dir.path("check-\(UUID().uuidString).ltape")
    let recorded = try CLI.run(
      ["record", path], input: Data((lines.joined(separator: "\n") + "\n").utf8))
    #expect(recorded.code == 0 || recorded.code == 65)
    let find = try CLI.run(["find", path, "--where", expression, "--json"])
    let objects = try find.out.split(separator: "\n").map {
      try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
    }
    let last = objects.dropLast().last?["to"] ?? objects.last?["initial"]
    return last as? Bool == true
  }

  @Test func whereKeepsThePlantedEventsAndTheResultIsOneMinimal() throws {
    let dir = try TempDir()
    let log = try PlantedBug.record(in: dir)
    let out = dir.path("small.ltape")
    let expression = #"visible("bug-child")"#
    let r = try CLI.run(["shrink", log, "--where", expression, "-o", out])
    #expect(r.code == 0, "\(r.err)")
    let lines = r.out.split(separator: "\n").map(String.init)
    #expect(lines.first == "kept 3 of 3,003 events → \(out)")
    #expect(
      lines.dropFirst().prefix(3).map { $0.split(separator: " ").first.map(String.init) } == [
        "#301", "#1502", "#2703",
      ])
    // The output log holds those events, times included, and satisfies the predicate; each
    // single removal breaks it.
    let kept = try Self.events(out)
    let original = try Self.events(log)
    #expect(kept == [original[300], original[1_501], original[2_702]])
    #expect(try Self.holds(kept, expression, in: dir))
    for i in kept.indices {
      var without = kept
      without.remove(at: i)
      #expect(try !Self.holds(without, expression, in: dir), "event \(i) can go")
    }
    // Output exists: 73; a state that never satisfies: 1.
    let again = try CLI.run(["shrink", log, "--where", expression, "-o", out])
    #expect(again.code == 73)
    #expect(again.err.contains("already exists"))
    let never = try CLI.run([
      "shrink", log, "--where", #"exists("nothing")"#, "-o", dir.path("n.ltape"),
    ])
    #expect(never.code == 1)
    #expect(never.err.contains("does not satisfy the predicate"))
    #expect(!FileManager.default.fileExists(atPath: dir.path("n.ltape")))
    // A command that skips (125) or calls the final state good is not a predicate that holds.
    for command in ["exit 125", "exit 0"] {
      let skipped = try CLI.run(["shrink", log, "--run", command, "-o", dir.path("s.ltape")])
      #expect(skipped.code == 1)
      #expect(
        skipped.err.hasSuffix(
          "is not bad for the command (it exits 0, good, or 125, skip, there) (\(log))\n"),
        "\(skipped.err)")
    }
  }

  @Test func runTakesGitBisectExitCodes() throws {
    let dir = try TempDir()
    let log = try PlantedBug.record(in: dir)
    let out = dir.path("run.ltape")
    // Bad (exit 1) when the state JSON holds bug-child; good (0) otherwise.
    let check = #"if grep -q '"id":"bug-child"'; then exit 1; else exit 0; fi"#
    let r = try CLI.run(["shrink", log, "--run", check, "-o", out, "--json"])
    #expect(r.code == 0, "\(r.err)")
    let summary = try #require(
      try JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [String: Any])
    #expect(summary["keptEvents"] as? [Int] == [301, 1502])
    #expect(summary["kept"] as? Int == 2)
    #expect(summary["original"] as? Int == 3_003)
    #expect((summary["tests"] as? Int ?? 0) > 2)
    // A check that aborts (exit 128 or more) stops the shrink with exit 74.
    let abort = try CLI.run(["shrink", log, "--run", "exit 200", "-o", dir.path("a.ltape")])
    #expect(abort.code == 74)
    #expect(abort.err.contains("shrink aborted"))
    // 0 and 125 mean the predicate does not hold.
    for code in ["0", "125"] {
      let good = try CLI.run(["shrink", log, "--run", "exit \(code)", "-o", dir.path("g.ltape")])
      #expect(good.code == 1)
    }
  }

  static let usage: [([String], String)] = [
    (
      ["shrink", "a.ltape", "-o", "b.ltape"], "Error: Give one of '--where <expr>' or '--run <cmd>'"
    ),
    (
      ["shrink", "a.ltape", "--where", "count(items)", "-o", "b"],
      "Error: The expression for '--where <expr>' is not a predicate"
    ),
    (
      ["shrink", "a.ltape", "--where", "count(items) >", "-o", "b"],
      "Error: The expression for '--where <expr>' is malformed: column 15"
    ),
    (
      ["shrink", "a.ltape", "--where", "true", "--run", "x", "-o", "b"],
      "Error: '--where <expr>' and '--run <cmd>' cannot be used together"
    ),
    (
      ["shrink", "a.ltape", "--where", "true"], "Error: Missing expected argument '--output <out>'"
    ),
    (["what-if", "a.ltape"], "Error: Missing expected argument '--without <range>'"),
    (
      ["what-if", "a.ltape", "--without", "5-2"],
      "Error: The value '5-2' is invalid for '--without <range>'"
    ),
  ]

  @Test(arguments: usage)
  func usageErrors(_ args: [String], _ message: String) throws {
    let r = try CLI.run(args)
    #expect(r.code == 64)
    #expect(r.err.hasPrefix(message), "\(r.err)")
  }
}

@Suite struct WhatIfCommandTests {
  @Test func rangesParseAsTheyAreDeclared() throws {
    #expect(try listtape.EventRange.parse("3-9").range == 3...9)
    #expect(try listtape.EventRange.parse("4").range == 4...4)
    for bad in ["9-3", "x", "1-2-3", "", "-4", "4-"] {
      #expect(throws: InvalidValue.self, "\(bad)") { try listtape.EventRange.parse(bad) }
    }
    #expect(
      WhatIfCommand.spec.info.usage
        == "listtape what-if <log> --without <range> ... [--at <point>] [--output <out>] "
        + "[--force] [--context <n>] [--json]")
  }

  @Test func theHandmadeSessionWithoutTheMove() throws {
    let dir = try TempDir()
    let path = try Handmade.record(in: dir)
    // Without moving mic under Devices, mic stays under Communication, which is collapsed at
    // 10: the mic row is hidden, and selecting keyboard at 12 still works.
    let r = try CLI.run(["what-if", path, "--without", "8"])
    #expect(r.code == 0, "\(r.err)")
    // The event line carries the time the session was recorded at.
    var lines = r.out.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    #expect(lines[1].hasPrefix("first difference: after event 8  #8  "))
    #expect(lines[1].hasSuffix("  moveItem  mic after keyboard"))
    lines[1] = "…"
    #expect(
      lines.joined(separator: "\n") == """
        without events 8 (1 event), replayed from the start
        …
        faults that appear: 0
        faults that vanish: 0

        --- \(path) at event 12
        +++ \(path) without 8 at event 12
        [main]
          Communication
        ~   mic moved: under Devices, after keyboard → under Communication, first
          … 4 unchanged items
        1 change, 5 items unchanged

        """)
    // Without the expand of Communication, selecting mic at 4 faults (hidden); the
    // selection then differs until 12 replaces it.
    let json = try CLI.run(["what-if", path, "--without", "3", "--at", "5", "--json"])
    #expect(json.code == 0)
    let o = try #require(
      try JSONSerialization.jsonObject(with: Data(json.out.utf8)) as? [String: Any])
    #expect(o["firstDifference"] as? Int == 3)
    #expect(o["without"] as? [[Int]] == [[3, 3]])
    #expect(o["at"] as? Int == 5)
    let appeared = try #require(o["faultsAppeared"] as? [[String: Any]])
    #expect(appeared.map { $0["event"] as? Int } == [4])
    #expect(appeared.first?["op"] as? String == "select")
    #expect((o["faultsVanished"] as? [[String: Any]])?.isEmpty == true)
    #expect(o["identical"] as? Bool == false)
    #expect(
      (o["diff"] as? [String: Any])?["collapsed"] as? [String] == ["Communication"])
  }

  @Test func writesTheCounterfactualLog() throws {
    let dir = try TempDir()
    let path = try Handmade.record(in: dir)
    let out = dir.path("without.ltape")
    let r = try CLI.run(["what-if", path, "--without", "6-7", "--without", "11", "-o", out])
    #expect(r.code == 0)
    #expect(
      r.err.contains(
        "wrote 12 events (events 6-7, 11 each replaced by a mark, so every event keeps its "
          + "number) to \(out)"), "\(r.err)")
    let events = try CLI.run(["events", out, "--json"]).out.split(separator: "\n").map(String.init)
    let original = try CLI.run(["events", path, "--json"]).out.split(separator: "\n").map(
      String.init)
    #expect(events.count == original.count)
    for i in events.indices {
      if [5, 6, 10].contains(i) {
        #expect(events[i].contains(#""op":"mark","label":"what-if: without 6-7, 11""#), "\(i)")
      } else {
        #expect(events[i] == original[i], "\(i)")
      }
    }
    let again = try CLI.run(["what-if", path, "--without", "1", "-o", out])
    #expect(again.code == 73)
    let range = try CLI.run(["what-if", path, "--without", "13"])
    #expect(range.code == 64)
    #expect(range.err.contains("out of range"))
  }
}
