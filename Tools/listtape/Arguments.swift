/// One option of a command: `--name <value>`, or a flag when `value` is nil.
struct OptionSpec {
  var name: String
  var short: Character? = nil
  /// The value's placeholder in help text (`point` shows as `<point>`); nil for a flag.
  var value: String? = nil
  var help: String
  var defaultText: String? = nil
  /// The accepted values, checked when parsing and offered by shell completion.
  var choices: [String] = []
  /// Whether the value names a file (for completion).
  var isFile = false
  var hidden = false

  /// `--at <point>` or `--json`.
  var synopsis: String {
    guard let value else { return "--\(name)" }
    return "--\(name) <\(value)>"
  }

  /// `-h, --help` or `--at <point>`.
  var label: String {
    guard let short else { return synopsis }
    return "-\(short), \(synopsis)"
  }
}

/// One positional argument.
struct ArgumentSpec {
  var name: String
  var help: String
  var optional = false
  var choices: [String] = []
  var isFile = true
  /// Whether more values may follow (only the last argument): `<log> ...`.
  var repeats = false

  var synopsis: String { (optional ? "[<\(name)>]" : "<\(name)>") + (repeats ? " ..." : "") }
}

/// What a command declares about itself: enough to parse its arguments and print its help.
struct CommandSpec {
  var name: String
  var abstract: String
  var discussion: String = ""
  var arguments: [ArgumentSpec] = []
  var options: [OptionSpec] = []
  var hidden = false

  /// The command's own options followed by the ones every command takes.
  var allOptions: [OptionSpec] { options + CommandSpec.standardOptions }

  static let colorOption = OptionSpec(
    name: "color", value: "when", help: "When to colour the output.", defaultText: "auto",
    choices: ColorChoice.allCases.map(\.rawValue))
  static let helpOption = OptionSpec(name: "help", short: "h", help: "Show help information.")
  static let standardOptions = [colorOption, helpOption]

  /// `listtape show <log> [--at <point>] [--json] [--all]`.
  var usage: String {
    var parts = ["listtape", name]
    parts += arguments.map(\.synopsis)
    for o in options where !o.hidden { parts.append("[\(o.synopsis)]") }
    return parts.joined(separator: " ")
  }
}

/// A command of the tool: its declaration and what it does.
protocol Command: Sendable {
  static var spec: CommandSpec { get }
  static func run(_ invocation: Invocation) throws(CLIError) -> Int32
}

/// Everything that ends a run early, with the exit code the protocol gives it.
enum CLIError: Error, Equatable {
  /// Printed as `Error: …`, the command's usage and a hint; exit 64.
  case usage(String, command: String?)
  /// Printed as `listtape: error: …`.
  case failure(String, code: Int32)

  static func missingFile(_ path: String, _ reason: String) -> CLIError {
    .failure("cannot open \(path): \(reason)", code: ExitCode.cannotOpen)
  }
}

/// The protocol's exit codes.
enum ExitCode {
  static let success: Int32 = 0
  static let notFound: Int32 = 1
  static let damaged: Int32 = 2
  static let faults: Int32 = 3
  static let usage: Int32 = 64
  static let malformed: Int32 = 65
  static let cannotOpen: Int32 = 66
  static let io: Int32 = 74
}

/// A command line split by a command's spec.
struct ParsedArguments: Equatable {
  var positionals: [String] = []
  var values: [String: String] = [:]
  /// Every value of an option given more than once, in order (`values` keeps the last).
  var repeated: [String: [String]] = [:]
  var flags: Set<String> = []
  var wantsHelp = false

  /// Splits `args` (the words after the command name) by `spec`.
  ///
  /// Accepts `--name value`, `--name=value`, `-h`, and `--` to end options; the last of a
  /// repeated option wins. Help wins over every other problem.
  init(_ args: [String], spec: CommandSpec) throws(CLIError) {
    let options = spec.allOptions
    func usage(_ message: String) -> CLIError { .usage(message, command: spec.name) }
    if let end = args.firstIndex(of: "--") {
      wantsHelp = args[..<end].contains { $0 == "--help" || $0 == "-h" }
    } else {
      wantsHelp = args.contains { $0 == "--help" || $0 == "-h" }
    }
    if wantsHelp { return }
    var i = 0
    var onlyPositionals = false
    while i < args.count {
      let word = args[i]
      i += 1
      if onlyPositionals || word == "-" || !word.hasPrefix("-") {
        positionals.append(word)
        continue
      }
      if word == "--" {
        onlyPositionals = true
        continue
      }
      var name: Substring
      var inline: String? = nil
      let option: OptionSpec?
      if word.hasPrefix("--") {
        name = word.dropFirst(2)
        if let eq = name.firstIndex(of: "=") {
          inline = String(name[name.index(after: eq)...])
          name = name[..<eq]
        }
        option = options.first { $0.name == name }
      } else {
        name = word.dropFirst()
        option = name.count == 1 ? options.first { $0.short == name.first } : nil
      }
      guard let option else {
        if word.first == "-", word.dropFirst().allSatisfy(\.isNumber), !word.dropFirst().isEmpty {
          throw usage("Unexpected argument '\(word)'")
        }
        throw usage("Unknown option '\(word)'")
      }
      guard option.value != nil else {
        if inline != nil { throw usage("The flag '--\(option.name)' does not take a value") }
        flags.insert(option.name)
        continue
      }
      let value: String
      if let inline {
        value = inline
      } else if i < args.count {
        value = args[i]
        i += 1
      } else {
        throw usage("Missing value for '\(option.synopsis)'")
      }
      if !option.choices.isEmpty && !option.choices.contains(value) {
        throw usage(
          "The value '\(value)' is invalid for '\(option.synopsis)'; expected one of: "
            + option.choices.joined(separator: ", "))
      }
      values[option.name] = value
      repeated[option.name, default: []].append(value)
    }
    let required = spec.arguments.filter { !$0.optional }.count
    if positionals.count > spec.arguments.count && spec.arguments.last?.repeats != true {
      throw usage("Unexpected argument '\(positionals[spec.arguments.count])'")
    }
    if positionals.count < required {
      throw usage("Missing expected argument '<\(spec.arguments[positionals.count].name)>'")
    }
    for (arg, value) in zip(spec.arguments, positionals)
    where !arg.choices.isEmpty && !arg.choices.contains(value) {
      throw usage(
        "The value '\(value)' is invalid for '<\(arg.name)>'; expected one of: "
          + arg.choices.joined(separator: ", "))
    }
  }
}

/// A parsed command line with what a command needs to run: its values and the output.
struct Invocation {
  let spec: CommandSpec
  let arguments: ParsedArguments
  let out: Output
  let style: Style
  let environment: [String: String]

  /// The positional argument declared as `name`, when given.
  func argument(_ name: String) -> String? {
    guard let i = spec.arguments.firstIndex(where: { $0.name == name }),
      i < arguments.positionals.count
    else { return nil }
    return arguments.positionals[i]
  }

  /// A required positional argument (the parser has already checked it is there).
  func required(_ name: String) -> String { argument(name) ?? "" }

  func value(_ name: String) -> String? { arguments.values[name] }

  /// Every value given for an option that may repeat, in order.
  func values(_ name: String) -> [String] { arguments.repeated[name] ?? [] }

  func flag(_ name: String) -> Bool { arguments.flags.contains(name) }

  /// The option's value as an integer in `range`, or nil when the option is absent.
  func int(_ name: String, in range: ClosedRange<Int> = 0...Int.max) throws(CLIError) -> Int? {
    guard let text = value(name) else { return nil }
    guard let n = Int(text), range.contains(n) else {
      let option = spec.allOptions.first { $0.name == name }
      let label = option?.synopsis ?? "--\(name)"
      var message = "The value '\(text)' is invalid for '\(label)'"
      if range.upperBound == Int.max {
        message += "; expected an integer ≥ \(range.lowerBound)"
      } else {
        message += "; expected an integer in \(range.lowerBound)...\(range.upperBound)"
      }
      throw usageError(message)
    }
    return n
  }

  func usageError(_ message: String) -> CLIError { .usage(message, command: spec.name) }
}
