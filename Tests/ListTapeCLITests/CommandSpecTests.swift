import Testing

@testable import listtape

/// Every command's declaration is well formed: commands read their options through key
/// paths (a misspelt property does not compile), and these checks catch what a key path
/// cannot: a misspelt or clashing option name, a property declared but never bound to an
/// option, or one bound twice.
@Suite struct CommandSpecTests {
  static let commands = listtape.CLI.commands.map { $0.info.name }

  @Test(arguments: commands)
  func declarationIsWellFormed(_ name: String) throws {
    let command = try #require(listtape.CLI.command(named: name))
    check(command)
  }

  func check<C: Command>(_ command: C.Type) {
    let spec = C.spec
    let names = spec.options.map(\.info.name) + CommandInfo.standardOptions.map(\.name)
    #expect(Set(names).count == names.count, "\(spec.name): an option name is used twice")
    for name in names {
      let wellFormed =
        name.first?.isLowercase == true
        && name.allSatisfy { $0.isLowercase || $0.isNumber || $0 == "-" }
      #expect(wellFormed, "\(spec.name): '--\(name)' is not lower-case words joined by '-'")
    }
    let shorts = (spec.options.map(\.info) + CommandInfo.standardOptions).compactMap(\.short)
    #expect(Set(shorts).count == shorts.count, "\(spec.name): a short name is used twice")
    let bound = spec.options.map(\.property) + spec.arguments.map(\.property)
    #expect(
      Set(bound.map { $0 as AnyKeyPath }).count == bound.count,
      "\(spec.name): a property is bound twice")
    let declared = Mirror(reflecting: C.Arguments()).children.count
    #expect(bound.count == declared, "\(spec.name): a property of Arguments has no option")
    if let variadic = spec.arguments.firstIndex(where: \.info.variadic) {
      #expect(variadic == spec.arguments.count - 1, "\(spec.name): a variadic argument is last")
    }
  }

  struct Sample: ParsableArguments {
    var log = ""
    var more: [String] = []
    var without: [Int] = []
    var count = 3
    var flag = false
  }

  static let sample = CommandSpec<Sample>(
    name: "sample", abstract: "A command for the parser's tests.",
    arguments: [.log(\.log), .variadic(\.more, "more", help: "More logs.")],
    options: [
      .repeating(\.without, "without", value: "n", help: "Leave out event N."),
      .option(\.count, "count", value: "n", help: "How many.", valid: 1...9),
      .flag(\.flag, "flag", help: "A flag."),
    ])

  @Test func repeatedOptionsAndVariadicArgumentsKeepEveryValue() throws {
    let parsed = try ParsedCommandLine(
      ["a", "--without", "3", "b", "--without=5", "c", "--count", "2", "--flag"],
      spec: Self.sample)
    #expect(parsed.arguments.log == "a")
    #expect(parsed.arguments.more == ["b", "c"])
    #expect(parsed.arguments.without == [3, 5])
    #expect(parsed.arguments.count == 2)
    #expect(parsed.arguments.flag)
    #expect(
      Self.sample.info.usage
        == "listtape sample <log> <more> ... [--without <n> ...] [--count <n>] [--flag]")
  }

  @Test func valuesAreCheckedWhereTheyAreDeclared() {
    func error(_ words: [String]) -> CLIError? {
      do {
        _ = try ParsedCommandLine(words, spec: Self.sample)
        return nil
      } catch {
        return error
      }
    }
    #expect(
      error(["a", "--count", "12"])
        == .usage(
          "The value '12' is invalid for '--count <n>'; expected an integer in 1...9",
          command: "sample"))
    #expect(
      error(["a", "--without", "x"])
        == .usage(
          "The value 'x' is invalid for '--without <n>'; expected an integer",
          command: "sample"))
    #expect(
      error(["a", "--flag=1"])
        == .usage("The flag '--flag' does not take a value", command: "sample"))
    #expect(
      error(["a", "--cuont", "2"])
        == .usage("Unknown option '--cuont'. Did you mean '--count'?", command: "sample"))
    #expect(error(["a", "--bogus"]) == .usage("Unknown option '--bogus'", command: "sample"))
  }
}
