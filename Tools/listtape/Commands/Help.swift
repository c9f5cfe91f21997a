/// `listtape help [CMD]`: the same text as `--help`.
enum HelpCommand: Command {
  struct Arguments: ParsableArguments {
    var subcommand: String?
  }

  static let spec = CommandSpec<Arguments>(
    name: "help",
    abstract: "Show help for listtape or one of its subcommands.",
    arguments: [.optional(\.subcommand, "subcommand", help: "The subcommand to describe.")])

  static func run(_ arguments: Arguments, _ io: IO) throws(CLIError) -> Int32 {
    guard let name = arguments.subcommand else {
      io.out.write(Help.root(version: CLI.version))
      return ExitCode.success
    }
    guard let command = CLI.command(named: name) else {
      throw usageError("Unknown subcommand '\(name)'")
    }
    io.out.write(Help.text(for: command.info))
    return ExitCode.success
  }
}
