import ListTapeInvestigate
import ListTapeJSON
import ListTapeRead
import ListTapeStore

/// `listtape stats LOG`: what a log holds and what it costs; `listtape stats LOG...`: many
/// logs added up.
enum StatsCommand: Command {
  struct Arguments: ParsableArguments {
    var logs: [String] = []
    var json = false
  }

  static let spec = CommandSpec<Arguments>(
    name: "stats",
    abstract: "Show a log's events per op, faults, size and time span.",
    discussion: StatsManyCommand.discussion,
    arguments: [.logs(\.logs)],
    options: [.flag(\.json, "json", help: "Print the figures as a JSON object.")])

  static func run(_ arguments: Arguments, _ io: IO) throws(CLIError) -> Int32 {
    if meansManyLogs(arguments.logs) {
      return try StatsManyCommand.run(logs: arguments.logs, json: arguments.json, io)
    }
    let path = arguments.logs[0]
    let timeline = try openTimeline(path)
    warnIfDamaged(timeline)
    let progress = Progress("reading", events: timeline.eventCount)
    let stats = try replaying { () throws(StoreError) in
      try timeline.stats(progress: progress.update)
    }
    progress.finish()
    let perEvent = stats.events > 0 ? Double(stats.bytes) / Double(stats.events) : 0
    let out = io.out
    if arguments.json {
      out.bytes(
        JSONWriter.line { w in
          w.field("log", path)
          w.field("events", stats.events)
          w.ranges("lost", stats.lost)
          w.field("undecodable", stats.undecodable)
          w.field("faults", stats.faults)
          w.ranges("notReplayed", stats.inexact)
          w.field("bytes", stats.bytes)
          w.field("bytesPerEvent", (perEvent * 100).rounded() / 100)
          w.field("frames", stats.frames)
          w.field("checkpoints", stats.checkpoints)
          w.field("checkpointBytes", stats.checkpointBytes)
          w.field("format", stats.format)
          w.field("indexBytes", stats.indexBytes)
          w.field("firstTime", stats.firstTime)
          w.field("lastTime", stats.lastTime)
          w.key("ops")
          w.beginObject()
          for (op, count) in stats.opCounts {
            w.key(op)
            w.int(count)
          }
          w.endObject()
        })
      return timeline.readIncompletely ? ExitCode.damaged : ExitCode.success
    }
    let style = io.style
    func row(_ label: String, _ value: String) {
      out.line("  " + label.padding(13) + value)
    }
    out.line(style.bold(path))
    row("events", Render.count(stats.events))
    if !stats.lost.isEmpty {
      let count = stats.lost.reduce(0) { $0 + $1.count }
      row(
        "lost",
        "\(Render.plural(count, "event")) in a salvage ("
          + stats.lost.prefix(5).map(Failures.events).joined(separator: ", ")
          + (stats.lost.count > 5 ? ", …" : "") + "); ops and faults leave them out")
    }
    if stats.undecodable > 0 {
      row(
        "undecodable",
        "\(Render.plural(stats.undecodable, "event")) kept but naming ids lost with a gap; "
          + "ops and faults leave them out")
    }
    var faults = stats.faults == 0 ? "0" : style.red(Render.count(stats.faults))
    if !stats.inexact.isEmpty {
      faults +=
        " (not counted after lost events: "
        + stats.inexact.prefix(5).map { "\($0.lowerBound)...\($0.upperBound)" }
        .joined(separator: ", ") + (stats.inexact.count > 5 ? ", …" : "") + ")"
    }
    row("faults", faults)
    row("bytes", "\(Render.count(stats.bytes)) (\(Render.decimal(perEvent, 1)) bytes/event)")
    row("format", "\(stats.format).0")
    row(
      "index file",
      stats.indexBytes.map { "\(Render.count($0)) bytes beside the log (a rebuildable cache)" }
        ?? "none")
    row("frames", Render.count(stats.frames))
    let share = stats.bytes > 0 ? Double(stats.checkpointBytes) * 100 / Double(stats.bytes) : 0
    row(
      "checkpoints",
      "\(Render.count(stats.checkpoints)) (\(Render.count(stats.checkpointBytes)) bytes, "
        + String(format: "%.1f%%", share) + " of the file)")
    if let first = stats.firstTime, let last = stats.lastTime {
      // The earliest and latest times: any size, so the span may not fit a duration.
      let (span, overflow) = last.subtractingReportingOverflow(first)
      let length =
        overflow
        ? "more than \(Render.duration(milliseconds: .max))" : Render.duration(milliseconds: span)
      row("time span", "\(Render.time(first)) → \(Render.time(last)) (\(length))")
    } else {
      row("time span", "-")
    }
    if !stats.opCounts.isEmpty {
      out.line("  ops")
      let width = stats.opCounts.map(\.count).map(Render.count).map(\.count).max() ?? 1
      for (op, count) in stats.opCounts {
        let share = stats.events > 0 ? Double(count) * 100 / Double(stats.events) : 0
        let n = Render.count(count)
        out.line(
          "    " + op.padding(22) + String(repeating: " ", count: width - n.count) + n
            + "  " + style.dim(Render.decimal(share, 1).leftPadding(5) + "%"))
      }
    }
    return timeline.readIncompletely ? ExitCode.damaged : ExitCode.success
  }
}

extension String {
  /// The string followed by spaces up to `width` characters.
  func padding(_ width: Int) -> String {
    count >= width ? self + " " : self + String(repeating: " ", count: width - count)
  }

  /// Spaces then the string, up to `width` characters.
  func leftPadding(_ width: Int) -> String {
    count >= width ? self : String(repeating: " ", count: width - count) + self
  }
}

extension JSONWriter {
  /// `key: [[first, last], …]`, the vocabulary's lists of ranges.
  mutating func ranges(_ key: String, _ ranges: [ClosedRange<Int>]) {
    self.key(key)
    beginArray()
    for r in ranges {
      beginArray()
      int(r.lowerBound)
      int(r.upperBound)
      endArray()
    }
    endArray()
  }
}
