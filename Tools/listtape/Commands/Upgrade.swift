import Foundation
import ListTapeReplay

/// `listtape upgrade LOG -o OUT`: the same log in the current format.
enum UpgradeCommand: Command {
  static let spec = CommandSpec(
    name: "upgrade",
    abstract: "Rewrite a log in the current format.",
    discussion: """
      Writes LOG's events, times included, into a new log in the current format (2.0: \
      identifiers stored once, columnar frames), with the same events and states. LOG itself \
      is never changed. A log of the current format is rewritten too, with full frames (a log \
      recorded a few events at a time shrinks). A damaged log, or a salvaged one that lost \
      events, is refused: salvage or cut it first.

      Exit status: 0 written, 73 the output already exists, 2 LOG is damaged or lost events.
      """,
    arguments: [logArgument],
    options: [
      OptionSpec(
        name: "output", short: "o", value: "out", help: "The new log to write.", isFile: true)
    ])

  static func run(_ invocation: Invocation) throws(CLIError) -> Int32 {
    guard let output = invocation.value("output") else {
      throw invocation.usageError("Missing '-o, --output <out>': the new log to write")
    }
    let path = invocation.required("log")
    let timeline = try openTimeline(path)
    if FileManager.default.fileExists(atPath: output) {
      throw .failure(
        "\(output) already exists; upgrade writes a new log (remove it or choose another name)",
        code: ExitCode.cannotCreate)
    }
    let progress = Progress(
      "upgrading", enabled: Terminal.isTTY(2) && timeline.eventCount >= 100_000)
    defer { progress.finish() }
    let report = try replaying { () throws(ReplayError) in
      try timeline.upgrade(to: output) { done, total in progress.update(done, total) }
    }
    progress.finish()
    Diagnostics.line("listtape: upgraded \(path) into \(output): \(report)")
    return ExitCode.success
  }
}
