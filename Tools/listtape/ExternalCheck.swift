import Foundation
import ListTapeInvestigate
import ListTapeJSON
import ListTapeModel
import ListTapeStore

/// A bisect check run by another program, with git bisect's exit codes: the state JSON on
/// its standard input, 0 good, 125 skip, other 1...127 bad, anything else aborts.
struct ExternalCheck: Sendable {
  let command: String
  let logPath: String
  /// The command it judges for, as its abort messages name it.
  var purpose = "bisect"

  /// Why the check could not judge a state: it did not start, or it aborted the search.
  struct Aborted: Error {
    var message: String
  }

  /// Runs the command on the state after `event` and interprets its exit status.
  func verdict(event: Int, state: ListState) throws(Aborted) -> Verdict {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/sh")
    process.arguments = ["-c", command]
    var environment = ProcessInfo.processInfo.environment
    environment["LISTTAPE_EVENT"] = String(event)
    environment["LISTTAPE_LOG"] = logPath
    process.environment = environment
    let input = Pipe()
    process.standardInput = input
    // The check's own output goes to standard error: standard output carries the answer
    // (JSON Lines with --json), which a chatty check must not corrupt.
    process.standardOutput = FileHandle.standardError
    do {
      try process.run()
    } catch {
      throw Aborted(message: "cannot run \(command): \(error.localizedDescription)")
    }
    var w = JSONWriter()
    state.writeJSON(event: event, to: &w)
    w.endLine()
    // A command that ignores its input closes the pipe early; that is not an error.
    signal(SIGPIPE, SIG_IGN)
    try? input.fileHandleForWriting.write(contentsOf: w.bytes)
    try? input.fileHandleForWriting.close()
    process.waitUntilExit()
    let status = process.terminationStatus
    if process.terminationReason == .uncaughtSignal {
      throw Aborted(
        message: "\(purpose) aborted: '\(command)' was killed by signal \(status) at event \(event)"
      )
    }
    switch status {
    case 0: return .good
    case 125: return .skip
    case 1...127: return .bad
    default:
      throw Aborted(
        message:
          "\(purpose) aborted: '\(command)' exited with \(status) at event \(event) (128 or more aborts)"
      )
    }
  }
}

extension Command {
  /// Checks the predicate of a command that takes `--where <expr>` or `--run <cmd>`:
  /// exactly one of them, and an expression that is true or false.
  static func requirePredicate(_ query: Query?, _ command: String?) throws(CLIError) {
    switch (query, command) {
    case (nil, nil): throw usageError("Give one of '--where <expr>' or '--run <cmd>'")
    case (.some, .some):
      throw usageError("'--where <expr>' and '--run <cmd>' cannot be used together")
    case (let query?, nil) where !query.isBoolean:
      throw usageError(
        "The expression for '--where <expr>' is not a predicate: column 1: \(spec.name) needs "
          + "true or false; compare the value with == != < <= > >=")
    default: break
    }
  }
}
