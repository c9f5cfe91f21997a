import Foundation
import ListTapeInvestigate
import ListTapeRead
import ListTapeStore

/// `listtape cut LOG --to N -o OUT`: a new log holding events 1...N.
enum CutCommand: Command {
  struct Arguments: ParsableArguments {
    var log = ""
    var to = Point.event(0)
    var output = ""
    var force = false
  }

  static let spec = CommandSpec<Arguments>(
    name: "cut",
    abstract: "Write a new log holding the events up to a point.",
    discussion: """
      Copies events 1...N, times included, into a new log, so a session can be branched from \
      a past state and recorded onward with `listtape record OUT`. The output must not \
      exist (unless --force); '-' writes the log to standard output. A damaged log can be cut \
      up to its last readable event.

      Exit status: 0 written, 73 the output already exists, 2 damaged log.
      """,
    arguments: [.log(\.log)],
    options: [
      .required(
        \.to, "to", value: "point",
        help: "The last event to keep: N, mark:LABEL or time:ISO8601 (0 gives an empty log)."),
      .output(\.output, value: "out", help: "The new log to write ('-': standard output)."),
      .force(\.force),
    ])

  static func run(_ arguments: Arguments, _ io: IO) throws(CLIError) -> Int32 {
    let output = try OutputFile.open(
      arguments.output, force: arguments.force, content: .log, for: self)
    let path = arguments.log
    let timeline = try openTimeline(path)
    warnIfDamaged(timeline)
    let n = try resolve(arguments.to, in: timeline, for: self, option: "--to")
    let written = try output.writeFile { (file) throws(CLIError) in
      try replaying { () throws(StoreError) in try timeline.cut(through: n, to: file) }
    }
    try output.commit()
    let which = n == 0 ? "none" : "1...\(n)"
    Diagnostics.line(
      "listtape: wrote \(Render.plural(written, "event")) (\(which) of "
        + "\(Render.count(timeline.eventCount))) from \(path) to \(output.name)")
    return ExitCode.success
  }
}
