import Foundation
import Testing

/// `find` and `stats` over many logs, checked against one-log runs of the same tool.
@Suite struct ManyLogsTests {
  /// Six generated sessions, two with a planted section "zzz-bug" (at events 700 and
  /// 1,500), one torn, one that is not a log, and one in a subdirectory.
  static let fleet: Result<Fleet, any Error> = Result {
    let temp = try TempDir()
    keep.append(temp)
    let dir = Fleet(root: temp.url.path)
    try FileManager.default.createDirectory(
      atPath: dir.path("users/b"), withIntermediateDirectories: true)
    for (i, planted) in [nil, 700, nil, 1_500, nil].enumerated() {
      let generated = try CLI.run(["generate", "--events", "2000", "--seed", String(i + 11)])
      var lines = generated.out.split(separator: "\n").map(String.init)
      if let planted {
        lines.insert(#"{"op":"appendSections","sections":["zzz-bug"]}"#, at: planted - 1)
      }
      let name = i == 4 ? "users/b/u\(i).ltape" : "users/u\(i).ltape"
      let r = try CLI.run(
        ["record", dir.path(name)], input: Data((lines.joined(separator: "\n") + "\n").utf8))
      guard r.code == 0 else { throw RecordFailed(message: "record exited \(r.code)") }
    }
    let whole = try Data(contentsOf: URL(fileURLWithPath: dir.path("users/u0.ltape")))
    try whole.prefix(whole.count / 2).write(to: URL(fileURLWithPath: dir.path("users/torn.ltape")))
    try Data("not a log\n".utf8).write(to: URL(fileURLWithPath: dir.path("users/junk.ltape")))
    return dir
  }

  nonisolated(unsafe) private static var keep: [TempDir] = []

  /// The fleet's directory, which lives as long as the test process.
  struct Fleet {
    var root: String
    func path(_ name: String) -> String { root + "/" + name }
  }

  static func logs(_ dir: Fleet) -> [String] {
    ["users/b/u4", "users/junk", "users/torn", "users/u0", "users/u1", "users/u2", "users/u3"]
      .map { dir.path($0 + ".ltape") }
  }

  /// Where the expression first holds in one log, by the one-log `find` (its value at
  /// event 0 and every change after).
  static func firstHolds(_ log: String, _ expression: String) throws -> Int? {
    let r = try CLI.run(["find", log, "--where", expression, "--json"])
    let objects = try r.out.split(separator: "\n").map {
      try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
    }
    guard let summary = objects.last else { return nil }
    if summary["initial"] as? Bool == true { return 0 }
    return objects.dropLast().first { $0["to"] as? Bool == true }?["event"] as? Int
  }

  @Test(arguments: [
    "count(sections) == 6", #"exists("i40") and visible("i40")"#, "count(selected) > 0",
    "count(items) > 100000", "count(items) == 0",
  ])
  func agreesWithOneLogAtATime(_ expression: String) throws {
    let dir = try Self.fleet.get()
    let r = try CLI.run(["find", "--where", expression, dir.path("users"), "--json"])
    let objects = try r.out.split(separator: "\n").map {
      try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
    }
    var found: [String: Int] = [:]
    for o in objects.dropLast() {
      if let log = o["log"] as? String, let event = o["event"] as? Int { found[log] = event }
    }
    var expected: [String: Int] = [:]
    for log in Self.logs(dir) where !log.hasSuffix("junk.ltape") {
      if let n = try Self.firstHolds(log, expression) { expected[log] = n }
    }
    #expect(found == expected, "\(r.out)")
    let summary = try #require(objects.last)
    #expect(summary["logs"] as? Int == 7)
    #expect(summary["matched"] as? Int == expected.count)
    #expect(summary["problems"] as? Int == 2)
    #expect(r.code == (expected.isEmpty ? 1 : 0))
    // The same answers in the text form, one line per matching log in path order.
    let text = try CLI.run(["find", "--where", expression, dir.path("users")])
    let lines = text.out.split(separator: "\n").map(String.init)
    #expect(
      lines.dropLast().map { $0.components(separatedBy: ": event ").first ?? "" }
        == Self.logs(dir).filter { expected[$0] != nil })
    #expect(lines.last?.hasPrefix("\(expected.count) of 7 logs match") == true)
    #expect(text.code == r.code)
  }

  @Test func plantedBugsAndDamageReported() throws {
    let dir = try Self.fleet.get()
    let r = try CLI.run(["find", "--where", "count(sections) == 6", dir.path("users")])
    #expect(r.code == 0)
    // The planted events carry the time they were recorded at.
    let lines = r.out.split(separator: "\n").map(String.init)
    #expect(lines.count == 3)
    #expect(lines.first?.hasPrefix("\(dir.path("users/u1.ltape")): event 700  ") == true)
    #expect(
      lines.dropFirst().first?.hasPrefix("\(dir.path("users/u3.ltape")): event 1500  ") == true)
    #expect(lines.prefix(2).allSatisfy { $0.hasSuffix("  appendSections  zzz-bug") })
    #expect(lines.last == "2 of 7 logs match (2 logs damaged or unreadable)")
    #expect(r.err.contains("warning: skipped \(dir.path("users/junk.ltape")): not a ListTape log"))
    #expect(r.err.contains("torn tail"))
    // Files and directories mix; none matching exits 1.
    let none = try CLI.run([
      "find", "--where", #"exists("nowhere")"#, dir.path("users/u0.ltape"), dir.path("users/b"),
    ])
    #expect(none.code == 1)
    #expect(none.out == "0 of 2 logs match\n")
  }

  @Test func nothingToReadIsCannotOpen() throws {
    let dir = try TempDir()
    try FileManager.default.createDirectory(
      atPath: dir.path("empty"), withIntermediateDirectories: true)
    for args in [
      ["find", "--where", "true", dir.path("empty")], ["stats", dir.path("empty")],
      ["find", "--where", "true", dir.path("a.ltape"), dir.path("b.ltape")],
    ] {
      let r = try CLI.run(args)
      #expect(r.code == 66, "\(args)")
      #expect(r.err.hasPrefix("listtape: error: cannot open "), "\(args)")
    }
  }

  @Test func usageErrors() throws {
    let dir = try Self.fleet.get()
    let faults = try CLI.run(["find", "--faults", dir.path("users")])
    #expect(faults.code == 64)
    #expect(faults.err.hasPrefix("Error: '--faults' takes one log"))
    let value = try CLI.run(["find", "--where", "count(items)", dir.path("users")])
    #expect(value.code == 64)
    #expect(value.err.contains("not a predicate"))
  }

  @Test func statsAddUpTheOneLogFigures() throws {
    let dir = try Self.fleet.get()
    let r = try CLI.run(["stats", dir.path("users"), "--json"])
    #expect(r.code == 2)
    let totals = try #require(
      try JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [String: Any])
    var events = 0
    var faults = 0
    var ops: [String: Int] = [:]
    for log in Self.logs(dir) where !log.hasSuffix("junk.ltape") {
      let one = try CLI.run(["stats", log, "--json"])
      let o = try #require(
        try JSONSerialization.jsonObject(with: Data(one.out.utf8)) as? [String: Any])
      events += o["events"] as? Int ?? 0
      faults += o["faults"] as? Int ?? 0
      for (op, n) in o["ops"] as? [String: Int] ?? [:] { ops[op, default: 0] += n }
    }
    #expect(totals["logs"] as? Int == 7)
    #expect(totals["read"] as? Int == 6)
    #expect(totals["events"] as? Int == events)
    #expect(totals["faults"] as? Int == faults)
    #expect(totals["ops"] as? [String: Int] == ops)
    let reasons = try #require(totals["faultsByReason"] as? [String: Int])
    #expect(reasons.values.reduce(0, +) == faults)
    #expect(
      reasons.keys.allSatisfy { ["duplicateItem", "hiddenItem", "missingItem"].contains($0) })
    let damaged = try #require(totals["problemLogs"] as? [[String: Any]])
    #expect(
      damaged.compactMap { $0["log"] as? String }.sorted() == [
        dir.path("users/junk.ltape"), dir.path("users/torn.ltape"),
      ])
    let text = try CLI.run(["stats", dir.path("users/u1.ltape"), dir.path("users/u3.ltape")])
    #expect(text.code == 0)
    #expect(text.out.hasPrefix("2 logs\n  events       4,002\n  faults       "))
    #expect(text.out.contains("\n  ops\n"))
  }
}
