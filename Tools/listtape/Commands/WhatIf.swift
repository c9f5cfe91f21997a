import Foundation
import ListTapeInvestigate
import ListTapeJSON
import ListTapeModel
import ListTapeRead
import ListTapeStore

/// `listtape what-if LOG --without RANGE ... [--at P] [-o OUT]`: counterfactual replay.
enum WhatIfCommand: Command {
  struct Arguments: ParsableArguments {
    var log = ""
    var without: [EventRange] = []
    var at: Point?
    var output: String?
    var force = false
    var context = 2
    var json = false
  }

  static let spec = CommandSpec<Arguments>(
    name: "what-if",
    abstract: "Replay a log with some events left out and show what would differ.",
    discussion: """
      Replays LOG without the events of every --without RANGE (N or N-M, inclusive) next to \
      the real history, from the checkpoint before the first of them, and prints the first \
      event after which the two histories' states differ (always a removed event), the \
      faults that appear or vanish because of the removal, and the diff from the real state \
      to the counterfactual one at --at (default: the last event). -o also writes the \
      counterfactual log, each removed event replaced by a mark saying what was left out, so \
      that every event keeps its number (a file, a pipe or a device, not '-': standard output \
      carries the report; an existing file is refused unless --force).

      After events lost in a salvage, a replay that folds states that are not the recorded \
      ones says so ("not exact", "exact": false in JSON).

      Exit status: 0; 73 the output already exists; 2 damaged log.
      """,
    arguments: [.log(\.log)],
    options: [
      .repeating(
        \.without, "without", value: "range",
        help: "Events to leave out: N or N-M, inclusive; may be given several times.",
        required: true),
      .option(
        \.at, "at", value: "point",
        help: "Where to compare the two histories: N, mark:LABEL or time:ISO8601.",
        defaultText: "the last event"),
      .output(\.output, value: "out", help: "Also write the counterfactual log."),
      .force(\.force),
      .context(\.context),
      .flag(\.json, "json", help: "Print the report as one JSON object."),
    ])

  static func run(_ arguments: Arguments, _ io: IO) throws(CLIError) -> Int32 {
    let ranges = arguments.without.map(\.range)
    let outputFile = try arguments.output.map { (path) throws(CLIError) in
      try OutputFile.open(path, force: arguments.force, content: .logBesideReport, for: self)
    }
    let path = arguments.log
    let timeline = try openTimeline(path)
    warnIfDamaged(timeline)
    let count = timeline.eventCount
    if let bad = ranges.first(where: { $0.lowerBound < 1 || $0.upperBound > count }) {
      throw usageError(
        "--without \(describe([bad])) is out of range: the log has "
          + "\(Render.plural(count, "event")) (1...\(count))")
    }
    let point = try resolve(arguments.at, in: timeline, for: self)
    let report = try replaying { () throws(StoreError) in
      try WhatIf.run(timeline, without: ranges, at: point, context: arguments.context)
    }
    if let outputFile {
      let without = describe(report.without)
      let written = try outputFile.writeFile { (file) throws(CLIError) in
        try replaying { () throws(StoreError) in
          try WhatIf.write(timeline, without: ranges, mark: "what-if: without \(without)", to: file)
        }
      }
      try outputFile.commit()
      Diagnostics.line(
        "listtape: wrote \(Render.plural(written, "event")) (events \(without) each replaced by a "
          + "mark, so every event keeps its number) to \(outputFile.name)")
    }
    if arguments.json {
      writeJSON(report, path: path, output: arguments.output, into: io.out)
    } else {
      render(report, path: path, style: io.style, context: arguments.context, into: io.out)
      if !report.exact {
        let stretch = timeline.reader.exactStretch(
          containing: UInt64(max(report.without[0].lowerBound - 1, 0)))
        let after = stretch.map { Int($0.end) } ?? report.without[0].lowerBound - 1
        io.out.line(
          io.style.bold("not exact:")
            + " the replay folds states that are not the recorded ones after event \(after) "
            + "(\(Failures.lost(after: after, timeline)))")
      }
    }
    return timeline.readIncompletely ? ExitCode.damaged : ExitCode.success
  }

  /// `120-130, 500`.
  static func describe(_ ranges: [ClosedRange<Int>]) -> String {
    ranges.map { $0.count == 1 ? "\($0.lowerBound)" : "\($0.lowerBound)-\($0.upperBound)" }
      .joined(separator: ", ")
  }

  static func render(
    _ r: WhatIfReport, path: String, style: Style, context: Int, into out: Output
  ) {
    let without = describe(r.without)
    out.line(
      style.bold("without events \(without)") + " (\(Render.plural(r.removedCount, "event"))), "
        + (r.start == 0
          ? "replayed from the start" : "replayed from the checkpoint at event \(r.start)"))
    if let n = r.firstDifference, let op = r.firstDifferenceOp {
      out.line("first difference: after event \(n)  " + Render.event(op, number: n, style: style))
    } else {
      out.line("first difference: none (the states never differ)")
    }
    for (title, list) in [("faults that appear", r.appeared), ("faults that vanish", r.vanished)] {
      out.line("\(title): \(list.count)")
      for f in list {
        let line =
          faultLine(f.event, f.op.op, f.fault, site: f.op.site) + (f.removed ? " (removed)" : "")
        out.line("  " + (title.hasSuffix("appear") ? style.red(line) : style.green(line)))
      }
    }
    out.line()
    out.line(style.bold("--- \(path) at event \(r.at)"))
    out.line(style.bold("+++ \(path) without \(without) at event \(r.at)"))
    DiffText.print(r.diff, context: context, style: style, into: out)
  }

  static func writeJSON(_ r: WhatIfReport, path: String, output: String?, into out: Output) {
    out.bytes(
      JSONWriter.line { w in
        func faults(_ key: String, _ list: [FaultChange]) {
          w.key(key)
          w.beginArray()
          for f in list {
            writeFault(
              event: f.event, op: f.op.op, site: f.op.site, reason: f.fault.description,
              to: &w)
          }
          w.endArray()
        }
        w.field("log", path)
        w.key("without")
        w.beginArray()
        for range in r.without {
          w.beginArray()
          w.int(range.lowerBound)
          w.int(range.upperBound)
          w.endArray()
        }
        w.endArray()
        w.field("removed", r.removedCount)
        w.field("start", r.start)
        w.field("firstDifference", r.firstDifference)
        w.recorded(r.firstDifferenceOp)
        faults("faultsAppeared", r.appeared)
        // Faults of events both histories hold, then those of the removed events.
        faults("faultsVanished", r.vanished.filter { !$0.removed })
        faults("faultsRemoved", r.vanished.filter(\.removed))
        w.field("at", r.at)
        w.field("identical", r.diff.isEmpty)
        w.field("exact", r.exact)
        w.field("changes", r.diff.changeCount)
        w.key("diff")
        DiffText.write(r.diff, to: &w)
        w.field("output", output)
      })
  }
}

/// `N` or `N-M` (inclusive, N ≤ M): events to leave out.
struct EventRange: ArgumentValue {
  var range: ClosedRange<Int>

  static func parse(_ word: String) throws(InvalidValue) -> EventRange {
    let parts = word.split(separator: "-", omittingEmptySubsequences: false)
    guard (1...2).contains(parts.count), let a = Int(parts[0]), let b = Int(parts.last ?? ""),
      a <= b
    else { throw InvalidValue(expected: "N or N-M with N ≤ M") }
    return EventRange(range: a...b)
  }

  var helpText: String { WhatIfCommand.describe([range]) }
}
