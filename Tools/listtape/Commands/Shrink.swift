import Foundation
import ListTapeInvestigate
import ListTapeJSON
import ListTapeModel
import ListTapeRead
import ListTapeStore

/// `listtape shrink LOG (--where EXPR | --run CMD) -o OUT`: the fewest events that still
/// end in a state with the bug.
enum ShrinkCommand: Command {
  struct Arguments: ParsableArguments {
    var log = ""
    var query: Query?
    var command: String?
    var output = ""
    var force = false
    var json = false
  }

  static let spec = CommandSpec<Arguments>(
    name: "shrink",
    abstract: "Write the smallest log whose final state still satisfies a predicate.",
    discussion: """
      Delta debugging over LOG's events: writes to OUT some of them, in their order, with \
      their content and times (a batch stays whole; marks go unless needed), whose final \
      state satisfies the predicate, and from which no single event can be removed without \
      losing it. --where EXPR holds, or --run CMD judges the state JSON on its standard \
      input with git bisect's exit codes: 1...127 except 125 means the predicate holds (bad), \
      0 and 125 that it does not; 128 or more, or a signal, aborts (exit 74). Prints how many \
      events were kept and which; progress goes to standard error on a terminal.

      OUT may be a file, a pipe or a device but not '-' (standard output carries the report); \
      an existing OUT is refused unless --force.

      Exit status: 0 written; 1 LOG's own final state does not satisfy the predicate; 73 OUT \
      already exists; 64 a malformed expression; 74 the check aborted; 2 damaged log.
      """,
    arguments: [.log(\.log)],
    options: [
      .where(\.query),
      .option(
        \.command, "run", value: "cmd",
        help: "A shell command that judges the state JSON on its standard input (exit 1...127 "
          + "but 125: the predicate holds)."),
      .output(\.output, value: "out", help: "The new log to write."),
      .force(\.force),
      .flag(\.json, "json", help: "Print a summary as one JSON object."),
    ])

  static func run(_ arguments: Arguments, _ io: IO) throws(CLIError) -> Int32 {
    try requirePredicate(arguments.query, arguments.command)
    let outputFile = try OutputFile.open(
      arguments.output, force: arguments.force, content: .logBesideReport, for: self)
    let output = arguments.output
    let path = arguments.log
    let timeline = try openTimeline(path)
    warnIfDamaged(timeline)
    let progress = ShrinkProgressLine()
    let start = DispatchTime.now().uptimeNanoseconds
    let found: ShrinkResult?
    defer { progress.finish() }
    if let query = arguments.query {
      found = try replaying { () throws(StoreError) in
        try Shrink.run(timeline, where: query, progress: progress.update)
      }
    } else {
      let check = ExternalCheck(command: arguments.command ?? "", logPath: path, purpose: "shrink")
      do {
        // A candidate is not a point of LOG: the check sees its number of events as the event.
        found = try Shrink.run(
          timeline,
          predicate: { state, events throws(ExternalCheck.Aborted) in
            try check.verdict(event: events, state: state) == .bad
          }, progress: progress.update)
      } catch {
        switch error {
        case .timeline(let e): throw CLIError(e)
        case .check(let e): throw .failure(e.message, code: ExitCode.io)
        }
      }
    }
    guard let result = found else {
      let which =
        timeline.gaps.isEmpty
        ? "the state after the last event \(timeline.eventCount)"
        : "the fold of the events that remain after those lost in a salvage"
      let verdict =
        arguments.query == nil
        ? "is not bad for the command (it exits 0, good, or 125, skip, there)"
        : "does not satisfy the predicate"
      throw .failure("\(which) \(verdict) (\(path))", code: ExitCode.notFound)
    }
    try outputFile.writeFile { (file) throws(CLIError) in
      try replaying { () throws(StoreError) in try Shrink.write(result, to: file) }
    }
    try outputFile.commit()
    progress.finish()
    let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    let out = io.out
    if arguments.json {
      out.bytes(
        JSONWriter.line { w in
          w.field("log", path)
          w.field("output", output)
          w.field("original", result.original)
          w.field("kept", result.kept.count)
          w.key("keptEvents")
          w.beginArray()
          for n in result.kept { w.int(n) }
          w.endArray()
          w.field("exact", result.exact)
          w.field("tests", result.tests)
          w.field("folded", result.folded)
          w.field("seconds", (seconds * 1000).rounded() / 1000)
        })
    } else {
      let style = io.style
      out.line(
        style.bold(
          "kept \(Render.count(result.kept.count)) of \(Render.plural(result.original, "event"))")
          + " → \(output)")
      for (n, event) in zip(result.kept, result.events) {
        out.line("  " + Render.event(event, number: n, style: style))
      }
      if !result.exact {
        out.line(
          style.bold("not exact:") + " \(path) lost events in a salvage; these are events that "
            + "remain (numbered as in it), shrunk from their fold without the lost ones, which is "
            + "not the recorded history")
      }
      out.line(
        style.dim(
          "\(Render.plural(result.tests, "test")), \(Render.plural(result.folded, "event")) "
            + "folded, \(Render.decimal(seconds, 1)) s"))
    }
    return timeline.readIncompletely ? ExitCode.damaged : ExitCode.success
  }
}

/// `shrinking: 123 tests, 4 kept, 5,678 to try (pass 1)` on standard error on a terminal.
final class ShrinkProgressLine {
  private let enabled: Bool
  private var lastDraw: UInt64 = 0
  private var drawn = false

  init() { enabled = Terminal.isTTY(2) }

  func update(_ p: ShrinkProgress) {
    guard enabled else { return }
    let now = DispatchTime.now().uptimeNanoseconds
    guard now - lastDraw > 100_000_000 else { return }
    lastDraw = now
    drawn = true
    Diagnostics.write(
      "\r\u{1B}[Kshrinking: \(Render.plural(p.tests, "test")), \(Render.count(p.kept)) kept, "
        + "\(Render.count(p.remaining)) to try (pass \(p.pass))")
  }

  func finish() {
    guard drawn else { return }
    Diagnostics.write("\r\u{1B}[K")
    drawn = false
  }
}
