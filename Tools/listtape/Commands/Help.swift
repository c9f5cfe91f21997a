/// `listtape help [CMD]`: the same text as `--help`.
enum HelpCommand: Command {
  static let spec = CommandSpec(
    name: "help",
    abstract: "Show help for listtape or one of its subcommands.",
    arguments: [
      ArgumentSpec(name: "subcommand", help: "The subcommand to describe.", optional: true)
    ])

  static func run(_ invocation: Invocation) throws(CLIError) -> Int32 {
    guard let name = invocation.argument("subcommand") else {
      invocation.out.write(Help.root(version: CLI.version))
      return ExitCode.success
    }
    guard let command = CLI.command(named: name) else {
      throw invocation.usageError("Unknown subcommand '\(name)'")
    }
    invocation.out.write(Help.text(for: command.spec))
    return ExitCode.success
  }
}
