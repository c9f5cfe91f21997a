import Foundation
import ListTapeInvestigate
import ListTapeRead
import ListTapeStore

/// `listtape html LOG -o FILE`: one self-contained HTML page to scrub a log in a browser.
enum HTMLCommand: Command {
  struct Arguments: ParsableArguments {
    var log = ""
    var output = ""
    var force = false
    var from: Point?
    var to: Point?
    var maxEvents = HTMLReport.defaultMaxEvents
    var checkpointEvery: Int?
  }

  static let spec = CommandSpec<Arguments>(
    name: "html",
    abstract: "Write a self-contained HTML viewer of a log.",
    discussion: """
      The page has a slider over event numbers, play and step buttons, the events, the list \
      at the selected event, the diff from the previous event, and marks and faults on the \
      timeline. It makes no network request (a Content-Security-Policy forbids them) and \
      shows every id, title and label as text. #event=N in its address selects event N. \
      A page embeds at most --max-events events (default 200,000) and 50 MB: pick a window \
      with --from/--to, or cut the log first. -o - writes the page to standard output; an \
      existing file is refused unless --force.
      """,
    arguments: [.log(\.log)],
    options: [
      .output(\.output, value: "file", help: "The HTML file to write ('-': standard output)."),
      .force(\.force),
      .option(
        \.from, "from", value: "point", help: "The first event to embed (N, mark:LABEL, time:…).",
        defaultText: "1"),
      .option(
        \.to, "to", value: "point", help: "The last event to embed.", defaultText: "the last event"),
      .option(
        \.maxEvents, "max-events", value: "n", help: "Refuse a window of more events than this.",
        valid: 1...Int.max),
      .option(
        \.checkpointEvery, "checkpoint-every", value: "n",
        help: "Embed a full state every N events.", hidden: true, valid: 1...Int.max),
    ])

  static func run(_ arguments: Arguments, _ io: IO) throws(CLIError) -> Int32 {
    let path = arguments.log
    let output = try OutputFile.open(
      arguments.output, force: arguments.force, content: .text, for: self)
    let maxEvents = arguments.maxEvents
    let every = arguments.checkpointEvery
    let timeline = try openTimeline(path)
    warnIfDamaged(timeline)
    let count = timeline.eventCount
    var from = 1
    if let point = arguments.from {
      from = max(1, try resolve(point, in: timeline, for: self, option: "--from"))
    }
    let through = try resolve(arguments.to, in: timeline, for: self, option: "--to")
    guard count > 0 else {
      if timeline.readStoppedShort {
        throw .failure("no event of \(path) is readable: nothing to view", code: ExitCode.damaged)
      }
      throw .failure("\(path) holds no events: nothing to view", code: ExitCode.notFound)
    }
    guard from <= through else {
      throw usageError("--from \(from) is after --to \(through)")
    }
    let window = through - from + 1
    guard window <= maxEvents else {
      throw .failure(
        "\(Render.plural(window, "event")) is more than a page holds (--max-events "
          + "\(Render.count(maxEvents))); choose a window with --from/--to (e.g. --from "
          + "\(max(1, through - maxEvents + 1)) for the last \(Render.count(maxEvents))), cut the "
          + "log with 'listtape cut', or raise --max-events",
        code: ExitCode.usage)
    }
    let name = URL(fileURLWithPath: path).lastPathComponent
    let report = HTMLReport(
      name: name, timeline: timeline, from: from, through: through, checkpointEvery: every)
    let progress = Progress("reading", events: window)
    let parts: HTMLReport.Parts
    do {
      parts = try report.parts(progress: progress.update)
    } catch {
      progress.finish()
      switch error {
      case .replay(let e): throw CLIError(e)
      case .tooLarge(let bytes, let n):
        throw .failure(
          "the page would pass \(HTMLReport.maxBytes >> 20) MB (\(bytes >> 20) MB by event \(n)); "
            + "choose a smaller window with --from/--to or cut the log with 'listtape cut'",
          code: ExitCode.usage)
      }
    }
    progress.finish()
    let page = HTMLPage.render(parts)
    try output.write(page)
    try output.commit()
    Diagnostics.line(
      "listtape: wrote \(output.name) (\(Render.plural(window, "event")), "
        + "\(Render.decimal(Double(page.count) / 1_048_576, 1)) MB)")
    return timeline.readIncompletely ? ExitCode.damaged : ExitCode.success
  }
}
