import ListTapeInvestigate
import ListTapeJSON
import ListTapeModel
import ListTapeRead
import ListTapeStore

/// `listtape find LOG --where EXPR | --faults`: exact full scans; `listtape find --where
/// EXPR LOG...`: the first event at which EXPR holds in each of many logs.
enum FindCommand: Command {
  struct Arguments: ParsableArguments {
    var logs: [String] = []
    var query: Query?
    var faults = false
    var json = false
  }

  static let spec = CommandSpec<Arguments>(
    name: "find",
    abstract: "List every event at which an expression changes value, or every fault.",
    discussion: """
      Folds the whole log once, with no monotonic assumption. With --where, prints the \
      value at event 0, then `event N: OLD → NEW` and the event for every change; the \
      expression may be of any type (count(visible) lists every change of the count). With \
      --faults, prints every fault as `event N: OP: reason`.

      Exit status: 0 when something is listed, 1 when the value never changes (or the log \
      has no faults), 64 a malformed expression (the message names the column), 2 damaged log.

      \(FindManyCommand.discussion)
      """,
    arguments: [.logs(\.logs)],
    options: [
      .where(\.query),
      .flag(\.faults, "faults", help: "List every fault with its reason instead."),
      .flag(\.json, "json", help: "Print JSON Lines: one object per change or fault."),
    ])

  static func run(_ arguments: Arguments, _ io: IO) throws(CLIError) -> Int32 {
    if arguments.query == nil && !arguments.faults {
      throw usageError("Give one of '--where <expr>' or '--faults'")
    }
    if arguments.query != nil && arguments.faults {
      throw usageError("'--where <expr>' and '--faults' cannot be used together")
    }
    if meansManyLogs(arguments.logs) {
      return try FindManyCommand.run(arguments, io)
    }
    let timeline = try openTimeline(arguments.logs[0])
    warnIfDamaged(timeline)
    let found: Int
    if let query = arguments.query {
      found = try changes(of: query, in: timeline, json: arguments.json, io)
    } else {
      found = try listFaults(in: timeline, json: arguments.json, io)
    }
    if timeline.readIncompletely { return ExitCode.damaged }
    return found > 0 ? ExitCode.success : ExitCode.notFound
  }

  static func changes(of query: Query, in timeline: Timeline, json: Bool, _ io: IO)
    throws(CLIError) -> Int
  {
    let out = io.out
    let style = io.style
    let total = timeline.eventCount
    let progress = Progress("scanning", events: total)
    // The value at 0 (the empty list) first, so each change below reads as a step from it.
    if !json {
      let initial = query.evaluate(ListState())
      out.line("\(query.description) is \(style.bold(initial.description)) at event 0")
    }
    let result = try replaying { () throws(StoreError) in
      try Find.changes(timeline, query: query, progress: progress.update) { change, event in
        progress.finish()
        if json {
          out.bytes(
            JSONWriter.line { w in
              w.field("event", change.event)
              w.field("from", change.from)
              w.field("to", change.to)
              w.recorded(event)
              if !change.exact { w.field("exact", false) }
            })
        } else {
          out.line(
            style.bold("event \(change.event)") + ": \(Visible.text(change.from.description)) → "
              + style.green(Visible.text(change.to.description)) + "  "
              + Render.event(event, number: nil, style: style)
              + (change.exact ? "" : "  " + style.yellow("(not the recorded state)")))
        }
      }
    }
    progress.finish()
    if json {
      out.bytes(
        JSONWriter.line { w in
          w.field("expression", query.description)
          w.field("initial", result.initial)
          w.field("changes", result.changes)
          w.field("events", total)
        })
    } else {
      out.line(
        style.dim(
          "\(Render.plural(result.changes, "change")) in \(Render.plural(total, "event"))"))
    }
    return result.changes
  }

  static func listFaults(in timeline: Timeline, json: Bool, _ io: IO) throws(CLIError) -> Int {
    let out = io.out
    let style = io.style
    let total = timeline.eventCount
    let progress = Progress("scanning", events: total)
    var count = 0
    // After events lost in a salvage, faults are listed only where the state before the
    // event is the recorded one (as `replay` counts them).
    let steps = timeline.exactSteps
    _ = try replaying { () throws(StoreError) in
      try timeline.replay(through: total, progress: progress.update) { n, event, fault in
        guard steps.at(n) == .exact else { return true }
        progress.finish()
        count += 1
        if json {
          var w = JSONWriter()
          writeFault(
            event: n, op: event.op, site: event.site, reason: fault.description, to: &w)
          w.endLine()
          out.bytes(w.bytes)
        } else {
          out.line(style.red(faultLine(n, event.op, fault, site: event.site)))
        }
        return true
      }
    }
    progress.finish()
    if !json {
      let skipped = timeline.notReplayed(through: total)
      let note =
        skipped.isEmpty
        ? ""
        : "; not searched (states after lost events): "
          + skipped.map { "\($0.lowerBound)...\($0.upperBound)" }.joined(separator: ", ")
      out.line(
        style.dim(
          "\(Render.plural(count, "fault")) in \(Render.plural(total, "event"))" + note))
    }
    return count
  }

}

extension JSONWriter {
  /// A query value: true/false, an integer, a string or null.
  mutating func field(_ key: String, _ value: QueryValue) {
    self.key(key)
    switch value {
    case .bool(let b): bool(b)
    case .int(let i): int(i)
    case .string(let s): string(s)
    case .null: null()
    }
  }
}
