import Foundation
import ListTapeInvestigate
import ListTapeToolSupport

/// A subcommand of the tool: its declaration and what it does.
///
/// To add one (docs/cli.md walks through an example):
/// 1. In `Commands/<Name>.swift`, an `enum <Name>Command: Command` with a
///    `struct Arguments: ParsableArguments` whose stored properties hold every argument and
///    option, with their defaults.
/// 2. `static let spec`: the name, abstract and discussion, and each argument and option
///    bound to its property by key path (`.flag(\.json, "json", help: …)`,
///    `.option(\.to, "to", value: "point", help: …)`, `.required(\.log, …)`). Parsing,
///    validation, `--help`, usage errors and shell completion all come from it.
/// 3. `static func run(_ arguments: Arguments, _ io: IO) throws(CLIError) -> Int32`: open
///    what it reads, call the libraries, render for a person (`io.style`) or for scripts
///    (`--json`), and return an `ExitCode`. Library errors become messages and exit codes
///    through `CLIError(error)`; usage problems the declaration cannot express are
///    `usageError(…)`.
/// 4. List it in `CLI.commands`, in `HelpTests.commands`, in docs/cli.md and
///    docs/listtape.1, and test it through the built binary (Tests/ListTapeCLITests).
protocol Command: Sendable {
  associatedtype Arguments: ParsableArguments
  static var spec: CommandSpec<Arguments> { get }
  static func run(_ arguments: Arguments, _ io: IO) throws(CLIError) -> Int32
  /// Whether the command loads one state and exits, so that every thread is best served from
  /// one heap grown at once (`AllocatorTuning.growOneHeap`); false unless it says so.
  static var loadsOneLargeState: Bool { get }
}

extension Command {
  /// What help, completion and usage errors read of this command.
  static var info: CommandInfo { spec.info }

  /// A usage error of this command: printed with its usage line, exit 64.
  static func usageError(_ message: String) -> CLIError { .usage(message, command: spec.name) }

  /// Parses the words after the command name and runs it (or prints its help).
  static func main(_ words: [String], environment: [String: String], out: Output)
    throws(CLIError) -> Int32
  {
    let parsed = try ParsedCommandLine(words, spec: spec)
    if parsed.wantsHelp {
      out.write(Help.text(for: spec.info))
      return ExitCode.success
    }
    let color = ColorChoice.resolve(
      flag: parsed.color, environment: environment, stdoutIsTTY: Terminal.isTTY(1))
    let io = IO(out: out, style: Style(enabled: color), environment: environment)
    if loadsOneLargeState { AllocatorTuning.growOneHeap() }
    return try run(parsed.arguments, io)
  }

  static var loadsOneLargeState: Bool { false }
}

/// Where a command writes, and how.
struct IO {
  let out: Output
  let style: Style
  let environment: [String: String]
}

/// Everything that ends a run early, with the exit code the protocol gives it.
enum CLIError: Error, Equatable {
  /// Printed as `Error: …`, the command's usage and a hint; exit 64.
  case usage(String, command: String?)
  /// Printed as `listtape: error: …`.
  case failure(String, code: Int32)
}

/// The protocol's exit codes (section 4).
enum ExitCode {
  static let success: Int32 = 0
  static let notFound: Int32 = 1
  static let damaged: Int32 = 2
  static let faults: Int32 = 3
  static let usage: Int32 = 64
  static let malformed: Int32 = 65
  static let cannotOpen: Int32 = 66
  /// The output file exists, or cannot be created (sysexits' EX_CANTCREAT).
  static let cannotCreate: Int32 = 73
  static let io: Int32 = 74
}

// MARK: - What several commands take

/// An event named on the command line, parsed with the command line (a malformed one is a
/// usage error before any log is read) and resolved against a log once it is open
/// (`resolve(_:in:for:option:)`).
enum Point: ArgumentValue, Equatable {
  /// `N`: the state after event N (0 is the empty list).
  case event(Int)
  /// `mark:LABEL`: the first event whose mark, or a mark nested in whose batch, has LABEL.
  case mark(String)
  /// `time:ISO8601`: the last event at or before that time (milliseconds since the epoch).
  case time(Int64)

  static func parse(_ word: String) throws(InvalidValue) -> Point {
    if word.hasPrefix("mark:") { return .mark(String(word.dropFirst(5))) }
    if word.hasPrefix("time:") {
      guard let ms = parseTime(String(word.dropFirst(5))) else {
        throw InvalidValue(
          expected: "an ISO 8601 time after 'time:', like time:2026-11-29T12:00:00Z")
      }
      return .time(ms)
    }
    if let n = Int(word) {
      guard n >= 0 else { throw InvalidValue(expected: "an event number ≥ 0") }
      return .event(n)
    }
    if !word.isEmpty, word.allSatisfy(\.isASCII), word.allSatisfy(\.isNumber) {
      throw InvalidValue(outOfRange: "no log holds that many events")
    }
    throw InvalidValue(expected: "N, mark:LABEL or time:ISO8601")
  }

  var helpText: String {
    switch self {
    case .event(let n): return "\(n)"
    case .mark(let label): return "mark:\(label)"
    case .time(let ms): return "time:\(Render.time(ms))"
    }
  }

  /// Milliseconds since the epoch for an ISO 8601 date-time (fractional seconds and zone
  /// offsets accepted; UTC when no zone is given; a space for the `T`, as RFC 3339 allows)
  /// or a date alone (its midnight, UTC).
  static func parseTime(_ given: String) -> Int64? {
    var spelled = given
    if spelled.range(of: #"^\d{4}-\d\d-\d\d \d"#, options: .regularExpression) != nil {
      spelled = String(spelled.prefix(10)) + "T" + spelled.dropFirst(11)
    }
    let dateOnly = spelled.range(of: #"^\d{4}-\d\d-\d\d$"#, options: .regularExpression) != nil
    let text = dateOnly ? spelled + "T00:00:00Z" : spelled
    guard isCalendarDate(text) else { return nil }
    let withZone =
      text.hasSuffix("Z") || text.range(of: #"[+-]\d\d:?\d\d$"#, options: .regularExpression) != nil
    let full = withZone ? text : text + "Z"
    for options: ISO8601DateFormatter.Options in [
      [.withInternetDateTime, .withFractionalSeconds], [.withInternetDateTime],
    ] {
      let f = ISO8601DateFormatter()
      f.formatOptions = options
      if let d = f.date(from: full) { return Int64((d.timeIntervalSince1970 * 1000).rounded()) }
    }
    return nil
  }

  /// False when `text` begins with a date `YYYY-MM-DD` the calendar does not have:
  /// Foundation's parser reads 2020-02-30 as March 1st.
  static func isCalendarDate(_ text: String) -> Bool {
    let head = Array(text.utf8.prefix(10))
    func number(_ r: Range<Int>) -> Int? {
      var n = 0
      for c in head[r] {
        guard (0x30...0x39).contains(c) else { return nil }
        n = n * 10 + Int(c - 0x30)
      }
      return n
    }
    guard head.count == 10, head[4] == UInt8(ascii: "-"), head[7] == UInt8(ascii: "-"),
      let year = number(0..<4), let month = number(5..<7), let day = number(8..<10)
    else { return true }
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
    let days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
    return (1...12).contains(month) && (1...days[month - 1]).contains(day)
  }
}

extension Query: ArgumentValue {
  /// Parsed before any log is read; a malformed one names the column.
  static func parse(_ word: String) throws(InvalidValue) -> Query {
    do {
      return try Query(word)
    } catch {
      throw InvalidValue(malformed: "expression", "\(error)")
    }
  }
}

extension ArgumentSpec {
  /// The `<log>` argument every log command takes.
  static func log(_ property: WritableKeyPath<Arguments, String> & Sendable) -> Self {
    .required(property, "log", help: "The log file.")
  }

  /// `<log> ...`: one log, or several logs and directories of `.ltape` files.
  static func logs(_ property: WritableKeyPath<Arguments, [String]> & Sendable) -> Self {
    .variadic(
      property, "log",
      help: "The log file; several logs, or directories of .ltape files, at once.")
  }
}

extension OptionSpec where Arguments: ParsableArguments {
  /// `--at <point>`: the event to look at, the last by default.
  static func at(_ property: WritableKeyPath<Arguments, Point?> & Sendable) -> Self {
    .option(
      property, "at", value: "point",
      help: "An event number N (0 is the empty list), mark:LABEL (the first mark with that "
        + "label) or time:ISO8601 (the last event at or before that time).",
      defaultText: "the last event")
  }

  /// `--where <expr>`: a state expression (docs/investigate.md).
  static func `where`(_ property: WritableKeyPath<Arguments, Query?> & Sendable) -> Self {
    .option(
      property, "where", value: "expr",
      help: "A state expression such as 'visible(\"mic\") and count(selected) > 0' (see "
        + "docs/investigate.md).")
  }

  /// `--context <n>`: unchanged items shown around a diff's changes.
  static func context(_ property: WritableKeyPath<Arguments, Int> & Sendable) -> Self {
    .option(
      property, "context", value: "n",
      help: "Unchanged items shown around changes; longer runs are folded into one line.",
      valid: 0...Int.max)
  }

  /// `-o, --output <out>`: the file to write (`-`, a pipe or a device too, as
  /// `OutputFile` decides), required unless `optional`.
  static func output(
    _ property: WritableKeyPath<Arguments, String> & Sendable, value: String, help: String
  ) -> Self {
    .required(property, "output", short: "o", value: value, help: help, isFile: true)
  }

  /// `-o, --output <out>` when writing a file is optional.
  static func output(
    _ property: WritableKeyPath<Arguments, String?> & Sendable, value: String, help: String
  ) -> Self {
    .option(property, "output", short: "o", value: value, help: help, isFile: true)
  }

  /// `--force`: replace an existing output file.
  static func force(_ property: WritableKeyPath<Arguments, Bool> & Sendable) -> Self {
    .flag(
      property, "force",
      help: "Replace the output file if it exists (its new content is written beside it and "
        + "renamed over it; a symlink's target is replaced, the link stays).")
  }
}
