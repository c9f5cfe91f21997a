import Foundation
import ListTapeInvestigate
import ListTapeLog
import ListTapeRead
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
    Diagnostics.line("listtape: salvaged \(path) into \(output.name): \(describe(summary))")
    return ExitCode.success
  }

  /// `kept 28,855 events in 32 frames; lost 1,145 events in 1 gap; …`, in the tool's words.
  static func describe(_ r: SalvageReport) -> String {
    let lost = Int(r.gaps.reduce(UInt64(0)) { $0 + $1.count })
    var text =
      "kept \(Render.plural(Int(r.eventsKept), "event")) in \(Render.plural(r.framesKept, "frame")); "
      + "lost \(Render.plural(lost, "event")) in \(Render.plural(r.gaps.count, "gap")); skipped "
      + "\(Render.plural(r.damagedRanges.count, "damaged range")) and "
      + "\(Render.plural(r.framesDropped, "stray frame"))"
    if let at = r.gaveUpAt {
      text +=
        "; gave up at byte \(at): too many frame headers there whose payloads do not check out "
        + "(a crafted file?), the rest is counted as damaged"
    }
    return text
  }
}
