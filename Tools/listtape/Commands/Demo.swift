#if canImport(Glibc)
import Foundation
import Glibc
import ListTapeInvestigate
import ListTapeRead
import ListTapeStore
#endif

/// `listtape demo NAME [--record LOG]`: an interactive terminal front end for a seed app,
/// recording every action through `ListStore`.
enum DemoCommand: Command {
  struct Arguments: ParsableArguments {
    var scenario = Scenario.symbols
    var record: String?
  }

  static let spec = CommandSpec<Arguments>(
    name: "demo",
    abstract: "Try a seed app in the terminal, recording every action to a log.",
    discussion: """
      Recreates one of the four seed apps as a terminal list: symbols (SF Symbols under \
      category headers, expanded), languages (a collapsible "Programming Languages" \
      section), form (Personal, Preferences, Work Experience: picking an option collapses \
      its parent and sets its title) or contacts (favorites and all, multiple selection). \
      Every action goes through the Swift recording store, so LOG replays to what was on \
      screen: `listtape show LOG`.

      Keys: ↑/↓ or j/k move over the visible rows (g/G, Page Up/Down jump); Return or Space \
      expands or collapses a parent, or selects a row (toggles it; in the form, picks the \
      option); ←/→ collapse and expand; d deletes the row (swipe to delete); q or Ctrl-C \
      quits. The terminal is restored on quit, SIGINT, SIGTERM and SIGHUP.

      Without --record the session goes to a new log in the temporary directory, whose \
      path is printed at the end. An existing LOG is continued from the state it ends in \
      (the list is not loaded again).
      """,
    arguments: [.required(\.scenario, "name", help: "The seed app to run.", isFile: false)],
    options: [
      .option(
        \.record, "record", value: "log", help: "The log to record to (created if absent).",
        defaultText: "a new log in the temporary directory", isFile: true)
    ])

  static func run(_ arguments: Arguments, _ io: IO) throws(CLIError) -> Int32 {
    let scenario = arguments.scenario
    #if canImport(Glibc)
    guard Terminal.isTTY(0), Terminal.isTTY(1) else {
      throw .failure(
        "demo needs a terminal on standard input and output (run it in a terminal, or "
          + "drive it through tmux)", code: ExitCode.usage)
    }
    let path =
      arguments.record
      ?? NSTemporaryDirectory() + "/listtape-demo-\(scenario.name)-\(getpid()).ltape"
    var baseEvents = 0
    if FileManager.default.fileExists(atPath: path) {
      baseEvents = try openTimeline(path).eventCount
    }
    let store = try replaying { () throws(StoreError) in try ListStore<String, String>(path: path) }
    if baseEvents == 0 {
      scenario.load(into: store.core)
    } else {
      store.mark("demo \(scenario.name) resumed")
    }
    let signals = [SIGINT, SIGTERM, SIGHUP, SIGWINCH]
    SignalPipe.install(signals, resetAfterFirst: [SIGINT, SIGTERM, SIGHUP])
    defer { SignalPipe.uninstall(signals) }
    guard let terminal = RawTerminal(handlesSignals: false) else {
      try? store.close()
      throw .failure("cannot put the terminal in raw mode", code: ExitCode.io)
    }
    var app = DemoApp(
      scenario: scenario, store: store, logPath: path, style: io.style,
      baseEvents: baseEvents)
    var interrupted = false
    loop(&app, terminal: terminal, interrupted: &interrupted)
    terminal.close()
    var failure: CLIError? = nil
    do {
      try store.close()
    } catch {
      failure = CLIError(error)
    }
    Diagnostics.line(
      "listtape: demo \(scenario.name): \(Render.plural(store.acceptedEvents, "event")) "
        + "recorded to \(path) (\(Render.plural(store.faultCount, "fault")); "
        + "\(Render.plural(app.eventCount, "event")) in the log"
        + (interrupted ? "; interrupted" : "") + "); see it with: listtape show \(path)")
    if let failure { throw failure }
    return ExitCode.success
    #else
    throw .failure("demo needs Linux (a termios terminal through Glibc)", code: ExitCode.io)
    #endif
  }

  #if canImport(Glibc)
  /// Draws, waits for keys or signals, handles them, until quit, a signal or end of input.
  private static func loop(_ app: inout DemoApp, terminal: RawTerminal, interrupted: inout Bool) {
    var decoder = KeyDecoder()
    var size = terminal.size
    terminal.write(app.frame(rows: size.rows, columns: size.columns))
    while true {
      var fds = [
        pollfd(fd: terminal.input, events: Int16(POLLIN), revents: 0),
        pollfd(fd: SignalPipe.descriptor, events: Int16(POLLIN), revents: 0),
      ]
      let ready = poll(&fds, 2, -1)
      if ready < 0 && errno == EINTR { continue }
      if fds[1].revents != 0 {
        let caught = SignalPipe.take()
        if caught.contains(where: { $0 != SIGWINCH }) {
          interrupted = true
          return
        }
        size = terminal.size
        terminal.write("\u{1B}[2J")
      }
      if fds[0].revents != 0 {
        let bytes = terminal.read()
        if bytes.isEmpty { return }
        for key in decoder.feed(bytes) {
          guard app.handle(DemoAction(key), pageSize: size.rows - 4) else { return }
        }
      }
      terminal.write(app.frame(rows: size.rows, columns: size.columns))
    }
  }
  #endif
}
