import Foundation
import Testing

@Suite struct HelpTests {
  static let commands = [
    "record", "show", "replay", "events", "verify", "stats", "bisect", "find", "diff",
    "diverge", "cut", "history", "export", "salvage", "upgrade", "scrub", "html", "demo",
    "shrink", "what-if", "generate", "completion", "help",
  ]

  @Test func rootHelpListsEverySubcommand() throws {
    let r = try CLI.run(["--help"])
    #expect(r.code == 0)
    #expect(r.err.isEmpty)
    for heading in ["OVERVIEW:", "USAGE: listtape <subcommand>", "OPTIONS:", "SUBCOMMANDS:"] {
      #expect(r.out.contains(heading))
    }
    for c in Self.commands { #expect(r.out.contains("\n  \(c) ")) }
    #expect(try CLI.run(["help"]).out == r.out)
    #expect(try CLI.run(["-h"]).out == r.out)
  }

  @Test(arguments: commands)
  func commandHelp(_ name: String) throws {
    let r = try CLI.run([name, "--help"])
    #expect(r.code == 0)
    #expect(r.err.isEmpty)
    #expect(r.out.hasPrefix("OVERVIEW: "))
    #expect(r.out.contains("\nUSAGE: listtape \(name)"))
    #expect(r.out.contains("\nOPTIONS:\n"))
    #expect(r.out.contains("  -h, --help              Show help information.\n"))
    #expect(r.out.contains("  --color <when>"))
    #expect(try CLI.run(["help", name]).out == r.out)
    #expect(try CLI.run([name, "-h"]).out == r.out)
    // Help wins over every other problem on the line.
    #expect(try CLI.run([name, "--bogus", "--help"]).out == r.out)
    for line in r.out.lines { #expect(line.count <= 80, "\(line)") }
  }

  @Test func showHelpDocumentsArgumentsAndOptions() throws {
    let r = try CLI.run(["show", "--help"])
    #expect(r.out.contains("USAGE: listtape show <log> [--at <point>] [--json] [--pretty] [--all]"))
    #expect(r.out.contains("ARGUMENTS:\n  <log>"))
    #expect(r.out.contains("  --at <point>"))
    #expect(r.out.contains("mark:LABEL"))
    #expect(
      r.out.contains("(values: always, never,\n                          auto; default: auto)"))
  }

  @Test func version() throws {
    let r = try CLI.run(["--version"])
    #expect(r.code == 0)
    #expect(r.out == "listtape 0.1.0\n")
  }

  @Test func noArgumentsIsAUsageErrorWithTheOverview() throws {
    let r = try CLI.run([])
    #expect(r.code == 64)
    #expect(r.out.isEmpty)
    #expect(r.err.contains("SUBCOMMANDS:"))
  }
}

@Suite struct ManPageTests {
  @Test func rendersWithManAndCoversEveryCommand() throws {
    let page = CLI.packageRoot.appendingPathComponent("docs/listtape.1")
    let text = try String(contentsOf: page, encoding: .utf8)
    for c in HelpTests.commands {
      // roff spells a hyphen in a name `\-`.
      let name = c.replacingOccurrences(of: "-", with: "\\-")
      #expect(text.contains(".B listtape \(name)"), "\(c)")
    }
    guard FileManager.default.isExecutableFile(atPath: "/usr/bin/man") else { return }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/man")
    process.arguments = ["-l", page.path]
    process.environment = ["MANPAGER": "cat", "MANWIDTH": "80", "PATH": "/usr/bin:/bin"]
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = FileHandle.nullDevice
    try process.run()
    let out = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    #expect(process.terminationStatus == 0)
    #expect(out.contains("EXIT STATUS"))
    #expect(out.contains("listtape - record, replay and inspect logs"))
  }
}
