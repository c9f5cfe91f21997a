import ListTapeInvestigate
import ListTapeRead
import ListTapeStore

/// `listtape scrub LOG [--at POINT]`: a full-screen time-travel viewer in the terminal.
enum ScrubCommand: Command {
  struct Arguments: ParsableArguments {
    var log = ""
    var at: Point?
    var follow = false
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

      With --follow, the timeline grows as another process records: while the newest \
      event is shown, each new one is shown as it arrives; after moving back, the viewer \
      stays there and the bar ends in » while newer events are there (End goes to them). \
      Following stops, leaving the viewer with an error, when the log is removed or \
      replaced (exit 66); damage stops following and is reported on the way out.
      """,
    arguments: [.log(\.log)],
    options: [
      .at(\.at),
      .flag(
        \.follow, "follow", short: "f",
        help: "Keep showing events as another process appends them."),
    ])

  static func run(_ arguments: Arguments, _ io: IO) throws(CLIError) -> Int32 {
    let path = arguments.log
    if arguments.follow { try Following.check(path, for: self) }
    guard Terminal.isTTY(1), Terminal.isTTY(0) else {
      throw usageError(
        "scrub needs a terminal on standard input and output; "
          + "use 'listtape show \(path) --at N' for text")
    }
    let timeline = try openTimeline(path)
    // A follower never writes beside the log it reads.
    if arguments.follow { timeline.buildsIndex = false }
    let n = try resolve(arguments.at, in: timeline, for: self)
    guard let terminal = RawTerminal() else {
      throw .failure("cannot put the terminal in raw mode", code: ExitCode.io)
    }
    defer { terminal.close() }
    var followEnd: LogFollower.End?
    do {
      let viewer = try ScrubViewer(
        timeline: timeline, terminal: terminal, style: io.style, at: n, follow: arguments.follow)
      viewer.run()
      followEnd = viewer.followEnd
    } catch {
      terminal.close()
      throw CLIError(error)
    }
    terminal.close()
    if let followEnd, let failure = Following.failure(followEnd, timeline) { throw failure }
    warnIfDamaged(timeline)
    return ExitCode.success
  }
}
