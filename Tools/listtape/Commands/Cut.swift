import Foundation
import ListTapeInvestigate
import ListTapeStore

/// `listtape cut LOG --to N -o OUT`: a new log holding events 1...N.
enum CutCommand: Command {
  static let spec = CommandSpec(
    name: "cut",
    abstract: "Write a new log holding the events up to a point.",
    discussion: """
      Copies events 1...N, times included, into a new log, so a session can be branched from \
      a past state and recorded onward with `listtape record OUT`. The output must not \
      exist. A damaged log can be cut up to its last readable event, which salvages it.

      Exit status: 0 written, 73 the output already exists, 2 damaged log.
      """,
    arguments: [logArgument],
    options: [
      OptionSpec(
        name: "to", value: "point",
        help: "The last event to keep: N, mark:LABEL or time:ISO8601 (0 gives an empty log)."),
      OptionSpec(
        name: "output", short: "o", value: "out", help: "The new log to write.", isFile: true),
    ])

  static func run(_ invocation: Invocation) throws(CLIError) -> Int32 {
    guard let point = invocation.value("to") else {
      throw invocation.usageError("Missing '--to <point>': the last event to keep")
    }
    guard let output = invocation.value("output") else {
      throw invocation.usageError("Missing '-o, --output <out>': the new log to write")
    }
    let path = invocation.required("log")
    let timeline = try openTimeline(path)
    warnIfDamaged(timeline)
    let n = try resolvePoint(point, in: timeline, invocation: invocation, option: "--to")
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

extension ExitCode {
  /// The output file exists, or cannot be created (sysexits' EX_CANTCREAT).
  static let cannotCreate: Int32 = 73
}
