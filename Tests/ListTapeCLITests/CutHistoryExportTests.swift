import Foundation
import Testing

@Suite struct CutTests {
  @Test func cutThenShowIsTheSameState() throws {
    let dir = try TempDir()
    let path = try CLI.record(CLI.sample("form"), in: dir)
    let out = dir.path("cut.ltape")
    let r = try CLI.run(["cut", path, "--to", "mark:name entered", "-o", out])
    #expect(r.code == 0, "\(r.err)")
    #expect(r.out.isEmpty)
    #expect(r.err == "listtape: wrote 10 events (1...10 of 41) from \(path) to \(out)\n")
    let original = try CLI.run(["show", path, "--at", "10", "--json"])
    let cut = try CLI.run(["show", out, "--json"])
    #expect(cut.out == original.out)
    let events = try CLI.run(["events", path, "--to", "10", "--json"])
    #expect(try CLI.run(["events", out, "--json"]).out == events.out)
    // Recorded onward, the branch continues the numbering.
    let more = try CLI.run(
      ["record", out], input: Data(#"{"op":"mark","label":"branch"}"#.utf8))
    #expect(more.code == 0)
    #expect(try CLI.run(["show", out]).out.hasPrefix("event 11 of 11  mark"))
    #expect(try CLI.run(["diverge", path, out]).out.contains("diverge at event 11"))
    // A cut at 0: a log of no events, said as such.
    let none = try CLI.run(["cut", path, "--to", "0", "-o", dir.path("none.ltape")])
    #expect(none.code == 0)
    #expect(
      none.err
        == "listtape: wrote 0 events (none of 41) from \(path) to \(dir.path("none.ltape"))\n")
    #expect(try CLI.run(["show", dir.path("none.ltape")]).out.hasPrefix("event 0 of 0"))
  }

  @Test func refusesAnExistingOutput() throws {
    let dir = try TempDir()
    let path = try Handmade.record(in: dir)
    let out = dir.path("cut.ltape")
    #expect(try CLI.run(["cut", path, "--to", "3", "--output", out]).code == 0)
    let again = try CLI.run(["cut", path, "--to", "3", "-o", out])
    #expect(again.code == 73)
    #expect(again.err.hasPrefix("listtape: error: \(out) already exists; pass --force"))
    // An empty cut is a valid, empty log.
    let empty = dir.path("empty.ltape")
    #expect(try CLI.run(["cut", path, "--to", "0", "-o", empty]).code == 0)
    #expect(try CLI.run(["verify", empty]).code == 0)
  }

  @Test func usageErrors() throws {
    let dir = try TempDir()
    let path = try Handmade.record(in: dir)
    #expect(
      try CLI.run(["cut", path, "-o", dir.path("x")]).err
        .hasPrefix("Error: Missing expected argument '--to <point>'"))
    #expect(
      try CLI.run(["cut", path, "--to", "3"]).err
        .hasPrefix("Error: Missing expected argument '--output <out>'"))
    #expect(try CLI.run(["cut", path, "--to", "99", "-o", dir.path("x")]).code == 64)
    #expect(!FileManager.default.fileExists(atPath: dir.path("x")))
  }
}

@Suite struct HistoryTests {
  @Test func everyEventThatTouchedAnItem() throws {
    let dir = try TempDir()
    let path = try Handmade.record(in: dir)
    let r = try CLI.run(["history", path, "--item", "mic"])
    #expect(r.code == 0)
    let lines = r.out.lines.filter { !$0.isEmpty }.map(String.init)
    let numbers = lines.filter { $0.hasPrefix("#") }.map { $0.prefix { $0 != " " } }
    #expect(numbers == ["#2", "#3", "#4", "#8", "#9"])
    #expect(lines[1] == "    absent → main › Communication · level 1 · hidden")
    #expect(lines[2].hasSuffix("expand  Communication  (indirect)"))
    #expect(
      lines[7]
        == "    main › Communication · level 1 · row 1 · selected → main › Devices · level 1 · hidden"
    )
    #expect(lines.last == "5 events touched mic in 12 events")
  }

  @Test func jsonAndAbsentItems() throws {
    let dir = try TempDir()
    let path = try Handmade.record(in: dir)
    let r = try CLI.run(["history", path, "--item", "Weather", "--json"])
    #expect(r.code == 0)
    let objects = try r.out.lines.filter { !$0.isEmpty }.map {
      try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
    }
    #expect(objects.map { $0["event"] as? Int } == [2, 11])
    #expect(objects[0]["before"] is NSNull)
    let after = try #require(objects[1]["after"] as? [String: Any])
    #expect(after["title"] as? String == "Forecast")
    #expect(after["row"] as? Int == 5)
    #expect(objects[1]["named"] as? Bool == true)
    let none = try CLI.run(["history", path, "--item", "nothing"])
    #expect(none.code == 1)
    #expect(none.out == "no event touched nothing in 12 events\n")
    #expect(try CLI.run(["history", path]).code == 64)
  }
}

@Suite struct ExportTests {
  @Test(arguments: CLI.sampleNames)
  func swiftSourceParses(_ name: String) throws {
    let dir = try TempDir()
    let path = try CLI.record(CLI.sample(name), in: dir)
    let r = try CLI.run(["export", path, "--swift", "--at", "30"])
    #expect(r.code == 0)
    #expect(r.out.contains("NSDiffableDataSourceSnapshot<String, String>()"))
    #expect(r.out.contains("NSDiffableDataSourceSectionSnapshot<String>()"))
    let source = dir.path("Export.swift")
    try Data(r.out.utf8).write(to: URL(fileURLWithPath: source))
    let swiftc = Process()
    swiftc.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    swiftc.arguments = ["swiftc", "-parse", source]
    try swiftc.run()
    #expect(waitForExit(swiftc))
    #expect(swiftc.terminationStatus == 0)
  }

  @Test func handmadeState() throws {
    let dir = try TempDir()
    let path = try Handmade.record(in: dir)
    let r = try CLI.run(["export", path, "--swift"])
    #expect(r.out.contains(#"section0.append(["mouse", "keyboard", "mic"], to: "Devices")"#))
    #expect(r.out.contains(#"section0.expand(["Devices"])"#))
    #expect(r.out.contains(#"return ["keyboard"]"#))
    let missing = try CLI.run(["export", path])
    #expect(missing.code == 64)
    #expect(missing.err.hasPrefix("Error: Missing '--swift' or '--parquet'"))
  }
}
