import Foundation
import ListTapeInvestigate
import ListTapeStore

/// `listtape salvage LOG -o OUT`: a new log keeping every readable frame of a damaged one.
enum SalvageCommand: Command {
  struct Arguments: ParsableArguments {
    var log = ""
    var output = ""
    var force = false
  }

  static let spec = CommandSpec<Arguments>(
    name: "salvage",
    abstract: "Write a new log keeping every readable part of a damaged one.",
    discussion: """
      Copies every frame of LOG that still verifies, past damaged regions, into a new log, \
      and records each lost range of events in it; event numbers stay the same, so event N \
      is the same event in both. Readers of the new log skip the few events after a gap that \
      cannot be decoded without the lost ones, and warn. LOG itself is never changed; a \
      torn tail alone needs no salvage (`listtape record` cuts it when it appends).

      OUT may be '-' (standard output); an existing OUT is refused unless --force.

      Exit status: 0 written, 73 the output already exists, 2 LOG is not a readable log.
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
    _ = try openTimeline(path)
    let summary = try output.writeFile { (file) throws(CLIError) in
      try replaying { () throws(StoreError) in try Timeline.salvage(path, to: file) }
    }
    try output.commit()
    Diagnostics.line("listtape: salvaged \(path) into \(output.name): \(summary)")
    return ExitCode.success
  }
}
