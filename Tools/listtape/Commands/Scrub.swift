import ListTapeInvestigate
import ListTapeRead
import ListTapeStore

/// `listtape scrub LOG [--at POINT]`: a full-screen time-travel viewer in the terminal.
enum ScrubCommand: Command {
  struct Arguments: ParsableArguments {
    var log = ""
    var at: Point?
  }

  static let spec = CommandSpec<Arguments>(
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
    arguments: [.log(\.log)],
    options: [.at(\.at)])

  static func run(_ arguments: Arguments, _ io: IO) throws(CLIError) -> Int32 {
    let path = arguments.log
    guard Terminal.isTTY(1), Terminal.isTTY(0) else {
      throw usageError(
        "scrub needs a terminal on standard input and output; "
          + "use 'listtape show \(path) --at N' for text")
    }
    let timeline = try openTimeline(path)
    let n = try resolve(arguments.at, in: timeline, for: self)
    guard let terminal = RawTerminal() else {
      throw .failure("cannot put the terminal in raw mode", code: ExitCode.io)
    }
    defer { terminal.close() }
    do {
      let viewer = try ScrubViewer(
        timeline: timeline, terminal: terminal, style: io.style, at: n)
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
