import Foundation
import ListTapeInvestigate
import ListTapeStore

/// `listtape html LOG -o FILE`: one self-contained HTML page to scrub a log in a browser.
enum HTMLCommand: Command {
  static let spec = CommandSpec(
    name: "html",
    abstract: "Write a self-contained HTML viewer of a log.",
    discussion: """
      The page has a slider over event numbers, play and step buttons, the events, the list \
      at the selected event, the diff from the previous event, and marks and faults on the \
      timeline. It makes no network request (a Content-Security-Policy forbids them) and \
      shows every id, title and label as text. #event=N in its address selects event N. \
      A page embeds at most --max-events events (default 200,000) and 50 MB: pick a window \
      with --from/--to, or cut the log first.
      """,
    arguments: [logArgument],
    options: [
      OptionSpec(
        name: "output", short: "o", value: "file", help: "The HTML file to write.", isFile: true),
      OptionSpec(
        name: "from", value: "point", help: "The first event to embed (N, mark:LABEL, time:…).",
        defaultText: "1"),
      OptionSpec(
        name: "to", value: "point", help: "The last event to embed.", defaultText: "the last event"),
      OptionSpec(
        name: "max-events", value: "n", help: "Refuse a window of more events than this.",
        defaultText: "200000"),
      OptionSpec(
        name: "checkpoint-every", value: "n", help: "Embed a full state every N events.",
        hidden: true),
    ])

  static func run(_ invocation: Invocation) throws(CLIError) -> Int32 {
    let path = invocation.required("log")
    guard let output = invocation.value("output") else {
      throw invocation.usageError("Missing expected option '--output <file>'")
    }
    let maxEvents = try invocation.int("max-events", in: 1...Int.max) ?? HTMLReport.defaultMaxEvents
    let every = try invocation.int("checkpoint-every", in: 1...Int.max)
    let timeline = try openTimeline(path)
    warnIfDamaged(timeline)
    let count = timeline.eventCount
    var from = 1
    if let text = invocation.value("from") {
      from = max(1, try resolvePoint(text, in: timeline, invocation: invocation, option: "--from"))
    }
    var through = count
    if let text = invocation.value("to") {
      through = try resolvePoint(text, in: timeline, invocation: invocation, option: "--to")
    }
    guard count > 0 else {
      throw .failure("\(path) holds no events: nothing to view", code: ExitCode.notFound)
    }
    guard from <= through else {
      throw invocation.usageError("--from \(from) is after --to \(through)")
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
    let progress = Progress("reading", enabled: Terminal.isTTY(2) && window >= 100_000)
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
    guard FileManager.default.createFile(atPath: output, contents: Data(page)) else {
      throw .failure("cannot write \(output)", code: ExitCode.cannotOpen)
    }
    Diagnostics.line(
      "listtape: wrote \(output) (\(Render.plural(window, "event")), "
        + "\(Render.decimal(Double(page.count) / 1_048_576, 1)) MB)")
    return ExitCode.success
  }
}
