import Foundation
import ListTapeInvestigate
import ListTapeLog
import ListTapeRead
import ListTapeStore

/// The tool: its subcommands and the dispatch from a command line to one of them.
enum CLI {
  static let version = "0.1.0"
  static let abstract = "Record, replay and inspect logs of expandable-list edits."
  static let discussion = """
    A log holds every edit of an expandable list (Apple's diffable data source model) as an \
    event. Events are numbered from 1; the state at N is the list after events 1...N.
    """

  static let commands: [any Command.Type] = [
    RecordCommand.self, ShowCommand.self, ReplayCommand.self, EventsCommand.self,
    VerifyCommand.self, StatsCommand.self, BisectCommand.self, FindCommand.self,
    DiffCommand.self, DivergeCommand.self, CutCommand.self, HistoryCommand.self,
    ExportCommand.self, SalvageCommand.self, UpgradeCommand.self, ScrubCommand.self,
    HTMLCommand.self, DemoCommand.self, ShrinkCommand.self, WhatIfCommand.self,
    GenerateCommand.self, CompletionCommand.self, HelpCommand.self,
  ]

  /// `commands`' names, in the same order (`HelpTests` runs each name's `--help`): dispatch
  /// builds only the spec of the command it runs, where reading every spec before it
  /// instantiated their key paths' types (about 2 ms of `diff`'s start).
  static let names = [
    "record", "show", "replay", "events", "verify", "stats", "bisect", "find", "diff",
    "diverge", "cut", "history", "export", "salvage", "upgrade", "scrub", "html", "demo",
    "shrink", "what-if", "generate", "completion", "help",
  ]

  static func command(named name: String) -> (any Command.Type)? {
    guard let i = names.firstIndex(of: name), i < commands.count else { return nil }
    return commands[i]
  }

  /// Runs a command line (without the program name) and returns the exit code.
  static func main(_ args: [String], environment: [String: String]) -> Int32 {
    var args = args
    // `listtape --color never show LOG`: the option every command takes, given before the
    // command, goes to the command.
    var leading: [String] = []
    while let word = args.first, word == "--color" || word.hasPrefix("--color=") {
      args.removeFirst()
      leading.append(word)
      if word == "--color", let value = args.first {
        args.removeFirst()
        leading.append(value)
      }
    }
    if !leading.isEmpty && !args.isEmpty { args.insert(contentsOf: leading, at: 1) }
    guard let first = args.first else {
      Diagnostics.write(Help.root(version: version))
      return ExitCode.usage
    }
    switch first {
    case "--version":
      print("listtape \(version)")
      return ExitCode.success
    case "-h", "--help":
      print(Help.root(version: version), terminator: "")
      return ExitCode.success
    case BackgroundIndex.command:
      return BackgroundIndex.child(Array(args.dropFirst()))
    default:
      break
    }
    guard let command = command(named: first) else {
      let names = commands.compactMap { c -> String? in c.info.hidden ? nil : c.info.name }
      let message =
        first.hasPrefix("-")
        ? "Unknown option '\(first)'" + didYouMean(first, ["--version", "--help", "--color"])
        : "Unknown subcommand '\(first)'" + didYouMean(first, names)
      Diagnostics.write(Help.usageError(message, command: nil))
      return ExitCode.usage
    }
    let out = Output()
    do {
      let code = try command.main(Array(args.dropFirst()), environment: environment, out: out)
      out.flush()
      BackgroundIndex.shared.startBuilders(environment: environment)
      // A full disk or a failing device loses output: said, and exit 74. A reader of a pipe
      // that went away (EPIPE, when SIGPIPE is ignored) wanted no more.
      if let e = out.failure, e != EPIPE {
        Diagnostics.line(
          "listtape: error: cannot write to standard output: \(String(cString: strerror(e)))")
        return ExitCode.io
      }
      return code
    } catch {
      out.flush()
      switch error {
      case .usage(let message, let name):
        Diagnostics.write(Help.usageError(message, command: name))
        return ExitCode.usage
      case .failure(let message, let code):
        // Messages may quote a log's ids, labels or lines: never raw control characters.
        Diagnostics.line("listtape: error: \(Visible.text(message))")
        return code
      }
    }
  }
}

/// Opens a log for reading, turning the library's error into the CLI's.
func openTimeline(_ path: String) throws(CLIError) -> Timeline {
  if path == "-" && !FileManager.default.fileExists(atPath: path) {
    // A reader of standard input would expect it here; a log is read again from offsets.
    throw .failure(Failures.standardInputIsNoLog, code: ExitCode.cannotOpen)
  }
  // The index file a read may build beside the log is written to a temporary name first:
  // removed too if a command writing an output is interrupted.
  PartialOutputs.shared.addIfWatching(LogIndex.path(forLog: path) + ".tmp-\(getpid())")
  do {
    let timeline = try Timeline(path: path)
    // `getenv`, not `ProcessInfo.environment`: that copies the whole environment into a
    // dictionary, a cost every read command would pay at start.
    if let text = getenv("LISTTAPE_INDEX_SPACING").map({ String(cString: $0) }),
      let spacing = Int(text), spacing > 0
    {
      // Tuning experiments and tests: exactly this spacing, whatever the state's size.
      timeline.indexSpacing = spacing
      timeline.spacesPointsByItems = false
    }
    // A seek that folded far leaves the index to a builder of its own (`BackgroundIndex`).
    timeline.onLongFold = { BackgroundIndex.shared.want(path) }
    // Building a 2.0 log's index file (on the first seek that needs it) shows progress.
    let progress = Progress("indexing", enabled: Terminal.isTTY(2))
    timeline.indexProgress = { done, total in
      done < total ? progress.update(done, total) : progress.finish()
    }
    return timeline
  } catch {
    if case .log(let e) = error, e.kind == .notALog, looksLikeJSONLines(path) {
      throw .failure(
        "\(path) holds JSON Lines, not a log; record it first: listtape record NEW.ltape < "
          + path, code: ExitCode.damaged)
    }
    throw CLIError(error)
  }
}

/// Whether the file at `path` starts (after blanks) with `{`, as JSON Lines do.
func looksLikeJSONLines(_ path: String) -> Bool {
  guard let handle = FileHandle(forReadingAtPath: path) else { return false }
  defer { try? handle.close() }
  let head = (try? handle.read(upToCount: 256)) ?? Data()
  return head.first { ![0x20, 0x09, 0x0A, 0x0D].contains($0) } == UInt8(ascii: "{")
}

/// Runs `body`, turning a library error into the CLI's.
func replaying<T>(_ body: () throws(StoreError) -> T) throws(CLIError) -> T {
  do {
    return try body()
  } catch {
    throw CLIError(error)
  }
}
