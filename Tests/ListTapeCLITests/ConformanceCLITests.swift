import Foundation
import Testing

/// Protocol section 4, end to end through the built binary: each test pins one sentence of
/// the contract (exit codes, outputs, the EXPR grammar) as an outside checker would drive it.
@Suite struct ConformanceCLITests {
  /// Records `lines` (JSON Lines) into a fresh log and returns its path.
  private func log(_ lines: [String], in dir: TempDir, name: String = "c.ltape") throws -> String {
    let path = dir.path(name)
    let input = lines.joined(separator: "\n") + "\n"
    _ = try CLI.run(["record", path], input: Data(input.utf8))
    return path
  }

  private let small = [
    #"{"op":"appendSections","sections":["s"]}"#,
    #"{"op":"appendItems","items":[{"id":"a","expanded":true,"children":["b"]}]}"#,
    #"{"op":"batch","events":[{"op":"select","items":["b"]},{"op":"mark","label":"m"}]}"#,
    #"{"op":"collapse","items":["a"]}"#,
    #"{"op":"mark","label":"m"}"#,
  ]

  // MARK: 2 damaged log

  /// A log of one frame with a byte flipped in its middle (what a checker does to a small
  /// recorded log), and the same log truncated: every reading command exits 2, as `verify`.
  @Test func damageInTheOnlyFrameExits2Everywhere() throws {
    let dir = try TempDir()
    let path = try CLI.record(CLI.sample("symbols"), in: dir)
    let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
    var flipped = bytes
    flipped[bytes.count / 2] ^= 0xFF
    let flippedPath = dir.path("flipped.ltape")
    try flipped.write(to: URL(fileURLWithPath: flippedPath))
    let truncatedPath = dir.path("truncated.ltape")
    try bytes.prefix(bytes.count - 9).write(to: URL(fileURLWithPath: truncatedPath))
    for damaged in [flippedPath, truncatedPath] {
      for args in [
        ["verify"], ["replay"], ["show"], ["show", "--at", "0", "--json"], ["events"],
        ["events", "--json"], ["stats"], ["find", "--where", "count(items)"],
        ["bisect", "--where", "count(items) > 1"], ["diff", "--from", "0", "--to", "0"],
      ] {
        let r = try CLI.run([args[0], damaged] + args.dropFirst())
        #expect(r.code == 2, "\(args) on \(damaged): \(r.code) \(r.err)")
      }
    }
  }

  /// Damage in the middle of a log of several frames: the readers that print one state or
  /// the events also exit 2 (the readable part is still printed, with a warning).
  @Test func midFileDamageExits2ForShowEventsStats() throws {
    let dir = try TempDir()
    let path = dir.path("multi.ltape")
    for name in ["symbols", "languages", "form"] {
      _ = try CLI.run(["record", path], input: try Data(contentsOf: CLI.sample(name)))
    }
    var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
    bytes[bytes.count / 3] ^= 0xFF
    try bytes.write(to: URL(fileURLWithPath: path))
    #expect(try CLI.run(["verify", path]).code == 2)
    for args in [["show"], ["events"], ["stats"], ["replay"]] {
      let r = try CLI.run([args[0], path])
      #expect(r.code == 2, "\(args): \(r.code)")
      #expect(r.err.contains("listtape: warning: damaged frame at byte"))
    }
  }

  @Test func notALogAndMissingFiles() throws {
    let dir = try TempDir()
    let text = dir.path("notes.txt")
    try Data("hello\n".utf8).write(to: URL(fileURLWithPath: text))
    for command in ["show", "replay", "events", "verify", "stats"] {
      #expect(try CLI.run([command, text]).code == 2)
      #expect(try CLI.run([command, dir.path("missing.ltape")]).code == 66)
      #expect(try CLI.run([command, dir.url.path]).code == 66)
    }
  }

  // MARK: exit 1 is for bisect and find only

  @Test func unknownMarkIsAUsageError() throws {
    let dir = try TempDir()
    let path = try log(small, in: dir)
    for args in [
      ["show", path, "--at", "mark:nope"], ["replay", path, "--to", "mark:nope"],
      ["events", path, "--to", "mark:nope"], ["diff", path, "--from", "mark:nope"],
    ] {
      let r = try CLI.run(args)
      #expect(r.code == 64, "\(args): \(r.code)")
      #expect(r.err.contains("no mark \"nope\""))
    }
  }

  @Test func diffThatFindsChangesSucceeds() throws {
    let dir = try TempDir()
    let path = try log(small, in: dir)
    let r = try CLI.run(["diff", path, "--from", "0", "--to", "4"])
    #expect(r.code == 0)
    #expect(r.out.contains("+ a"))
    let json = try CLI.run(["diff", path, "--from", "2", "--to", "4", "--json"])
    #expect(json.code == 0)
    let object = try #require(
      try JSONSerialization.jsonObject(with: Data(json.out.utf8)) as? [String: Any])
    #expect(object["identical"] as? Bool == false)
    #expect(try CLI.run(["diff", path, "--from", "4", "--to", "5"]).code == 0)
  }

  // MARK: events

  @Test func eventsFromZeroStartsAtTheFirstEvent() throws {
    let dir = try TempDir()
    let path = try log(small, in: dir)
    let all = try CLI.run(["events", path, "--json"])
    let fromZero = try CLI.run(["events", path, "--from", "0", "--json"])
    #expect(fromZero.code == 0)
    #expect(fromZero.out == all.out)
    let early = try CLI.run(["events", path, "--from", "time:1990-01-01T00:00:00Z", "--to", "1"])
    #expect(early.code == 0)
    #expect(early.out.split(separator: "\n").count == 1)
    #expect(try CLI.run(["events", path, "--from", "3", "--to", "2"]).code == 64)
  }

  /// `events --from A --to B --json` recorded again gives the same states as the original
  /// at those events (batches, marks, titles, fields and `t` kept).
  @Test func eventsRangeRoundTrip() throws {
    let dir = try TempDir()
    let lines = [
      #"{"op":"appendSections","sections":["s"],"t":1000}"#,
      #"{"op":"appendItems","items":[{"id":"a","title":"A","fields":{"k":"v"},"expanded":true,"children":[{"id":"b","title":"B"}]}],"t":2000}"#,
      #"{"op":"batch","events":[{"op":"select","items":["b"]},{"op":"mark","label":"m"},{"op":"update","item":"a","fields":{"x":"y"}}],"t":3000}"#,
      #"{"op":"mark","label":"é \"q\"","t":4000}"#,
      #"{"op":"collapse","items":["a"],"t":5000}"#,
    ]
    let path = try log(lines, in: dir)
    let range = try CLI.run(["events", path, "--from", "1", "--to", "4", "--json"])
    #expect(range.code == 0)
    let copy = dir.path("copy.ltape")
    #expect(try CLI.run(["record", copy], input: Data(range.out.utf8)).code == 0)
    for n in 0...4 {
      let a = try CLI.run(["show", path, "--at", "\(n)", "--json"])
      let b = try CLI.run(["show", copy, "--at", "\(n)", "--json"])
      #expect(a.out == b.out, "state at \(n)")
    }
    #expect(try CLI.run(["events", copy, "--json"]).out == range.out)
    #expect(range.out.contains(#""t":3000"#))
  }

  // MARK: record

  @Test func recordLinesCRLFBlankAndUnterminated() throws {
    let dir = try TempDir()
    let path = dir.path("r.ltape")
    let input =
      "{\"op\":\"appendSections\",\"sections\":[\"s\"]}\r\n\r\n\n"
      + "[1]\n{\"op\":\"appendItems\",\"items\":[\"a\"]}\r\n"
      + "{\"op\":\"select\",\"items\":[\"zz\"]}\n{\"op\":\"mark\",\"label\":\"end\"}"
    let r = try CLI.run(["record", path], input: Data(input.utf8))
    #expect(r.code == 65)
    #expect(r.err.contains("listtape: line 4:"))
    #expect(r.err.contains("listtape: warning: event 3: select:"))
    let events = try CLI.run(["events", path, "--json"])
    #expect(events.out.split(separator: "\n").count == 4)
    let again = try CLI.run(
      ["record", path], input: Data("{\"op\":\"select\",\"items\":[\"q\"]}\n".utf8))
    #expect(again.code == 0)
    #expect(again.err.contains("warning: event 5: select:"))
  }

  // MARK: show

  @Test func showPointsAndDefault() throws {
    let dir = try TempDir()
    let lines = [
      #"{"op":"appendSections","sections":["s"],"t":1600000000000}"#,
      #"{"op":"batch","events":[{"op":"appendItems","items":["a"]},{"op":"mark","label":"in"}],"t":1600000001500}"#,
      #"{"op":"mark","label":"in","t":1600000002000}"#,
    ]
    let path = try log(lines, in: dir)
    func event(_ at: String?) throws -> Int? {
      let args = ["show", path, "--json"] + (at.map { ["--at", $0] } ?? [])
      let r = try CLI.run(args)
      let object = try JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [String: Any]
      return object?["event"] as? Int
    }
    #expect(try event(nil) == 3)
    #expect(try event("mark:in") == 2)
    #expect(try event("time:2020-09-13T12:26:41Z") == 1)
    #expect(try event("time:2020-09-13T12:26:41.5Z") == 2)
    #expect(try event("time:2020-09-13T14:26:41.600+02:00") == 2)
    // RFC 3339's space for the `T` (as `date` and SQL print times).
    #expect(try event("time:2020-09-13 12:26:41.5Z") == 2)
    #expect(try event("time:2020-09-13 12:26:41") == 1)
    #expect(try event("time:2000-01-01T00:00:00Z") == 0)
    // A date alone is its midnight, UTC; a date the calendar lacks is no time.
    #expect(try event("time:2020-09-14") == 3)
    #expect(try event("time:2020-09-13") == 0)
    #expect(try event("time:2020-02-29T00:00:00Z") == 0)
    for wrong in ["2020-02-30T00:00:00Z", "2019-02-29", "2020-13-01", "2020-04-31T12:00:00Z"] {
      let r = try CLI.run(["show", path, "--at", "time:" + wrong])
      #expect(r.code == 64 && r.err.contains("expected an ISO 8601 time"), "\(wrong): \(r.err)")
    }
    #expect(try CLI.run(["show", path, "--at", "4"]).code == 64)
    #expect(try CLI.run(["show", path, "--at", "-1"]).code == 64)
  }

  // MARK: EXPR

  @Test func exprEscapesIncludeJSONUnicode() throws {
    let dir = try TempDir()
    let path = try log(
      [#"{"op":"appendSections","sections":["s"]}"#, #"{"op":"appendItems","items":["é\"x"]}"#],
      in: dir)
    let r = try CLI.run(["bisect", path, "--where", #"exists("\u00e9\"x")"#])
    #expect(r.code == 0, "\(r.err)")
    #expect(r.out.hasPrefix(#"first event where exists("\u00e9\"x") holds: 2"#))
    let bad = try CLI.run(["find", path, "--where", #"exists("\u00")"#])
    #expect(bad.code == 64)
    #expect(bad.err.contains("column 9"))
  }

  @Test func exprOperatorsAndFunctions() throws {
    let dir = try TempDir()
    let path = try log(small, in: dir)
    // Each holds at the last event (5) of `small`: a collapsed, b hidden and deselected.
    let holding = [
      #"not visible("b") and exists("b")"#, #"row("b") == -1"#, #"row("a") == 0"#,
      #"parent("a") == null"#, #"null != parent("b")"#, #"parent("b") == "a""#,
      #"level("b") == 1 and level("zz") < 0"#, "count(visible) == 1", #"count(visible, "s") == 1"#,
      #"count(visible, "nope") == 0"#, "count(items) == 2", "count(selected) == 0",
      "count(sections) >= 1", #"exists("zz") or exists("a") and not expanded("a")"#,
      #"not (exists("zz") or selected("b"))"#, #""a\"b" != "a""#, "-1 < 0",
    ]
    for expr in holding {
      let f = try CLI.run(["find", path, "--where", expr, "--json"])
      let last = f.out.split(separator: "\n").last.map(String.init) ?? ""
      #expect(f.code == 0 || f.code == 1, "\(expr): \(f.err)")
      let summary = try JSONSerialization.jsonObject(with: Data(last.utf8)) as? [String: Any]
      let changes = f.out.split(separator: "\n").dropLast()
      let final: Any? =
        changes.last.flatMap {
          (try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])?["to"]
        } ?? summary?["initial"]
      #expect(final as? Bool == true, "\(expr)")
    }
    for (expr, column) in [
      ("count(items) >", "column 15"), (#"count(selected) > "a""#, "column 17"),
      (#"foo("a")"#, "column 1"), (#"exists("a") && exists("b")"#, "column 13"),
      (#"(exists("a")"#, "column 13"),
    ] {
      let r = try CLI.run(["find", path, "--where", expr])
      #expect(r.code == 64, "\(expr)")
      #expect(r.err.contains(column), "\(expr): \(r.err)")
    }
  }

  // MARK: bisect, find, replay

  @Test func findListsAChangeAtTheFirstEvent() throws {
    let dir = try TempDir()
    let path = try log(small, in: dir)
    let r = try CLI.run(["find", path, "--where", "count(sections) == 1"])
    #expect(r.code == 0)
    #expect(r.out.contains("event 1: false → true"))
    #expect(try CLI.run(["find", path, "--where", #"exists("zz")"#]).code == 1)
  }

  /// A script's long `... or ... or ...`: 18,000 `or`s (as many as one argument holds)
  /// crashed every command that evaluates an expression (it recursed per operand: exit 139).
  @Test func aLongChainOfOrsIsAnExpressionLikeAnyOther() throws {
    let dir = try TempDir()
    let path = try log(small, in: dir)
    let chain = Array(repeating: "1>2", count: 18_000) + [#"exists("a")"#]
    let expr = chain.joined(separator: " or ")
    let found = try CLI.run(["bisect", path, "--where", expr])
    #expect(found.code == 0, "\(found.err.prefix(300))")
    #expect(found.out.contains(" holds: 2"))
    let changes = try CLI.run(["find", path, "--where", expr])
    #expect(changes.code == 0)
    #expect(changes.out.contains("event 2: false → true"))
    let logs = try CLI.run(["find", "--where", expr, path, path])
    #expect(logs.code == 0)
    #expect(logs.out.contains("2 of 2 logs match"))
  }

  @Test func bisectNeedsExactlyOneOfWhereAndRun() throws {
    let dir = try TempDir()
    let path = try log(small, in: dir)
    #expect(try CLI.run(["bisect", path]).code == 64)
    #expect(try CLI.run(["bisect", path, "--where", "true", "--run", "true"]).code == 64)
    let found = try CLI.run(["bisect", path, "--where", #"exists("a")"#])
    #expect(found.code == 0)
    #expect(found.out.hasPrefix(#"first event where exists("a") holds: 2"#))
    #expect(try CLI.run(["bisect", path, "--where", #"exists("zz")"#]).code == 1)
  }

  @Test func replayStrictStopsAtTheFirstFault() throws {
    let dir = try TempDir()
    let path = try log(
      small + [#"{"op":"select","items":["zz"]}"#, #"{"op":"expand","items":["yy"]}"#], in: dir)
    let all = try CLI.run(["replay", path])
    #expect(all.code == 3)
    #expect(all.out.contains("event 6: select: "))
    #expect(all.out.contains("event 7: expand: "))
    let strict = try CLI.run(["replay", path, "--strict"])
    #expect(strict.code == 3)
    #expect(!strict.out.contains("event 7:"))
    #expect(try CLI.run(["replay", path, "--to", "5"]).code == 0)
  }
}
