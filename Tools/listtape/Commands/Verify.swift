import ListTapeInvestigate
import ListTapeJSON
import ListTapeRead
import ListTapeStore

/// `listtape verify LOG`: checks every frame and checkpoint.
enum VerifyCommand: Command {
  struct Arguments: ParsableArguments {
    var log = ""
    var json = false
  }

  static let spec = CommandSpec<Arguments>(
    name: "verify",
    abstract: "Check a log's integrity.",
    discussion: """
      Reads every frame and checkpoint and checks their checksums and sequence. Exit status: \
      0 when the log is intact, 2 when it is damaged; the report then gives the byte offset \
      of the damage and the first event that cannot be read. A salvaged log that lost events \
      is not intact either (exit 2): the report lists the gaps and which states are not the \
      recorded ones.
      """,
    arguments: [.log(\.log)],
    options: [.flag(\.json, "json", help: "Print the report as a JSON object.")])

  static func run(_ arguments: Arguments, _ io: IO) throws(CLIError) -> Int32 {
    let path = arguments.log
    let timeline = try openTimeline(path)
    let progress = Progress("verifying", events: timeline.eventCount)
    let report = timeline.verify(progress: progress.update)
    progress.finish()
    let out = io.out
    let style = io.style
    // A salvaged log reads back whole but lost events: not intact (docs/cli.md, "Damaged
    // logs").
    let lost = timeline.lostRanges
    let intact = report.intact && lost.isEmpty
    if arguments.json {
      out.bytes(
        JSONWriter.line { w in
          w.field("log", path)
          w.field("intact", intact)
          w.field("events", report.events)
          w.field("frames", report.frames)
          w.field("checkpoints", report.checkpoints)
          w.field("bytes", report.bytes)
          w.field("problem", report.problem.map { Failures.message($0, path: path) })
          w.field("offset", report.offset)
          // `event` is the first event the damage makes unreadable; `lastIntactEvent` the one before.
          w.field("event", report.lastIntactEvent.map { $0 + 1 })
          w.field("lastIntactEvent", report.lastIntactEvent)
          w.key("lost")
          w.beginArray()
          for range in lost {
            w.beginArray()
            w.int(range.lowerBound)
            w.int(range.upperBound)
            w.endArray()
          }
          w.endArray()
        })
    } else {
      let contents =
        "\(Render.plural(report.events, "event")) in \(Render.plural(report.frames, "frame")), "
        + "\(Render.plural(report.checkpoints, "checkpoint")), "
        + "\(Render.plural(report.bytes, "byte"))"
      if report.intact && !lost.isEmpty {
        let count = lost.reduce(0) { $0 + $1.count }
        out.line(
          "\(path): \(style.red("salvaged")): \(Render.plural(count, "event")) lost in "
            + Render.plural(lost.count, "gap"))
        for note in Failures.warnings(timeline) { out.line("  " + note) }
        out.line("  checked: \(contents)")
      } else if report.intact {
        out.line("\(path): \(style.green("intact")): \(contents)")
      } else {
        // The library reports the last event that reads back intact; people want the first
        // one that does not.
        var line = "\(path): \(style.red("damaged"))"
        if let offset = report.offset { line += " at byte \(offset)" }
        if let event = report.lastIntactEvent { line += " (event \(event + 1))" }
        out.line(line)
        if let problem = report.problem { out.line("  " + Failures.message(problem, path: path)) }
        if let event = report.lastIntactEvent {
          out.line(
            event == 0
              ? "  no event reads back before the damage"
              : "  events 1...\(event) read back intact")
        }
        out.line("  checked: \(contents)")
      }
    }
    return intact ? ExitCode.success : ExitCode.damaged
  }
}
