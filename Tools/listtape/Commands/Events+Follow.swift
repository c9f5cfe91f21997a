import ListTapeRead
import ListTapeStore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `listtape events LOG --follow`: the recorded events, then each one another process
/// appends, until SIGINT or SIGTERM (docs/cli.md, "Following a log").
extension EventsCommand {
  static func follow(_ arguments: Arguments, _ io: IO) throws(CLIError) -> Int32 {
    let path = arguments.log
    if arguments.to != nil {
      throw usageError("'--follow' prints events until interrupted; it takes no '--to'")
    }
    try Following.check(path, for: self)
    let timeline = try openTimeline(path)
    // A follower reads and never writes: no index file appears beside a log being recorded.
    timeline.buildsIndex = false
    let from =
      arguments.from == nil
      ? 1 : max(try resolve(arguments.from, in: timeline, for: self, option: "--from"), 1)
    for note in Failures.gapWarnings(timeline) { Diagnostics.line("listtape: warning: \(note)") }
    let follower = LogFollower(timeline, from: from)
    var lines = EventLines(arguments, io, next: from)
    let signals = [SIGINT, SIGTERM]
    SignalPipe.install(signals, resetAfterFirst: signals)
    defer { SignalPipe.uninstall(signals) }
    while true {
      // Exactness changes only in a salvaged log, once a recovery point arrives.
      let steps = timeline.exactSteps
      try replaying { () throws(StoreError) in
        try follower.forEachNewEvent { n, event in
          lines.print(n, event, exact: steps.stateIsExact(at: n))
        }
      }
      lines.flush()
      if io.out.failed {
        // Only when SIGPIPE is ignored: otherwise a reader that went away ends the process.
        throw .failure(
          "cannot write to standard output; stopped after event \(follower.next - 1) "
            + "(\(timeline.path))",
          code: ExitCode.io)
      }
      if case .ended(let end) = follower.state { return try stop(end, timeline) }
      if interrupted(within: Following.interval) { return ExitCode.success }
      _ = try replaying { () throws(StoreError) in try follower.poll() }
    }
  }

  /// Whether SIGINT or SIGTERM arrived within `milliseconds`.
  private static func interrupted(within milliseconds: Int32) -> Bool {
    var fds = [pollfd(fd: SignalPipe.descriptor, events: Int16(POLLIN), revents: 0)]
    guard poll(&fds, 1, milliseconds) > 0 else { return false }
    return !SignalPipe.take().isEmpty
  }

  /// The end of a follow that did not end by a signal: its message and exit code.
  private static func stop(_ end: LogFollower.End, _ timeline: Timeline) throws(CLIError)
    -> Int32
  {
    if let failure = Following.failure(end, timeline) { throw failure }
    if case .damaged(let damage) = end {
      Diagnostics.line("listtape: warning: \(Failures.warning(damage, in: timeline))")
    }
    return ExitCode.damaged
  }
}
