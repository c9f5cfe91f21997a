import Foundation
import Testing

/// Messages at the edges a person touches (issue 23.4), through the built binary.
@Suite struct MessagesTests {
  static func log(_ name: String) -> String {
    CLI.samples.appendingPathComponent(name + ".ltape").path
  }

  @Test func showNamesTheFaultOfItsEvent() throws {
    let r = try CLI.run(["show", Self.log("symbols"), "--at", "98"])
    #expect(r.code == 0)
    #expect(r.out.lines[0].contains("fault: "), "\(r.out.lines[0])")
    let fine = try CLI.run(["show", Self.log("symbols"), "--at", "97"])
    #expect(!fine.out.lines[0].contains("fault"))
  }

  @Test func diffPrintsASectionHeaderBeforeItsDeletedRows() throws {
    let r = try CLI.run(["diff", Self.log("contacts"), "--from", "60", "--to", "75"])
    #expect(r.code == 0)
    let lines = r.out.lines.map(String.init)
    let header = try #require(lines.firstIndex(of: "[favorites]"))
    let deleted = try #require(lines.firstIndex { $0.hasPrefix("- contact-005") })
    #expect(header < deleted)
    let all = try #require(lines.firstIndex(of: "[all]"))
    let deletedInAll = try #require(lines.firstIndex { $0.hasPrefix("- contact-027") })
    #expect(all < deletedInAll)
    #expect(lines[2] == "[favorites]", "nothing before the first header")
  }

  @Test func hugeNumbersGetARangeMessage() throws {
    let r = try CLI.run([
      "html", Self.log("symbols"), "-o", "-", "--max-events", "99999999999999999999",
    ])
    #expect(r.code == 64)
    #expect(
      r.err.hasPrefix(
        "Error: The value '99999999999999999999' for '--max-events <n>' is out of range"))
  }

  @Test func wrongFileKindsGetAHint() throws {
    let jsonl = CLI.sample("symbols").path
    let asLog = try CLI.run(["show", jsonl])
    #expect(asLog.code == 2)
    #expect(
      asLog.err.hasPrefix(
        "listtape: error: \(jsonl) holds JSON Lines, not a log; record it first: listtape record"))
    let dir = try TempDir()
    let asLines = try CLI.run(
      ["record", dir.path("new.ltape")],
      input: try Data(contentsOf: URL(fileURLWithPath: Self.log("symbols"))))
    #expect(asLines.code == 65)
    #expect(asLines.err.hasPrefix("listtape: line 1: this is a ListTape log, not JSON Lines"))
  }

  @Test func didYouMeanForCommandsAndOptions() throws {
    let command = try CLI.run(["shwo"])
    #expect(command.code == 64)
    #expect(command.err.hasPrefix("Error: Unknown subcommand 'shwo'. Did you mean 'show'?"))
    let option = try CLI.run(["show", Self.log("symbols"), "--jsno"])
    #expect(option.code == 64)
    #expect(option.err.hasPrefix("Error: Unknown option '--jsno'. Did you mean '--json'?"))
    let far = try CLI.run(["show", Self.log("symbols"), "--bogus"])
    #expect(far.err.hasPrefix("Error: Unknown option '--bogus'\n"))
  }

  @Test func diffOfTwoLogsNamesTheLogAPointIsOutside() throws {
    let r = try CLI.run(["diff", Self.log("symbols"), Self.log("form"), "--at", "50"])
    #expect(r.code == 64)
    #expect(r.err.hasPrefix("Error: --at 50 is out of range: \(Self.log("form")) has 41 events"))
  }

  @Test func colorIsAcceptedBeforeTheSubcommand() throws {
    let r = try CLI.run(["--color", "always", "show", Self.log("symbols")])
    #expect(r.code == 0)
    #expect(r.out.contains("\u{1B}["))
    let never = try CLI.run(["--color=never", "show", Self.log("symbols")])
    #expect(never.code == 0)
    #expect(!never.out.contains("\u{1B}["))
  }

  @Test func singularAndPlural() throws {
    let dir = try TempDir()
    var bytes = try [UInt8](
      Data(contentsOf: CLI.packageRoot.appendingPathComponent("Logs/golden/session-30k.ltape")))
    bytes[bytes.count / 3] ^= 0x55
    try Data(bytes).write(to: URL(fileURLWithPath: dir.path("d.ltape")))
    let r = try CLI.run(["salvage", dir.path("d.ltape"), "-o", dir.path("s.ltape")])
    #expect(r.err.contains("in 1 gap;"), "\(r.err)")
    #expect(r.err.contains("1 damaged range and 0 stray frames"), "\(r.err)")
  }

  @Test func recordCapsRepeatedWarningsAndHasAQuietMode() throws {
    let dir = try TempDir()
    // 30 faults: each line selects an item that does not exist.
    var lines = #"{"op":"appendSections","sections":["s"]}"# + "\n"
    for i in 0..<30 { lines += #"{"op":"select","items":["nope\#(i)"]}"# + "\n" }
    let capped = try CLI.run(["record", dir.path("a.ltape")], input: Data(lines.utf8))
    #expect(capped.code == 0)
    #expect(capped.err.lines.filter { $0.hasPrefix("listtape: warning: event") }.count == 20)
    #expect(
      capped.err.contains(
        "30 faults; 31 events in the log); 10 fault warnings not shown (over --max-warnings 20)"),
      "\(capped.err)")
    let quiet = try CLI.run(["record", "--quiet", dir.path("b.ltape")], input: Data(lines.utf8))
    #expect(quiet.code == 0)
    #expect(quiet.err.lines.filter { !$0.isEmpty }.count == 1, "\(quiet.err)")
    #expect(quiet.err.contains("30 fault warnings not shown (--quiet)"))
    let all = try CLI.run(
      ["record", "--max-warnings", "100", dir.path("c.ltape")], input: Data(lines.utf8))
    #expect(all.err.lines.filter { $0.hasPrefix("listtape: warning: event") }.count == 30)
  }
}
