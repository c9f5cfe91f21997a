import Foundation
import ListTapeInvestigate
import ListTapeStore

/// `listtape salvage LOG -o OUT`: a new log keeping every readable frame of a damaged one.
enum SalvageCommand: Command {
  struct Arguments: ParsableArguments {
    var log = ""
    var output: String?
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

      Exit status: 0 written, 73 the output already exists, 2 LOG is not a readable log.
      """,
    arguments: [.log(\.log)],
    options: [.output(\.output, value: "out", help: "The new log to write.")])

  static func run(_ arguments: Arguments, _ io: IO) throws(CLIError) -> Int32 {
    guard let output = arguments.output else {
      throw usageError("Missing '-o, --output <out>': the new log to write")
    }
    let path = arguments.log
    _ = try openTimeline(path)
    if FileManager.default.fileExists(atPath: output) {
      throw .failure(
        "\(output) already exists; salvage writes a new log (remove it or choose another name)",
        code: ExitCode.cannotCreate)
    }
    let summary = try replaying { () throws(StoreError) in
      try Timeline.salvage(path, to: output)
    }
    Diagnostics.line("listtape: salvaged \(path) into \(output): \(summary)")
    return ExitCode.success
  }
}
