import ListTapeInvestigate
import ListTapeStore

/// `listtape scrub LOG [--at POINT]`: a full-screen time-travel viewer in the terminal.
enum ScrubCommand: Command {
  static let spec = CommandSpec(
    name: "scrub",
    abstract: "Move through a log in a full-screen terminal viewer.",
    discussion: """
      Shows the list at event N as show does, the event and its fault (if it faulted), and \
      a timeline bar with marks (◆) and faults (✗). Keys: ←/→ one event, PgUp/PgDn 100, \
      Home/End, g jump (N, mark:LABEL, time:ISO8601), m/M next/previous mark, f/F \
      next/previous fault, / the next event touching an item id (n repeats), d the diff \
      from the previous event, ? help, q quit. Needs a terminal on standard input and \
      output; use show for text.
      """,
    arguments: [logArgument],
    options: [atOption])

  static func run(_ invocation: Invocation) throws(CLIError) -> Int32 {
    let path = invocation.required("log")
    guard Terminal.isTTY(1), Terminal.isTTY(0) else {
      throw invocation.usageError(
        "scrub needs a terminal on standard input and output; "
          + "use 'listtape show \(path) --at N' for text")
    }
    let timeline = try openTimeline(path)
    let n = try resolvePoint(invocation.value("at"), in: timeline, invocation: invocation)
    guard let terminal = RawTerminal() else {
      throw .failure("cannot put the terminal in raw mode", code: ExitCode.io)
    }
    defer { terminal.close() }
    do {
      let viewer = try ScrubViewer(
        timeline: timeline, terminal: terminal, style: invocation.style, at: n)
      viewer.run()
    } catch {
      terminal.close()
      throw CLIError(error)
    }
    terminal.close()
    warnIfDamaged(timeline)
    return ExitCode.success
  }
}
