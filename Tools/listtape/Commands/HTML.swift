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
      The page embeds the log itself (its bytes, as base64: a third more than the log) \
      and reads it in the browser with the same decoder and reducer as every command, \
      compiled to WebAssembly. --from/--to choose the events shown; the page holds the log \
      through --to. -o - writes the page to standard output; an existing file is refused \
      unless --force.
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
        \.maxEvents, "max-events", value: "n",
        help: "Refuse a window of more events than this (a guard on the browser's memory).",
        valid: 1...Int.max),
      .option(
        \.checkpointEvery, "checkpoint-every", value: "n",
        help: "Keep a seek point every N events in the page.", hidden: true,
        valid: 1...Int.max),
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
    // The page folds events 1...through (the log up to the window's end).
    guard through <= maxEvents else {
      throw .failure(
        "\(Render.plural(through, "event")) is more than a page holds (--max-events "
          + "\(Render.count(maxEvents))); choose an earlier --to, cut the log with "
          + "'listtape cut', or raise --max-events",
        code: ExitCode.usage)
    }
    let name = URL(fileURLWithPath: path).lastPathComponent
    let report = HTMLReport(
      name: name, timeline: timeline, from: from, through: through, spacing: every)
    let parts: HTMLReport.Parts
    do {
      parts = try report.parts()
    } catch {
      switch error {
      case .replay(let e): throw CLIError(e)
      case .tooLarge(let bytes):
        throw .failure(
          "the page would embed \(bytes >> 20) MB of log, more than "
            + "\(HTMLReport.maxLogBytes >> 20) MB; choose an earlier --to or cut the log "
            + "with 'listtape cut'",
          code: ExitCode.usage)
      }
    }
    let size = try HTMLPage.write(parts) { bytes throws(CLIError) in try output.write(bytes) }
    try output.commit()
    Diagnostics.line(
      "listtape: wrote \(output.name) (\(Render.plural(window, "event")), "
        + "\(Render.decimal(Double(size) / 1_048_576, 1)) MB: "
        + "\(Render.decimal(Double(parts.logBytes) / 1_048_576, 1)) MB of log)")
    return timeline.readIncompletely ? ExitCode.damaged : ExitCode.success
  }
}
