import ListTapeInvestigate
import ListTapeJSON
import ListTapeModel
import ListTapeRead
import ListTapeStore

/// `listtape diverge A B`: the first event after which two recordings' states differ.
enum DivergeCommand: Command {
  struct Arguments: ParsableArguments {
    var a = ""
    var b = ""
    var context = 2
    var json = false
  }

  static let spec = CommandSpec<Arguments>(
    name: "diverge",
    abstract: "Find the first event after which two recordings' states differ.",
    discussion: """
      Compares the stored records until they disagree, then folds both logs from there and \
      compares states only where their operations differ, so identical prefixes cost no \
      folding. Prints the event number, the event in each log, and the diff from the first \
      log's state to the second's at that point.

      Exit status: 0 when the states diverge, 1 when they never do, 2 damaged log.
      """,
    arguments: [
      .required(\.a, "a", help: "The first log."),
      .required(\.b, "b", help: "The second log."),
    ],
    options: [
      .context(\.context),
      .flag(\.json, "json", help: "Print the result as one JSON object."),
    ])

  static func run(_ arguments: Arguments, _ io: IO) throws(CLIError) -> Int32 {
    let context = arguments.context
    let pathA = arguments.a
    let pathB = arguments.b
    let a = try openTimeline(pathA)
    let b = try openTimeline(pathB)
    warnIfDamaged(a)
    warnIfDamaged(b)
    let found = try replaying { () throws(StoreError) in try Diverge.find(a, b) }
    let diff: StateDiff? =
      if let stateA = found.stateA, let stateB = found.stateB {
        Differ.diff(stateA, stateB)
      } else {
        nil
      }
    let out = io.out
    let style = io.style
    if arguments.json {
      out.bytes(
        JSONWriter.line { w in
          w.field("event", found.event)
          for (key, path, timeline, event) in [
            ("a", pathA, a, found.eventA), ("b", pathB, b, found.eventB),
          ] {
            w.key(key)
            w.beginObject()
            w.field("log", path)
            w.field("events", timeline.eventCount)
            w.recorded(event)
            w.endObject()
          }
          w.field("firstDifferentRecord", found.firstDifferentRecord)
          w.field("comparedStates", found.comparedStates)
          w.field("exact", found.exact)
          w.key("notCompared")
          w.beginArray()
          for range in found.notCompared {
            w.beginArray()
            w.int(range.lowerBound)
            w.int(range.upperBound)
            w.endArray()
          }
          w.endArray()
          w.key("diff")
          if let diff { DiffText.write(diff, to: &w) } else { w.null() }
        })
    } else if let n = found.event, diff == nil {
      // No difference among the states compared: they part where one was not compared.
      out.line(
        style.bold("\(pathA) and \(pathB) part at event \(n)") + ": \(uncompared(found, a, b))")
      out.line("the states agree wherever both logs hold the recorded ones")
      for (path, timeline, event) in [(pathA, a, found.eventA), (pathB, b, found.eventB)] {
        out.line("  \(path): \(describe(event, n, timeline, style))")
      }
    } else if let n = found.event {
      if found.exact {
        out.line(style.bold("\(pathA) and \(pathB) diverge at event \(n)"))
      } else {
        out.line(
          style.bold("\(pathA) and \(pathB) differ at event \(n)")
            + " (not exact: the first difference among the states compared; "
            + "\(uncompared(found, a, b)))")
      }
      for (path, timeline, event) in [(pathA, a, found.eventA), (pathB, b, found.eventB)] {
        out.line("  \(path): \(describe(event, n, timeline, style))")
      }
      if let first = found.firstDifferentRecord {
        out.line(
          style.dim(
            first > 1
              ? "records identical through event \(first - 1)"
              : "the records differ from the first event"))
      }
      out.line()
      out.line(style.bold("--- \(pathA) at event \(n)"))
      out.line(style.bold("+++ \(pathB) at event \(n)"))
      if let diff { DiffText.print(diff, context: context, style: style, into: out) }
    } else {
      var line = "\(pathA) and \(pathB) never diverge: the states are equal at every event"
      if let first = found.firstDifferentRecord {
        line += " (the records differ from event \(first) but fold to the same states)"
      }
      out.line(line)
    }
    if a.readIncompletely || b.readIncompletely { return ExitCode.damaged }
    return found.event == nil ? ExitCode.notFound : ExitCode.success
  }

  /// Event `n` of a recording, or why it has none there.
  static func describe(_ event: Event?, _ n: Int, _ timeline: Timeline, _ style: Style) -> String {
    if let event { return Render.event(event, number: n, style: style) }
    if n > timeline.eventCount { return style.dim("(past its last event, \(timeline.eventCount))") }
    return style.dim("(lost in a salvage, or unreadable after lost events)")
  }

  /// `events 11294...23589 of salv.ltape are after events lost in a salvage (…)`.
  static func uncompared(_ found: Divergence, _ a: Timeline, _ b: Timeline) -> String {
    let ranges = found.notCompared.map { Failures.events($0) }.joined(separator: ", ")
    let whose = [a, b].filter { !$0.gaps.isEmpty }.map(\.path).joined(separator: " and ")
    return
      "the states at \(ranges) are not the recorded ones in \(whose) (events lost in a salvage) "
      + "and were not compared"
  }
}
