import Testing

@Suite struct UsageErrorTests {
  static let cases: [([String], String)] = [
    (["frobnicate"], "Error: Unknown subcommand 'frobnicate'"),
    (["--frobnicate"], "Error: Unknown option '--frobnicate'"),
    (["show"], "Error: Missing expected argument '<log>'"),
    (["record"], "Error: Missing expected argument '<log>'"),
    (["show", "a.ltape", "b.ltape"], "Error: Unexpected argument 'b.ltape'"),
    (["show", "a.ltape", "--bogus"], "Error: Unknown option '--bogus'"),
    (["show", "a.ltape", "--at"], "Error: Missing value for '--at <point>'"),
    (["show", "a.ltape", "--json=yes"], "Error: The flag '--json' does not take a value"),
    (
      ["show", "a.ltape", "--color", "sometimes"],
      "Error: The value 'sometimes' is invalid for '--color <when>'"
    ),
    (
      ["record", "a.ltape", "--fsync", "daily"],
      "Error: The value 'daily' is invalid for '--fsync <mode>'"
    ),
    (
      ["events", "a.ltape", "--op", "explode"],
      "Error: The value 'explode' is invalid for '--op <op>'"
    ),
    (["generate", "--events", "many"], "Error: The value 'many' is invalid for '--events <n>'"),
    (["generate", "--events", "-5"], "Error: The value '-5' is invalid for '--events <n>'"),
    (["generate", "--seed", "x"], "Error: The value 'x' is invalid for '--seed <s>'"),
    (["completion", "fish"], "Error: The value 'fish' is invalid for '<shell>'"),
    (["help", "frobnicate"], "Error: Unknown subcommand 'frobnicate'"),
  ]

  @Test(arguments: cases)
  func usageError(_ args: [String], _ message: String) throws {
    let r = try CLI.run(args)
    #expect(r.code == 64)
    #expect(r.out.isEmpty)
    let lines = r.err.lines
    #expect(lines.first.map(String.init)?.hasPrefix(message) == true, "\(r.err)")
    #expect(lines.count >= 3)
    #expect(lines.contains { $0.hasPrefix("Usage: listtape") })
    #expect(
      lines.contains {
        $0.contains("See 'listtape") && $0.contains("--help' for more information.")
      })
  }

  @Test func usageNamesTheCommand() throws {
    let r = try CLI.run(["replay", "x.ltape", "--strict=1"])
    #expect(r.err.contains("Usage: listtape replay <log> [--to <point>] [--strict] [--json]"))
    #expect(r.err.contains("See 'listtape replay --help' for more information."))
  }

  @Test func doubleDashEndsOptions() throws {
    let dir = try TempDir()
    let r = try CLI.run(["show", "--", dir.path("--odd-name.ltape")])
    #expect(r.code == 66)
  }
}
