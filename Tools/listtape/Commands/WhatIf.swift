import Foundation
import ListTapeInvestigate
import ListTapeJSON
import ListTapeModel
import ListTapeStore

/// `listtape what-if LOG --without RANGE ... [--at P] [-o OUT]`: counterfactual replay.
enum WhatIfCommand: Command {
  static let spec = CommandSpec(
    name: "what-if",
    abstract: "Replay a log with some events left out and show what would differ.",
    discussion: """
      Replays LOG without the events of every --without RANGE (N or N-M, inclusive) next to \
      the real history, from the checkpoint before the first of them, and prints the first \
      event after which the two histories' states differ (always a removed event), the \
      faults that appear or vanish because of the removal, and the diff from the real state \
      to the counterfactual one at --at (default: the last event). -o also writes the \
      counterfactual log, with a mark saying what was left out where the first removed \
      event was.

      Exit status: 0; 73 the output already exists; 2 damaged log.
      """,
    arguments: [logArgument],
    options: [
      OptionSpec(
        name: "without", value: "range",
        help: "Events to leave out: N or N-M, inclusive; may be given several times."),
      OptionSpec(
        name: "at", value: "point",
        help: "Where to compare the two histories: N, mark:LABEL or time:ISO8601.",
        defaultText: "the last event"),
      OptionSpec(
        name: "output", short: "o", value: "out", help: "Also write the counterfactual log.",
        isFile: true),
      contextOption,
      OptionSpec(name: "json", help: "Print the report as one JSON object."),
    ])

  static func run(_ invocation: Invocation) throws(CLIError) -> Int32 {
    let texts = invocation.values("without")
    guard !texts.isEmpty else {
      throw invocation.usageError("Missing '--without <range>': the events to leave out")
    }
    var ranges: [ClosedRange<Int>] = []
    for text in texts {
      guard let r = WhatIf.range(text) else {
        throw invocation.usageError(
          "The value '\(text)' is invalid for '--without <range>'; expected N or N-M with N ≤ M")
      }
      ranges.append(r)
    }
    let context = try invocation.int("context") ?? 2
    let path = invocation.required("log")
    let output = invocation.value("output")
    let timeline = try openTimeline(path)
    warnIfDamaged(timeline)
    if let bad = ranges.first(where: { $0.lowerBound < 1 || $0.upperBound > timeline.eventCount }) {
      throw invocation.usageError(
        "--without \(WhatIf.describe([bad])) is out of range: the log has "
          + "\(Render.plural(timeline.eventCount, "event")) (1...\(timeline.eventCount))")
    }
    let point = try resolvePoint(invocation.value("at"), in: timeline, invocation: invocation)
    if let output, FileManager.default.fileExists(atPath: output) {
      throw .failure(
        "\(output) already exists; what-if writes a new log (remove it or choose another name)",
        code: ExitCode.cannotCreate)
    }
    let report = try replaying { () throws(ReplayError) in
      try WhatIf.run(timeline, without: ranges, at: point, context: context)
    }
    if let output {
      let written = try replaying { () throws(ReplayError) in
        try WhatIf.write(timeline, without: ranges, to: output)
      }
      Diagnostics.line(
        "listtape: wrote \(Render.plural(written, "event")) (without "
          + "\(WhatIf.describe(report.without)), with a mark) to \(output)")
    }
    if invocation.flag("json") {
      writeJSON(report, path: path, output: output, into: invocation.out)
    } else {
      render(report, path: path, style: invocation.style, context: context, into: invocation.out)
    }
    return timeline.readStoppedShort ? ExitCode.damaged : ExitCode.success
  }

  static func render(
    _ r: WhatIfReport, path: String, style: Style, context: Int, into out: Output
  ) {
    let without = WhatIf.describe(r.without)
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
        let line = faultLine(f.event, f.op.op, f.fault) + (f.removed ? " (removed)" : "")
        out.line("  " + (title.hasSuffix("appear") ? style.red(line) : style.green(line)))
      }
    }
    out.line()
    out.line(style.bold("--- \(path) at event \(r.at)"))
    out.line(style.bold("+++ \(path) without \(without) at event \(r.at)"))
    printDiff(r.diff, context: context, style: style, into: out)
  }

  static func writeJSON(_ r: WhatIfReport, path: String, output: String?, into out: Output) {
    var w = JSONWriter()
    func faults(_ key: String, _ list: [FaultChange]) {
      w.key(key)
      w.beginArray()
      for f in list { writeFault(event: f.event, op: f.op.op, reason: f.fault.description, to: &w) }
      w.endArray()
    }
    w.beginObject()
    w.key("log")
    w.string(path)
    w.key("without")
    w.beginArray()
    for range in r.without {
      w.beginArray()
      w.int(range.lowerBound)
      w.int(range.upperBound)
      w.endArray()
    }
    w.endArray()
    w.key("removed")
    w.int(r.removedCount)
    w.key("start")
    w.int(r.start)
    w.key("firstDifference")
    if let n = r.firstDifference { w.int(n) } else { w.null() }
    w.key("event")
    if let op = r.firstDifferenceOp { op.encode(to: &w) } else { w.null() }
    faults("faultsAppeared", r.appeared)
    // Faults of events both histories hold, then those of the removed events.
    faults("faultsVanished", r.vanished.filter { !$0.removed })
    faults("faultsRemoved", r.vanished.filter(\.removed))
    w.key("at")
    w.int(r.at)
    w.key("identical")
    w.bool(r.diff.isEmpty)
    w.key("changes")
    w.int(r.diff.changeCount)
    w.key("diff")
    r.diff.writeJSON(to: &w)
    w.key("output")
    if let output { w.string(output) } else { w.null() }
    w.endObject()
    w.endLine()
    out.bytes(w.bytes)
  }
}
