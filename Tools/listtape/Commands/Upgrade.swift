import Foundation
import ListTapeInvestigate
import ListTapeStore

/// `listtape upgrade LOG -o OUT`: the same log in the current format.
enum UpgradeCommand: Command {
  struct Arguments: ParsableArguments {
    var log = ""
    var output: String?
  }

  static let spec = CommandSpec<Arguments>(
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
    arguments: [.log(\.log)],
    options: [.output(\.output, value: "out", help: "The new log to write.")])

  static func run(_ arguments: Arguments, _ io: IO) throws(CLIError) -> Int32 {
    guard let output = arguments.output else {
      throw usageError("Missing '-o, --output <out>': the new log to write")
    }
    let path = arguments.log
    let timeline = try openTimeline(path)
    if FileManager.default.fileExists(atPath: output) {
      throw .failure(
        "\(output) already exists; upgrade writes a new log (remove it or choose another name)",
        code: ExitCode.cannotCreate)
    }
    let progress = Progress("upgrading", events: timeline.eventCount)
    defer { progress.finish() }
    let report = try replaying { () throws(StoreError) in
      try timeline.upgrade(to: output, progress: progress.update)
    }
    progress.finish()
    Diagnostics.line(
      "listtape: upgraded \(path) into \(output): \(Render.plural(report.events, "event")), "
        + "format \(report.fromFormat).x → \(report.toFormat).0, "
        + "\(Render.count(report.bytesBefore)) → \(Render.count(report.bytesAfter)) bytes")
    return ExitCode.success
  }
}
