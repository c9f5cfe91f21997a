import ListTapeInvestigate
import ListTapeJSON
import ListTapeModel
import ListTapeRead
import ListTapeStore

/// `listtape events LOG`: the recorded events, as JSON Lines or one readable line each.
enum EventsCommand: Command {
  struct Arguments: ParsableArguments {
    var log = ""
    var from: Point?
    var to: Point?
    var op: OpName?
    var json = false
    var numbered = false
    var follow = false
  }

  /// A top-level op name, as `--op` takes it.
  struct OpName: ArgumentValue {
    var name: String

    static let choices = ListOperation.allNames

    static func parse(_ word: String) throws(InvalidValue) -> OpName {
      guard choices.contains(word) else {
        throw InvalidValue(expected: "one of: " + choices.joined(separator: ", "))
      }
      return OpName(name: word)
    }
  }

  static let spec = CommandSpec<Arguments>(
    name: "events",
    abstract: "Print the recorded events.",
    discussion: """
      With --json, prints one JSON object per line exactly as recorded (with the time the \
      recorder stamped), so piping the output into `listtape record` gives a log with the \
      same states. Without it, prints one readable line per event. --numbered adds the event \
      number (as an "event" key first in each JSON object, which a recorder ignores).

      With --follow, prints the recorded events, then each event another process appends \
      (a recorder, or an app recording through ListStore) as soon as its frame is written, \
      until SIGINT or SIGTERM (exit 0). A frame still being written is waited for, not \
      reported as damage. Following stops with an error when the log is removed or \
      replaced (exit 66) or damaged (exit 2). --from still chooses the first event; --to \
      is refused.
      """,
    arguments: [.log(\.log)],
    options: [
      .option(
        \.from, "from", value: "a",
        help: "The first event to print: N, mark:LABEL or time:ISO8601.", defaultText: "1"),
      .option(
        \.to, "to", value: "b", help: "The last event to print: N, mark:LABEL or time:ISO8601.",
        defaultText: "the last event"),
      .option(
        \.op, "op", value: "op", help: "Only events with this op (top-level; a batch is one event)."
      ),
      .flag(\.json, "json", help: "Print JSON Lines."),
      .flag(\.numbered, "numbered", help: "Print each event's number."),
      .flag(
        \.follow, "follow", short: "f",
        help: "Keep printing events as another process appends them, until interrupted."),
    ])

  static func run(_ arguments: Arguments, _ io: IO) throws(CLIError) -> Int32 {
    if arguments.follow { return try follow(arguments, io) }
    let timeline = try openTimeline(arguments.log)
    warnIfDamaged(timeline)
    let from = try resolve(arguments.from, in: timeline, for: self, option: "--from")
    let to = try resolve(arguments.to, in: timeline, for: self, option: "--to")
    // Event 0 is the empty state before event 1 (protocol section 3), so `--from 0` (or a
    // time before the first event) starts at the first event and `--to 0` selects none.
    let first = arguments.from == nil ? 1 : max(from, 1)
    guard first <= to || to == 0 else {
      throw usageError("--from \(first) is after --to \(to)")
    }
    var lines = EventLines(arguments, io, next: first)
    // After events lost in a salvage: which states are not the recorded ones, and where the
    // numbers hold no event (docs/cli.md, "Damaged logs").
    let steps = timeline.exactSteps
    do {
      try timeline.forEachEvent(from: first, through: to) { n, event in
        lines.print(n, event, exact: steps.stateIsExact(at: n))
        return true
      }
    } catch {
      throw CLIError(error)
    }
    if arguments.op == nil { lines.hole(before: min(to, timeline.eventCount) + 1) }
    lines.flush()
    return timeline.readIncompletely ? ExitCode.damaged : ExitCode.success
  }
}

/// How `events` prints events: JSON Lines or one readable line each, numbered or not,
/// filtered by op, with a line where a salvage left numbers without events. One printer
/// serves a listing and a follow (`EventsCommand.follow`).
struct EventLines {
  let json: Bool
  let numbered: Bool
  let op: String?
  let out: Output
  let style: Style
  /// The number after the last event seen: numbers skipped before the next one printed are
  /// a hole.
  private(set) var next: Int
  private var scratch = JSONWriter(reservingCapacity: 4096)
  /// JSON lines gathered for one large write.
  private var buffer: [UInt8] = []

  init(_ arguments: EventsCommand.Arguments, _ io: IO, next: Int) {
    json = arguments.json
    numbered = arguments.numbered
    op = arguments.op?.name
    out = io.out
    style = io.style
    self.next = next
    buffer.reserveCapacity(1 << 16)
  }

  /// Prints event `n` (unless `--op` leaves it out); `exact` is false when the state after
  /// it is not the recorded one.
  mutating func print(_ n: Int, _ event: Event, exact: Bool) {
    defer { next = n + 1 }
    if let op, event.op != op { return }
    hole(before: n)
    guard json else {
      out.line(building: { line in
        Render.event(event, number: numbered ? n : nil, style: style, into: &line)
        if !exact { line.append(contentsOf: style.dim("  (not the recorded state)").utf8) }
      })
      return
    }
    scratch.reset()
    event.encode(to: &scratch)
    var bytes = scratch.bytes
    if !exact {
      // One key after the event's own (which `record` ignores): the state after it is not
      // the recorded one.
      bytes.removeLast()
      bytes.append(contentsOf: #","exact":false}"#.utf8)
    }
    if numbered {
      // `{"event":N,` then the event's own object without its opening brace.
      buffer.append(contentsOf: "{\"event\":\(n),".utf8)
      buffer.append(contentsOf: bytes.dropFirst())
    } else {
      buffer.append(contentsOf: bytes)
    }
    buffer.append(0x0A)
    if buffer.count > 60_000 {
      out.bytes(buffer)
      buffer.removeAll(keepingCapacity: true)
    }
  }

  /// In text, a line for the numbers before `n` that held no event (lost in a salvage).
  mutating func hole(before n: Int) {
    guard !json, n > next else { return }
    out.line(
      style.dim(
        "… \(Failures.events(next...(n - 1))): lost in a salvage, or unreadable after lost events"
      ))
  }

  /// Writes what is gathered to standard output.
  mutating func flush() {
    out.bytes(buffer)
    buffer.removeAll(keepingCapacity: true)
    out.flush()
  }
}
