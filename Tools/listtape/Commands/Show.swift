import ListTapeJSON
import ListTapeLog
import ListTapeModel
import ListTapeRead
import ListTapeStore

/// `listtape show LOG [--at POINT]`: the list as it was at an event.
enum ShowCommand: Command {
  static var loadsOneLargeState: Bool { true }

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
      rows (under a collapsed ancestor) are left out unless --all is given. When event N \
      faulted, the header says why. With --json, prints the state JSON of the protocol \
      (section 3) on one line; add --pretty to indent it.

      Exit status: 0; 2 damaged log, or a state that is not the recorded one (after events \
      lost in a salvage, docs/cli.md).
      """,
    arguments: [.log(\.log)],
    options: [
      .at(\.at),
      .flag(\.json, "json", help: "Print the state as JSON (protocol section 3)."),
      .flag(\.pretty, "pretty", help: "Indent the JSON by two spaces (with --json)."),
      .flag(\.all, "all", help: "Also show hidden rows, dimmed."),
    ])

  static func run(_ arguments: Arguments, _ io: IO) throws(CLIError) -> Int32 {
    if arguments.pretty && !arguments.json {
      throw usageError("'--pretty' indents the JSON: use it with '--json'")
    }
    let timeline = try openTimeline(arguments.log)
    // The JSON is the state alone: no event's site is printed, so none is read.
    timeline.readsSites = !arguments.json
    warnIfDamaged(timeline)
    let n = try resolve(arguments.at, in: timeline, for: self)
    let shown = try replaying { () throws(StoreError) in try timeline.stateAndFault(at: n) }
    let inexact = Failures.inexactState(shown.exactness, event: n, timeline)
    if let inexact { Diagnostics.line("listtape: warning: \(inexact)") }
    if arguments.json {
      var w = JSONWriter(pretty: arguments.pretty)
      // One key after the protocol's, so scripts can tell a state that is not the recorded
      // one (docs/json.md).
      shown.state.writeJSON(event: n, to: &w, drain: io.out.bytes) { w in
        if inexact != nil {
          w.key("exact")
          w.bool(false)
        }
      }
      w.endLine()
      io.out.bytes(w.bytes)
    } else {
      io.out.line(
        Render.header(
          event: n, of: timeline.eventCount, event: shown.event, style: io.style,
          fault: shown.fault, exact: inexact == nil))
      Render.state(shown.state, all: arguments.all, style: io.style, into: io.out)
    }
    return timeline.readStoppedShort || inexact != nil ? ExitCode.damaged : ExitCode.success
  }

}

extension Timeline {
  /// The state at `n`, event `n` (nil at 0, or when it was lost) and its fault, and
  /// whether the state is the recorded one: what `show` and `scrub` display.
  func stateAndFault(at n: Int) throws(StoreError) -> (
    state: ListState, event: Event?, fault: ListFault?, exactness: StateExactness
  ) {
    guard n > 0 else { return (ListState(), nil, nil, .exact(restoredFrom: nil)) }
    let exactness = exactness(at: n)
    if gaps.isEmpty {
      // One pass: a seek to n - 1, then event n folded on, read as it is folded.
      var (state, decoder) = try seek(to: n - 1)
      var event: Event?
      var fault: ListFault?
      try fold(&state, &decoder, from: n, through: n) { ops, i, f, s in
        event = ops.event(i, s.ids)
        fault = f
        return true
      }
      guard let event else {
        throw .log(LogError(.damaged, path: path, message: "event \(n) could not be read"))
      }
      return (state, event, fault, exactness)
    }
    let event: Event?
    do throws(StoreError) {
      event = try self.event(n)
    } catch {
      // Lost, or undecodable after lost events: the warning says so, or the state is
      // restored at `n` itself (a recovery point whose own event the gap left unreadable).
      switch exactness {
      case .inexact: break
      case .exact(let point?) where point == n: break
      case .exact: throw error
      }
      event = nil
    }
    var (state, _) = try exactState(at: n - 1)
    var fault: ListFault?
    if let event {
      do throws(ListFault) {
        try state.apply(event)
      } catch {
        fault = error
      }
    }
    if case .exact(let point?) = exactness, point == n {
      state = try restoredState(from: n, through: n)
    } else if event == nil {
      state = try exactState(at: n).state
    }
    return (state, event, fault, exactness)
  }
}

extension Timeline {
  /// Whether reading stops before the end of the file: damage in the middle, or a torn or
  /// corrupt tail. Every command that reads such a log does what it can with the readable
  /// part, warns, and exits 2 (protocol section 4: 2 damaged log), as `verify` reports it.
  var readStoppedShort: Bool { damage != nil }

  /// Whether a scan of this log misses events: it stops short, or events were lost in a
  /// salvage. Commands that scan (events, stats, find, bisect, history, html, …) warn and
  /// exit 2 then; commands that show one state exit 2 only when it is not the recorded one
  /// (docs/cli.md, "Damaged logs").
  var readIncompletely: Bool { damage != nil || !gaps.isEmpty }
}

/// Reports reading that stopped early (a torn tail or damage), and lost events, on
/// standard error.
func warnIfDamaged(_ timeline: Timeline) {
  for note in Failures.warnings(timeline) { Diagnostics.line("listtape: warning: \(note)") }
}
