import Foundation
import ListTapeInvestigate
import ListTapeJSON
import ListTapeModel
import ListTapeStore

/// `listtape shrink LOG (--where EXPR | --run CMD) -o OUT`: the fewest events that still
/// end in a state with the bug.
enum ShrinkCommand: Command {
  static let spec = CommandSpec(
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

      Exit status: 0 written; 1 LOG's own final state does not satisfy the predicate; 73 OUT \
      already exists; 64 a malformed expression; 74 the check aborted; 2 damaged log.
      """,
    arguments: [logArgument],
    options: [
      whereOption,
      OptionSpec(
        name: "run", value: "cmd",
        help: "A shell command that judges the state JSON on its standard input (exit 1...127 "
          + "but 125: the predicate holds)."),
      OptionSpec(
        name: "output", short: "o", value: "out", help: "The new log to write.", isFile: true),
      OptionSpec(name: "json", help: "Print a summary as one JSON object."),
    ])

  static func run(_ invocation: Invocation) throws(CLIError) -> Int32 {
    let whereText = invocation.value("where")
    let command = invocation.value("run")
    var query: Query?
    switch (whereText, command) {
    case (nil, nil): throw invocation.usageError("Give one of '--where <expr>' or '--run <cmd>'")
    case (.some, .some):
      throw invocation.usageError("'--where <expr>' and '--run <cmd>' cannot be used together")
    case (let text?, nil):
      query = try parseQuery(text, invocation: invocation)
      guard query?.isBoolean == true else {
        throw invocation.usageError(
          "The expression for '--where <expr>' is not a predicate: compare the value with "
            + "== != < <= > >=")
      }
    case (nil, _?): break
    }
    guard let output = invocation.value("output") else {
      throw invocation.usageError("Missing '-o, --output <out>': the new log to write")
    }
    let path = invocation.required("log")
    let timeline = try openTimeline(path)
    warnIfDamaged(timeline)
    if FileManager.default.fileExists(atPath: output) {
      throw .failure(
        "\(output) already exists; shrink writes a new log (remove it or choose another name)",
        code: ExitCode.cannotCreate)
    }
    let external = command.map { ExternalCheck(command: $0, logPath: path) }
    // A candidate is not a point of LOG: the check sees its number of events as the event.
    let predicate = { (state: ListState, events: Int) throws(ReplayError) -> Bool in
      if let query { return query.holds(in: state) }
      do throws(ReplayError) {
        return try external?.verdict(event: events, state: state) == .bad
      } catch {
        throw ReplayError(
          .io, error.description.replacingOccurrences(of: "bisect aborted", with: "shrink aborted"))
      }
    }
    let progress = ShrinkProgressLine()
    let start = DispatchTime.now().uptimeNanoseconds
    let result: ShrinkResult
    do throws(ReplayError) {
      result = try Shrink.run(
        timeline, relevance: query?.relevance, predicate: predicate, progress: progress.update)
      try Shrink.write(result, to: output)
    } catch {
      progress.finish()
      throw CLIError(error)
    }
    progress.finish()
    let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    let out = invocation.out
    if invocation.flag("json") {
      var w = JSONWriter()
      w.beginObject()
      w.key("log")
      w.string(path)
      w.key("output")
      w.string(output)
      w.key("original")
      w.int(result.original)
      w.key("kept")
      w.int(result.kept.count)
      w.key("events")
      w.beginArray()
      for n in result.kept { w.int(n) }
      w.endArray()
      w.key("tests")
      w.int(result.tests)
      w.key("folded")
      w.int(result.folded)
      w.key("seconds")
      w.double((seconds * 1000).rounded() / 1000)
      w.endObject()
      w.endLine()
      out.bytes(w.bytes)
    } else {
      let style = invocation.style
      out.line(
        style.bold(
          "kept \(Render.count(result.kept.count)) of \(Render.plural(result.original, "event"))")
          + " → \(output)")
      for (n, event) in zip(result.kept, result.events) {
        out.line("  " + Render.event(event, number: n, style: style))
      }
      out.line(
        style.dim(
          "\(Render.plural(result.tests, "test")), \(Render.plural(result.folded, "event")) "
            + "folded, \(Render.decimal(seconds, 1)) s"))
    }
    return timeline.readStoppedShort ? ExitCode.damaged : ExitCode.success
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
