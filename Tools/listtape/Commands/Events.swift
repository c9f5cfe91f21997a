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
    ])

  static func run(_ arguments: Arguments, _ io: IO) throws(CLIError) -> Int32 {
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
    let op = arguments.op?.name
    let json = arguments.json
    let numbered = arguments.numbered
    let out = io.out
    let style = io.style
    var scratch = JSONWriter(reservingCapacity: 4096)
    var buffer: [UInt8] = []
    buffer.reserveCapacity(1 << 16)
    // After events lost in a salvage: which states are not the recorded ones, and where the
    // numbers hold no event (docs/cli.md, "Damaged logs").
    let steps = timeline.exactSteps
    var next = first
    func hole(before n: Int) {
      guard !json, n > next else { return }
      out.line(
        style.dim(
          "… \(Failures.events(next...(n - 1))): lost in a salvage, or unreadable after lost events"
        ))
    }
    do {
      try timeline.forEachEvent(from: first, through: to) { n, event in
        defer { next = n + 1 }
        if let op, event.op != op { return true }
        hole(before: n)
        let exact = steps.stateIsExact(at: n)
        if json {
          scratch.reset()
          event.encode(to: &scratch)
          var bytes = scratch.bytes
          if !exact {
            // One key after the event's own (which `record` ignores): the state after it is
            // not the recorded one.
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
        } else {
          out.line(
            Render.event(event, number: numbered ? n : nil, style: style)
              + (exact ? "" : style.dim("  (not the recorded state)")))
        }
        return true
      }
    } catch {
      throw CLIError(error)
    }
    if op == nil { hole(before: min(to, timeline.eventCount) + 1) }
    out.bytes(buffer)
    return timeline.readIncompletely ? ExitCode.damaged : ExitCode.success
  }
}
