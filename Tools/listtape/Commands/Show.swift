import ListTapeJSON
import ListTapeModel
import ListTapeStore

/// `listtape show LOG [--at POINT]`: the list as it was at an event.
enum ShowCommand: Command {
  struct Arguments: ParsableArguments {
    var log = ""
    var at: Point?
    var json = false
    var pretty = false
    var all = false
  }

  static let spec = CommandSpec<Arguments>(
    name: "show",
    abstract: "Show the list as it was at an event.",
    discussion: """
      By default prints the list for a person: a header with the event number, its op and \
      time; then each section with its rows indented by level, ▸ on collapsed and ▾ on \
      expanded items that have children, ✓ on selected rows and titles in quotes. Hidden \
      rows (under a collapsed ancestor) are left out unless --all is given. With --json, \
      prints the state JSON of the protocol (section 3) on one line; add --pretty to indent it.
      """,
    arguments: [.log(\.log)],
    options: [
      .at(\.at),
      .flag(\.json, "json", help: "Print the state as JSON (protocol section 3)."),
      .flag(\.pretty, "pretty", help: "Indent the JSON by two spaces (with --json)."),
      .flag(\.all, "all", help: "Also show hidden rows, dimmed."),
    ])

  static func run(_ arguments: Arguments, _ io: IO) throws(CLIError) -> Int32 {
    let timeline = try openTimeline(arguments.log)
    warnIfDamaged(timeline)
    let n = try resolve(arguments.at, in: timeline, for: self)
    let state = try replaying { () throws(StoreError) in try timeline.state(at: n) }
    if arguments.json {
      var w = JSONWriter(pretty: arguments.pretty)
      state.writeJSON(event: n, to: &w)
      w.endLine()
      io.out.bytes(w.bytes)
    } else {
      let event = n > 0 ? try replaying { () throws(StoreError) in try timeline.event(n) } : nil
      io.out.line(Render.header(event: n, of: timeline.eventCount, event: event, style: io.style))
      Render.state(state, all: arguments.all, style: io.style, into: io.out)
    }
    return timeline.readStoppedShort ? ExitCode.damaged : ExitCode.success
  }
}

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

/// The event number `point` names in `timeline`; the last event when nil. A point outside
/// the log, or a mark it lacks, is a usage error of `command`'s `option`.
func resolve<C: Command>(
  _ point: Point?, in timeline: Timeline, for command: C.Type, option: String = "--at"
) throws(CLIError) -> Int {
  let count = timeline.eventCount
  guard let point else { return count }
  if let n = Int(point.text) {
    guard n >= 0 && n <= count else {
      throw command.usageError(
        "\(option) \(point.text) is out of range: the log has \(Render.plural(count, "event")) "
          + "(0...\(count))")
    }
    return n
  }
  do {
    return try timeline.resolve(point.text)
  } catch {
    switch error {
    // An unknown mark is a bad value for the option, like a number past the end: protocol
    // section 4 keeps exit 1 (not found) for bisect and find.
    case .noSuchMark, .notATime, .notAPoint, .eventOutOfRange:
      throw command.usageError(Failures.message(error))
    default: throw CLIError(error)
    }
  }
}
