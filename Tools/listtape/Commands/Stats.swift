import ListTapeJSON
import ListTapeReplay

/// `listtape stats LOG`: what a log holds and what it costs.
enum StatsCommand: Command {
  static let spec = CommandSpec(
    name: "stats",
    abstract: "Show a log's events per op, faults, size and time span.",
    arguments: [logArgument],
    options: [OptionSpec(name: "json", help: "Print the figures as a JSON object.")])

  static func run(_ invocation: Invocation) throws(CLIError) -> Int32 {
    let path = invocation.required("log")
    let timeline = try openTimeline(path)
    warnIfDamaged(timeline)
    let progress = Progress(
      "reading", enabled: Terminal.isTTY(2) && timeline.eventCount >= 100_000)
    let stats = try replaying { () throws(ReplayError) in
      try timeline.stats(progress: progress.update)
    }
    progress.finish()
    let perEvent = stats.events > 0 ? Double(stats.bytes) / Double(stats.events) : 0
    let out = invocation.out
    if invocation.flag("json") {
      var w = JSONWriter()
      w.beginObject()
      w.key("path")
      w.string(path)
      w.key("events")
      w.int(stats.events)
      w.key("faults")
      w.int(stats.faults)
      w.key("bytes")
      w.int(stats.bytes)
      w.key("bytesPerEvent")
      w.double((perEvent * 100).rounded() / 100)
      w.key("frames")
      w.int(stats.frames)
      w.key("checkpoints")
      w.int(stats.checkpoints)
      w.key("checkpointBytes")
      w.int(stats.checkpointBytes)
      w.key("format")
      w.int(stats.format)
      w.key("indexBytes")
      if let n = stats.indexBytes { w.int(n) } else { w.null() }
      w.key("firstTime")
      if let t = stats.firstTime { w.int(t) } else { w.null() }
      w.key("lastTime")
      if let t = stats.lastTime { w.int(t) } else { w.null() }
      w.key("ops")
      w.beginObject()
      for (op, count) in stats.opCounts {
        w.key(op)
        w.int(count)
      }
      w.endObject()
      w.endObject()
      w.endLine()
      out.bytes(w.bytes)
      return timeline.readStoppedShort ? ExitCode.damaged : ExitCode.success
    }
    let style = invocation.style
    func row(_ label: String, _ value: String) {
      out.line("  " + label.padding(13) + value)
    }
    out.line(style.bold(path))
    row("events", Render.count(stats.events))
    row(
      "faults",
      stats.faults == 0 ? "0" : style.red(Render.count(stats.faults)))
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
      row(
        "time span",
        "\(Render.time(first)) → \(Render.time(last)) "
          + "(\(Render.duration(milliseconds: last - first)))")
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
    return timeline.readStoppedShort ? ExitCode.damaged : ExitCode.success
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
