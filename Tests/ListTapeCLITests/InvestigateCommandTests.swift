import Foundation
import Testing

/// What every investigation command shares: help, missing and damaged files.
@Suite struct InvestigateCommandTests {
  static let commands: [[String]] = [
    ["bisect", "LOG", "--where", #"exists("a")"#],
    ["find", "LOG", "--faults"],
    ["diff", "LOG", "--from", "0"],
    ["diverge", "LOG", "LOG"],
    ["cut", "LOG", "--to", "0", "-o", "OUT"],
    ["history", "LOG", "--item", "a"],
    ["export", "LOG", "--swift"],
  ]

  @Test(arguments: commands.map { $0[0] })
  func help(_ name: String) throws {
    let r = try CLI.run([name, "--help"])
    #expect(r.code == 0)
    #expect(r.err.isEmpty)
    #expect(r.out.hasPrefix("OVERVIEW: "))
    #expect(r.out.contains("\nUSAGE: listtape \(name) <"))
    #expect(r.out.contains("\nARGUMENTS:\n"))
    #expect(r.out.contains("\nOPTIONS:\n"))
    #expect(r.out.contains("  -h, --help              Show help information.\n"))
    #expect(try CLI.run(["help", name]).out == r.out)
    #expect(try CLI.run([name, "--bogus", "--help"]).out == r.out)
    for line in r.out.lines { #expect(line.count <= 80, "\(line)") }
    #expect(try CLI.run(["--help"]).out.contains("\n  \(name) "))
    #expect(try CLI.run(["completion", "bash"]).out.contains("    \(name))\n"))
  }

  @Test(arguments: commands)
  func missingFileAndDamagedLog(_ args: [String]) throws {
    let dir = try TempDir()
    let out = dir.path("out.ltape")
    func with(_ log: String) -> [String] {
      args.map { $0 == "LOG" ? log : $0 == "OUT" ? out : $0 }
    }
    let missing = try CLI.run(with(dir.path("missing.ltape")))
    #expect(missing.code == 66)
    #expect(missing.err.hasPrefix("listtape: error: "))
    let garbage = dir.path("garbage.ltape")
    try Data("not a log at all\n".utf8).write(to: URL(fileURLWithPath: garbage))
    let damaged = try CLI.run(with(garbage))
    #expect(damaged.code == 2)
    #expect(damaged.err.hasPrefix("listtape: error: "))
    #expect(try CLI.run(args.map { $0 == "LOG" ? "x" : $0 } + ["--frobnicate"]).code == 64)
  }

  @Test func noProgressWhenStderrIsNotATerminal() throws {
    let logs = try Planted.logs.get()
    let r = try CLI.run(["find", logs.buggy, "--where", "count(sections)"])
    #expect(!r.err.contains("\r"))
    #expect(r.err.isEmpty)
  }
}
