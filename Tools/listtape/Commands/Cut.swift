import Foundation
import ListTapeInvestigate
import ListTapeStore

/// `listtape cut LOG --to N -o OUT`: a new log holding events 1...N.
enum CutCommand: Command {
  struct Arguments: ParsableArguments {
    var log = ""
    var to: Point?
    var output: String?
  }

  static let spec = CommandSpec<Arguments>(
    name: "cut",
    abstract: "Write a new log holding the events up to a point.",
    discussion: """
      Copies events 1...N, times included, into a new log, so a session can be branched from \
      a past state and recorded onward with `listtape record OUT`. The output must not \
      exist. A damaged log can be cut up to its last readable event, which salvages it.

      Exit status: 0 written, 73 the output already exists, 2 damaged log.
      """,
    arguments: [.log(\.log)],
    options: [
      .option(
        \.to, "to", value: "point",
        help: "The last event to keep: N, mark:LABEL or time:ISO8601 (0 gives an empty log)."),
      .output(\.output, value: "out", help: "The new log to write."),
    ])

  static func run(_ arguments: Arguments, _ io: IO) throws(CLIError) -> Int32 {
    guard let point = arguments.to else {
      throw usageError("Missing '--to <point>': the last event to keep")
    }
    guard let output = arguments.output else {
      throw usageError("Missing '-o, --output <out>': the new log to write")
    }
    let path = arguments.log
    let timeline = try openTimeline(path)
    warnIfDamaged(timeline)
    let n = try resolve(point, in: timeline, for: self, option: "--to")
    if FileManager.default.fileExists(atPath: output) {
      throw .failure(
        "\(output) already exists; cut writes a new log (remove it or choose another name)",
        code: ExitCode.cannotCreate)
    }
    let written = try replaying { () throws(StoreError) in
      try timeline.cut(through: n, to: output)
    }
    Diagnostics.line(
      "listtape: wrote \(Render.plural(written, "event")) (1...\(n) of "
        + "\(Render.count(timeline.eventCount))) from \(path) to \(output)")
    return ExitCode.success
  }
}
