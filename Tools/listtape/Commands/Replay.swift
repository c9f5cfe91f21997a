import Foundation
import ListTapeInvestigate
import ListTapeJSON
import ListTapeModel
import ListTapeRead
import ListTapeStore

/// `listtape replay LOG`: folds the log and reports every fault.
enum ReplayCommand: Command {
  struct Arguments: ParsableArguments {
    var log = ""
    var to: Point?
    var strict = false
    var json = false
  }

  static let spec = CommandSpec<Arguments>(
    name: "replay",
    abstract: "Fold a log from the start and report every fault.",
    discussion: """
      Prints each fault as `event N: OP: reason` on standard output, then a summary: events \
      folded, faults, rows in the final state, elapsed time. Exit status: 0 without faults, 3 \
      with faults, 2 when the log is damaged (the readable part is still replayed).
      """,
    arguments: [.log(\.log)],
    options: [
      .option(
        \.to, "to", value: "point", help: "Stop after this event: N, mark:LABEL or time:ISO8601.",
        defaultText: "the last event"),
      .flag(\.strict, "strict", help: "Stop at the first fault."),
      .flag(\.json, "json", help: "Print the faults and the summary as one JSON object."),
    ])

  static func run(_ arguments: Arguments, _ io: IO) throws(CLIError) -> Int32 {
    let timeline = try openTimeline(arguments.log)
    warnIfDamaged(timeline)
    let total = timeline.eventCount
    let through = try resolve(arguments.to, in: timeline, for: self, option: "--to")
    let strict = arguments.strict
    let json = arguments.json
    let out = io.out
    let style = io.style
    // Kept for --json only (its object lists them); the text prints each as it comes, so
    // its memory does not grow with the log's faults.
    var faults: [(event: Int, op: String, site: String?, reason: String)] = []
    var faultCount = 0
    let progress = Progress("replaying", events: through)
    let clock = ContinuousClock()
    let start = clock.now
    // States that are not the recorded ones (after events lost in a salvage) are not
    // folded: their faults would be the gap's, not the app's.
    let result = try replaying { () throws(StoreError) in
      try timeline.forEachExactState(through: through, progress: progress.update) {
        ops, i, fault, state in
        guard let fault else { return true }
        let n = ops.seqs[i]
        let site = ops.site(i, state.ids)
        faultCount += 1
        if json {
          faults.append((n, ops.name(i), site, fault.description))
        } else {
          progress.finish()
          // Built in the output's buffer: a session's thousands of faults are formatted on
          // the fold's thread, and a `String` per piece was 5 % of a replay.
          out.line(building: { bytes in
            style.red(into: &bytes) { appendFaultLine(n, ops.name(i), fault, site: site, to: &$0) }
          })
        }
        return !strict
      }
    }
    progress.finish()
    let elapsed = clock.now - start
    let seconds =
      Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    let state = result.state ?? ListState()
    let stopped = strict && faultCount > 0
    // Where the fold ended: the last event folded when --strict stopped it, else --to.
    let end = stopped ? result.stoppedAt : through
    let skipped = timeline.notReplayed(through: end)
    if json {
      out.bytes(
        JSONWriter.line { w in
          w.field("events", total)
          w.field("through", end)
          w.field("faults", faultCount)
          w.key("faultsFound")
          w.beginArray()
          for f in faults {
            writeFault(event: f.event, op: f.op, site: f.site, reason: f.reason, to: &w)
          }
          w.endArray()
          // Counts: `sections` and `selected` are the state JSON's lists (docs/json.md).
          w.field("sectionCount", state.numberOfSections)
          w.field("itemCount", state.numberOfAllItems)
          w.field("visibleCount", state.numberOfItems)
          w.field("selectedCount", state.numberOfSelectedItems)
          w.field("stoppedAtFault", stopped)
          w.field("damaged", timeline.readStoppedShort)
          w.field("exact", result.state != nil || stopped)
          w.key("notReplayed")
          w.beginArray()
          for range in skipped {
            w.beginArray()
            w.int(range.lowerBound)
            w.int(range.upperBound)
            w.endArray()
          }
          w.endArray()
          w.field("seconds", seconds)
        })
    } else {
      var line = "replayed \(Render.plural(end, "event"))"
      if end < total { line += " of \(Render.count(total))" }
      line += ": "
      line +=
        faultCount == 0
        ? style.green("no faults") : style.red(Render.plural(faultCount, "fault"))
      if stopped { line += " (stopped at the first, --strict)" }
      if result.state != nil || stopped {
        line += "; \(Render.plural(state.numberOfSections, "section")), "
        line += "\(Render.plural(state.numberOfAllItems, "item")) "
        line += "(\(Render.count(state.numberOfItems)) visible, "
        line += "\(Render.count(state.numberOfSelectedItems)) selected)"
      } else {
        line += "; the state at event \(end) is not the recorded one"
      }
      if !skipped.isEmpty {
        line +=
          "; not replayed (states after lost events): "
          + skipped.map { "\($0.lowerBound)...\($0.upperBound)" }.joined(separator: ", ")
      }
      line +=
        " in \(seconds < 1 ? Render.decimal(seconds * 1000, 1) + " ms" : Render.decimal(seconds, 2) + " s")"
      out.line(line)
    }
    if timeline.readStoppedShort || !skipped.isEmpty { return ExitCode.damaged }
    return faultCount == 0 ? ExitCode.success : ExitCode.faults
  }
}

/// A fault as the protocol prints it: `event N: OP: reason`, then where the event was
/// made when it says (`  at File.swift:12 f()`).
func faultLine(_ n: Int, _ op: String, _ fault: ListFault, site: String? = nil) -> String {
  var bytes: [UInt8] = []
  appendFaultLine(n, op, fault, site: site, to: &bytes)
  return String(decoding: bytes, as: UTF8.self)
}

/// `faultLine`'s text appended to `bytes` as UTF-8.
func appendFaultLine(
  _ n: Int, _ op: String, _ fault: ListFault, site: String?, to bytes: inout [UInt8]
) {
  bytes.append(contentsOf: "event ".utf8)
  DecimalText.append(Int64(n), to: &bytes)
  bytes.append(contentsOf: ": ".utf8)
  bytes.append(contentsOf: op.utf8)
  bytes.append(contentsOf: ": ".utf8)
  Visible.append(fault.description.utf8, to: &bytes)
  if let site {
    bytes.append(contentsOf: "  at ".utf8)
    Visible.append(site.utf8, to: &bytes)
  }
}

/// A fault as a JSON object: `{"event":N,"op":OP,"site":…,"reason":…}`.
func writeFault(event n: Int, op: String, site: String?, reason: String, to w: inout JSONWriter) {
  w.beginObject()
  w.field("event", n)
  w.field("op", op)
  w.field("site", site)
  w.field("reason", reason)
  w.endObject()
}
