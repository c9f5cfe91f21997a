import ListTapeInvestigate
import ListTapeJSON
import ListTapeModel
import ListTapeStore

/// `listtape diff LOG --from A --to B` and `listtape diff LOG1 LOG2 --at N`: what changed,
/// by item identity.
enum DiffCommand: Command {
  static let spec = CommandSpec(
    name: "diff",
    abstract: "Show what changed between two states, by item identity.",
    discussion: """
      With one log, compares the states at --from and --to; with two logs, compares them \
      at the same point --at (a mark or time is resolved in each log). Prints one line per \
      change in the new state's order: `+ id (under parent, after sibling)`, `- id (was …)`, \
      `~ id moved: … → …`, `▾ id expanded`, `▸ id collapsed`, `title id: "x" → "y"`, \
      `fields id: …`, `selection {a} → {b}`; runs of unchanged items are folded.

      Exit status: 0 whether or not the states differ (`"identical"` in --json tells), 2 damaged \
      log; protocol section 4 keeps exit 1 (not found) for bisect and find.
      """,
    arguments: [
      logArgument,
      ArgumentSpec(name: "other-log", help: "A second log, to compare at --at.", optional: true),
    ],
    options: [
      OptionSpec(
        name: "from", value: "a", help: "The old state (one log): N, mark:LABEL or time:ISO8601."),
      OptionSpec(
        name: "to", value: "b", help: "The new state (one log): N, mark:LABEL or time:ISO8601.",
        defaultText: "the last event"),
      OptionSpec(
        name: "at", value: "point",
        help: "The point at which to compare two logs: N, mark:LABEL or time:ISO8601."),
      contextOption,
      OptionSpec(name: "json", help: "Print the diff as one JSON object."),
    ])

  static func run(_ invocation: Invocation) throws(CLIError) -> Int32 {
    let context = try invocation.int("context") ?? 2
    let path = invocation.required("log")
    let sides: [(path: String, timeline: Timeline, event: Int)]
    if let other = invocation.argument("other-log") {
      if invocation.value("from") != nil || invocation.value("to") != nil {
        throw invocation.usageError(
          "'--from' and '--to' compare two states of one log; with two logs use '--at <point>'")
      }
      guard let at = invocation.value("at") else {
        throw invocation.usageError("Missing '--at <point>': where to compare the two logs")
      }
      let a = try openTimeline(path)
      let b = try openTimeline(other)
      warnIfDamaged(a)
      warnIfDamaged(b)
      sides = [
        (path, a, try resolvePoint(at, in: a, invocation: invocation)),
        (other, b, try resolvePoint(at, in: b, invocation: invocation)),
      ]
    } else {
      if invocation.value("at") != nil {
        throw invocation.usageError(
          "'--at' compares two logs; with one log use '--from <a>' and '--to <b>'")
      }
      guard let from = invocation.value("from") else {
        throw invocation.usageError("Missing '--from <a>': the state to compare from")
      }
      let timeline = try openTimeline(path)
      warnIfDamaged(timeline)
      sides = [
        (
          path, timeline,
          try resolvePoint(from, in: timeline, invocation: invocation, option: "--from")
        ),
        (
          path, timeline,
          try resolvePoint(
            invocation.value("to"), in: timeline, invocation: invocation, option: "--to")
        ),
      ]
    }
    let before = try replaying { () throws(StoreError) in
      try sides[0].timeline.state(at: sides[0].event)
    }
    let after = try replaying { () throws(StoreError) in
      try sides[1].timeline.state(at: sides[1].event)
    }
    let diff = Differ.diff(before, after)
    if invocation.flag("json") {
      var w = JSONWriter()
      w.beginObject()
      for (key, side) in zip(["from", "to"], sides) {
        w.key(key)
        w.beginObject()
        w.key("log")
        w.string(side.path)
        w.key("event")
        w.int(side.event)
        w.endObject()
      }
      w.key("identical")
      w.bool(diff.isEmpty)
      w.key("changes")
      w.int(diff.changeCount)
      w.key("diff")
      DiffText.write(diff, to: &w)
      w.endObject()
      w.endLine()
      invocation.out.bytes(w.bytes)
    } else {
      let style = invocation.style
      invocation.out.line(style.bold("--- \(sides[0].path) at event \(sides[0].event)"))
      invocation.out.line(style.bold("+++ \(sides[1].path) at event \(sides[1].event)"))
      DiffText.print(diff, context: context, style: style, into: invocation.out)
    }
    if sides.contains(where: { $0.timeline.readStoppedShort }) { return ExitCode.damaged }
    return ExitCode.success
  }
}

let contextOption = OptionSpec(
  name: "context", value: "n",
  help: "Unchanged items shown around changes; longer runs are folded into one line.",
  defaultText: "2")
