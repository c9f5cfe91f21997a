import Foundation
import ListTapeInvestigate
import ListTapeJSON
import ListTapeModel
import ListTapeStore

/// `<log> ...`: one log, or several logs and directories of `.ltape` files.
let manyLogsArgument = ArgumentSpec(
  name: "log", help: "The log file; several logs, or directories of .ltape files, at once.",
  repeats: true)

/// The logs among `paths` (`ManyLogs.files`); exit 66 when there is none to read at all.
func openable(_ paths: [String]) throws(CLIError) -> (files: [String], missing: [LogFailure]) {
  let (files, missing) = ManyLogs.files(paths)
  if files.isEmpty, let first = missing.first {
    throw .failure(first.error.description, code: ExitCode.cannotOpen)
  }
  return (files, missing)
}

/// `listtape find --where EXPR LOG LOG...`: the first event at which EXPR holds in each log.
enum FindManyCommand {
  static let discussion = """
    With several logs, or directories (searched for .ltape files), prints for each log \
    where EXPR holds `LOG: event N` and that event (the first event after which it holds; \
    event 0 is the empty list), then a count; the logs are searched in parallel, one per \
    core. A log that cannot be read, or is damaged, is reported on standard error and the \
    others go on. Exit status: 0 when some log matched, 1 when none did.
    """

  static func run(_ query: Query?, faults: Bool, logs: [String], invocation: Invocation)
    throws(CLIError) -> Int32
  {
    guard let query, !faults else {
      throw invocation.usageError("'--faults' takes one log; with several use '--where <expr>'")
    }
    guard query.isBoolean else {
      throw invocation.usageError(
        "The expression for '--where <expr>' is not a predicate: with several logs find "
          + "reports where it first holds; compare the value with == != < <= > >=")
    }
    let (files, missing) = try openable(logs)
    let json = invocation.flag("json")
    let out = invocation.out
    let style = invocation.style
    for failure in missing { report(failure, json: json, out: out) }
    let progress = LogsProgress("searching", total: files.count)
    var problems = missing.count
    let matched = ManyLogs.find(query, in: files) { result in
      defer { progress.step() }
      progress.finish()
      switch result {
      case .failure(let failure):
        problems += 1
        report(failure, json: json, out: out)
      case .success(let m):
        if let problem = m.problem {
          problems += 1
          if !json { Diagnostics.line("listtape: warning: \(problem)") }
        }
        guard let event = m.event else {
          if json, let problem = m.problem { line(m.path, event: nil, op: nil, problem, out) }
          return
        }
        if json {
          line(m.path, event: event, op: m.op, m.problem, out)
        } else {
          let what =
            m.op.map { Render.event($0, number: nil, style: style) }
            ?? style.dim("(holds on the empty list)")
          out.line(style.bold("\(m.path): event \(event)") + "  " + what)
        }
      }
      out.flush()
    }
    progress.finish()
    let total = files.count + missing.count
    if json {
      var w = JSONWriter()
      w.beginObject()
      w.key("expression")
      w.string(query.description)
      w.key("logs")
      w.int(total)
      w.key("matched")
      w.int(matched)
      w.key("problems")
      w.int(problems)
      w.endObject()
      w.endLine()
      out.bytes(w.bytes)
    } else {
      var summary = "\(Render.count(matched)) of \(Render.plural(total, "log")) match"
      if problems > 0 { summary += " (\(Render.plural(problems, "log")) damaged or unreadable)" }
      out.line(style.dim(summary))
    }
    return matched > 0 ? ExitCode.success : ExitCode.notFound
  }

  /// One JSON line for a log: where the expression holds, and why it was read only in part.
  static func line(_ path: String, event: Int?, op: Event?, _ problem: String?, _ out: Output) {
    var w = JSONWriter()
    w.beginObject()
    w.key("log")
    w.string(path)
    w.key("event")
    if let event { w.int(event) } else { w.null() }
    w.key("op")
    if let op { op.encode(to: &w) } else { w.null() }
    if let problem {
      w.key("damaged")
      w.string(problem)
    }
    w.endObject()
    w.endLine()
    out.bytes(w.bytes)
  }

  /// A log that could not be read: a JSON line, or a warning on standard error.
  static func report(_ failure: LogFailure, json: Bool, out: Output) {
    guard json else {
      Diagnostics.line("listtape: warning: skipped \(failure.path): \(failure.error)")
      return
    }
    var w = JSONWriter()
    w.beginObject()
    w.key("log")
    w.string(failure.path)
    w.key("error")
    w.string(failure.error.description)
    w.endObject()
    w.endLine()
    out.bytes(w.bytes)
  }
}

/// `listtape stats LOG LOG...`: the figures of many logs added up.
enum StatsManyCommand {
  static let discussion = """
    With several logs, or directories (searched for .ltape files), adds them up: logs, \
    events, faults by reason, ops, bytes and time span, reading the logs in parallel. A \
    log that cannot be read, or is damaged, is named and the others are counted. Exit \
    status: 0, or 2 when some log is damaged or unreadable.
    """

  static func run(logs: [String], invocation: Invocation) throws(CLIError) -> Int32 {
    let (files, missing) = try openable(logs)
    let progress = LogsProgress("reading", total: files.count)
    var totals = ManyLogs.stats(files) { _, _ in progress.step() }
    progress.finish()
    totals.damaged = missing.map { ($0.path, $0.error.description) } + totals.damaged
    let out = invocation.out
    if invocation.flag("json") {
      var w = JSONWriter()
      w.beginObject()
      w.key("logs")
      w.int(files.count + missing.count)
      w.key("read")
      w.int(totals.logs)
      w.key("events")
      w.int(totals.events)
      w.key("faults")
      w.int(totals.faults)
      w.key("faultsByReason")
      counts(totals.faultsByReason.map { ($0.reason, $0.count) }, &w)
      w.key("ops")
      counts(totals.opCounts.map { ($0.op, $0.count) }, &w)
      w.key("marks")
      w.int(totals.marks)
      w.key("bytes")
      w.int(totals.bytes)
      w.key("firstTime")
      if let t = totals.firstTime { w.int(t) } else { w.null() }
      w.key("lastTime")
      if let t = totals.lastTime { w.int(t) } else { w.null() }
      w.key("damaged")
      w.beginArray()
      for (path, problem) in totals.damaged {
        w.beginObject()
        w.key("log")
        w.string(path)
        w.key("problem")
        w.string(problem)
        w.endObject()
      }
      w.endArray()
      w.endObject()
      w.endLine()
      out.bytes(w.bytes)
    } else {
      render(totals, logs: files.count + missing.count, style: invocation.style, into: out)
    }
    return totals.damaged.isEmpty ? ExitCode.success : ExitCode.damaged
  }

  static func counts(_ list: [(String, Int)], _ w: inout JSONWriter) {
    w.beginObject()
    for (key, n) in list {
      w.key(key)
      w.int(n)
    }
    w.endObject()
  }

  static func render(_ t: StatsTotals, logs: Int, style: Style, into out: Output) {
    func row(_ label: String, _ value: String) { out.line("  " + label.padding(13) + value) }
    func table(_ list: [(String, Int)]) {
      let width = list.map { Render.count($0.1).count }.max() ?? 1
      for (name, n) in list {
        let share = t.events > 0 ? Double(n) * 100 / Double(t.events) : 0
        let text = Render.count(n)
        out.line(
          "    " + name.padding(22) + String(repeating: " ", count: width - text.count) + text
            + "  " + style.dim(Render.decimal(share, 1).leftPadding(5) + "%"))
      }
    }
    var head = Render.plural(logs, "log")
    if !t.damaged.isEmpty { head += " (\(t.damaged.count) damaged or unreadable)" }
    out.line(style.bold(head))
    row("events", Render.count(t.events))
    row("faults", t.faults == 0 ? "0" : style.red(Render.count(t.faults)))
    table(t.faultsByReason.map { ($0.reason, $0.count) })
    let perEvent = t.events > 0 ? Double(t.bytes) / Double(t.events) : 0
    row("bytes", "\(Render.count(t.bytes)) (\(Render.decimal(perEvent, 1)) bytes/event)")
    row("marks", Render.count(t.marks))
    if let first = t.firstTime, let last = t.lastTime {
      row("time span", "\(Render.time(first)) → \(Render.time(last))")
    } else {
      row("time span", "-")
    }
    if !t.opCounts.isEmpty {
      out.line("  ops")
      table(t.opCounts.map { ($0.op, $0.count) })
    }
    for (path, problem) in t.damaged {
      out.line(style.red("  damaged: \(path): \(problem)"))
    }
  }
}

/// `searching 12/1,000 logs` on standard error while it is a terminal, redrawn a few
/// times a second; called from the workers one at a time.
final class LogsProgress: @unchecked Sendable {
  private let label: String
  private let total: Int
  private let enabled: Bool
  private var done = 0
  private var lastDraw: UInt64 = 0
  private var drawn = false

  init(_ label: String, total: Int) {
    self.label = label
    self.total = total
    enabled = Terminal.isTTY(2) && total > 1
  }

  func step() {
    done += 1
    guard enabled else { return }
    let now = DispatchTime.now().uptimeNanoseconds
    guard now - lastDraw > 100_000_000 else { return }
    lastDraw = now
    drawn = true
    Diagnostics.write("\r\u{1B}[K\(label) \(done)/\(Render.plural(total, "log"))")
  }

  /// Erases the line before other output goes to the terminal.
  func finish() {
    guard drawn else { return }
    Diagnostics.write("\r\u{1B}[K")
    drawn = false
  }
}
