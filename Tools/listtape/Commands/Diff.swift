import ListTapeInvestigate
import ListTapeJSON
import ListTapeModel
import ListTapeRead
import ListTapeStore

/// `listtape diff LOG --from A --to B` and `listtape diff LOG1 LOG2 --at N`: what changed,
/// by item identity.
enum DiffCommand: Command {
  static var loadsOneLargeState: Bool { true }

  struct Arguments: ParsableArguments {
    var log = ""
    var otherLog: String?
    var from: Point?
    var to: Point?
    var at: Point?
    var context = 2
    var json = false
  }

  static let spec = CommandSpec<Arguments>(
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
      .log(\.log),
      .optional(\.otherLog, "other-log", help: "A second log, to compare at --at."),
    ],
    options: [
      .option(
        \.from, "from", value: "a",
        help: "The old state (one log): N, mark:LABEL or time:ISO8601."),
      .option(
        \.to, "to", value: "b", help: "The new state (one log): N, mark:LABEL or time:ISO8601.",
        defaultText: "the last event"),
      .option(
        \.at, "at", value: "point",
        help: "The point at which to compare two logs: N, mark:LABEL or time:ISO8601."),
      .context(\.context),
      .flag(\.json, "json", help: "Print the diff as one JSON object."),
    ])

  static func run(_ arguments: Arguments, _ io: IO) throws(CLIError) -> Int32 {
    let path = arguments.log
    let sides: [(path: String, timeline: Timeline, event: Int)]
    if let other = arguments.otherLog {
      if arguments.from != nil || arguments.to != nil {
        throw usageError(
          "'--from' and '--to' compare two states of one log; with two logs use '--at <point>'")
      }
      guard let at = arguments.at else {
        throw usageError("Missing '--at <point>': where to compare the two logs")
      }
      let a = try openTimeline(path)
      let b = try openTimeline(other)
      warnIfDamaged(a)
      warnIfDamaged(b)
      sides = [
        (path, a, try resolve(at, in: a, for: self)),
        (other, b, try resolve(at, in: b, for: self)),
      ]
    } else {
      if arguments.at != nil {
        throw usageError("'--at' compares two logs; with one log use '--from <a>' and '--to <b>'")
      }
      guard let from = arguments.from else {
        throw usageError("Missing '--from <a>': the state to compare from")
      }
      let timeline = try openTimeline(path)
      warnIfDamaged(timeline)
      sides = [
        (path, timeline, try resolve(from, in: timeline, for: self, option: "--from")),
        (path, timeline, try resolve(arguments.to, in: timeline, for: self, option: "--to")),
      ]
    }
    // After events lost in a salvage, each state comes from the point that restores it (or
    // is said plainly not to be the recorded one).
    var inexactSides: [Bool] = []
    for side in sides {
      let note = Failures.inexactState(
        side.timeline.exactness(at: side.event), event: side.event, side.timeline)
      if let note { Diagnostics.line("listtape: warning: \(note)") }
      inexactSides.append(note != nil)
    }
    let inexact = inexactSides.contains(true)
    // Two points of one log: one seek, then only what the events between them touched.
    let diff = try replaying { () throws(StoreError) in
      if sides.contains(where: { !$0.timeline.gaps.isEmpty }) {
        return Differ.diff(
          try sides[0].timeline.exactState(at: sides[0].event).state,
          try sides[1].timeline.exactState(at: sides[1].event).state)
      }
      if sides[0].timeline === sides[1].timeline {
        return try Differ.diff(
          sides[0].timeline, from: sides[0].event, to: sides[1].event,
          context: arguments.context, selectionLists: arguments.json)
      }
      return Differ.diff(
        try sides[0].timeline.state(at: sides[0].event),
        try sides[1].timeline.state(at: sides[1].event))
    }
    if arguments.json {
      io.out.bytes(
        JSONWriter.line { w in
          for (key, side) in zip(["from", "to"], sides) {
            w.key(key)
            w.beginObject()
            w.field("log", side.path)
            w.field("event", side.event)
            w.endObject()
          }
          w.field("identical", diff.isEmpty)
          w.field("exact", !inexact)
          w.field("changes", diff.changeCount)
          w.key("diff")
          DiffText.write(diff, to: &w)
        })
    } else {
      let style = io.style
      let label = { (i: Int) in
        inexactSides[i] ? "  " + style.yellow("(not the recorded state)") : ""
      }
      io.out.line(style.bold("--- \(sides[0].path) at event \(sides[0].event)") + label(0))
      io.out.line(style.bold("+++ \(sides[1].path) at event \(sides[1].event)") + label(1))
      DiffText.print(diff, context: arguments.context, style: style, into: io.out)
    }
    if inexact || sides.contains(where: { $0.timeline.readStoppedShort }) {
      return ExitCode.damaged
    }
    return ExitCode.success
  }
}
