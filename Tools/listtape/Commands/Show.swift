import ListTapeInvestigate
import ListTapeJSON
import ListTapeModel
import ListTapeStore

/// `listtape show LOG [--at POINT]`: the list as it was at an event.
enum ShowCommand: Command {
  static let spec = CommandSpec(
    name: "show",
    abstract: "Show the list as it was at an event.",
    discussion: """
      By default prints the list for a person: a header with the event number, its op and \
      time; then each section with its rows indented by level, ▸ on collapsed and ▾ on \
      expanded items that have children, ✓ on selected rows and titles in quotes. Hidden \
      rows (under a collapsed ancestor) are left out unless --all is given. With --json, \
      prints the state JSON of the protocol (section 3) on one line; add --pretty to indent it.
      """,
    arguments: [logArgument],
    options: [
      atOption,
      OptionSpec(name: "json", help: "Print the state as JSON (protocol section 3)."),
      OptionSpec(name: "pretty", help: "Indent the JSON by two spaces (with --json)."),
      OptionSpec(name: "all", help: "Also show hidden rows, dimmed."),
    ])

  static func run(_ invocation: Invocation) throws(CLIError) -> Int32 {
    let path = invocation.required("log")
    let timeline = try openTimeline(path)
    warnIfDamaged(timeline)
    let n = try resolvePoint(invocation.value("at"), in: timeline, invocation: invocation)
    let state = try replaying { () throws(StoreError) in try timeline.state(at: n) }
    if invocation.flag("json") {
      var w = JSONWriter(pretty: invocation.flag("pretty"))
      state.writeJSON(event: n, to: &w)
      w.endLine()
      invocation.out.bytes(w.bytes)
      return timeline.readStoppedShort ? ExitCode.damaged : ExitCode.success
    }
    let event = n > 0 ? try replaying { () throws(StoreError) in try timeline.event(n) } : nil
    let style = invocation.style
    invocation.out.line(
      Render.header(event: n, of: timeline.eventCount, event: event, style: style))
    Render.state(state, all: invocation.flag("all"), style: style, into: invocation.out)
    return timeline.readStoppedShort ? ExitCode.damaged : ExitCode.success
  }
}

/// The `<log>` argument every log command takes.
let logArgument = ArgumentSpec(name: "log", help: "The log file.")

let atOption = OptionSpec(
  name: "at", value: "point",
  help: "An event number N (0 is the empty list), mark:LABEL (the first mark with that "
    + "label) or time:ISO8601 (the last event at or before that time).",
  defaultText: "the last event")

extension Timeline {
  /// Whether reading stops before the end of the file: damage in the middle, or a torn or
  /// corrupt tail. Every command that reads such a log does what it can with the readable
  /// part, warns, and exits 2 (protocol section 4: 2 damaged log), as `verify` reports it.
  var readStoppedShort: Bool { damage != nil }
}

/// Reports reading that stopped early (a torn tail or damage), and lost events, on
/// standard error.
func warnIfDamaged(_ timeline: Timeline) {
  for note in Failures.warnings(timeline) { Diagnostics.line("listtape: warning: \(note)") }
}

/// The event number `point` names: `N`, `mark:LABEL` or `time:ISO8601`; the last event when nil.
func resolvePoint(
  _ point: String?, in timeline: Timeline, invocation: Invocation, option: String = "--at"
) throws(CLIError) -> Int {
  let count = timeline.eventCount
  guard let point else { return count }
  if let n = Int(point) {
    guard n >= 0 && n <= count else {
      throw invocation.usageError(
        "\(option) \(point) is out of range: the log has \(Render.plural(count, "event")) "
          + "(0...\(count))")
    }
    return n
  }
  guard point.hasPrefix("mark:") || point.hasPrefix("time:") else {
    throw invocation.usageError(
      "The value '\(point)' is invalid for '\(option) <point>'; expected N, mark:LABEL "
        + "or time:ISO8601")
  }
  do {
    return try timeline.resolve(point)
  } catch {
    switch error {
    // An unknown mark is a bad value for the option, like a number past the end: protocol
    // section 4 keeps exit 1 (not found) for bisect and find.
    case .noSuchMark, .notATime, .notAPoint, .eventOutOfRange:
      throw invocation.usageError(Failures.message(error))
    default: throw CLIError(error)
    }
  }
}
