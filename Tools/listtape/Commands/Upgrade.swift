import Foundation
import ListTapeInvestigate
import ListTapeRead
import ListTapeStore

/// `listtape upgrade LOG -o OUT`: the same log in the current format.
enum UpgradeCommand: Command {
  struct Arguments: ParsableArguments {
    var log = ""
    var output = ""
    var force = false
  }

  static let spec = CommandSpec<Arguments>(
    name: "upgrade",
    abstract: "Rewrite a log in the current format.",
    discussion: """
      Writes LOG's events, times included, into a new log in the current format (2.0: \
      identifiers stored once, columnar frames), with the same events and states. LOG itself \
      is never changed. A log of the current format is rewritten too, with full frames (a log \
      recorded a few events at a time shrinks). A damaged log, or a salvaged one that lost \
      events, is refused: salvage or cut it first. OUT may be '-' (standard output); an \
      existing OUT is refused unless --force (upgrading in place: LOG -o LOG --force).

      Exit status: 0 written, 73 the output already exists, 2 LOG is damaged or lost events.
      """,
    arguments: [.log(\.log)],
    options: [
      .output(\.output, value: "out", help: "The new log to write ('-': standard output)."),
      .force(\.force),
    ])

  static func run(_ arguments: Arguments, _ io: IO) throws(CLIError) -> Int32 {
    let output = try OutputFile.open(
      arguments.output, force: arguments.force, content: .log, for: self)
    let path = arguments.log
    let timeline = try openTimeline(path)
    let progress = Progress("upgrading", events: timeline.eventCount)
    defer { progress.finish() }
    let report = try output.writeFile { (file) throws(CLIError) in
      try replaying { () throws(StoreError) in
        try timeline.upgrade(to: file, progress: progress.update)
      }
    }
    try output.commit()
    progress.finish()
    Diagnostics.line(
      "listtape: upgraded \(path) into \(output.name): \(Render.plural(report.events, "event")), "
        + "format \(report.fromFormat).x → \(report.toFormat).0, "
        + "\(Render.count(report.bytesBefore)) → \(Render.count(report.bytesAfter)) bytes")
    return ExitCode.success
  }
}
