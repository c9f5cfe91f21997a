import Foundation
import ListTapeInvestigate
import ListTapeJSON
import ListTapeModel
import ListTapeStore

/// Whether the logs named on a command line mean a scan of many: several paths, or a
/// directory.
func meansManyLogs(_ paths: [String]) -> Bool {
  paths.count > 1 || paths.first.map(ManyLogs.isDirectory) == true
}

/// The logs among `paths` (`ManyLogs.files`); exit 66 when there is none to read at all.
func openable(_ paths: [String]) throws(CLIError) -> (files: [String], missing: [LogProblem]) {
  let (files, missing) = ManyLogs.files(paths)
  if files.isEmpty, let first = missing.first {
    throw .failure(Failures.message(first), code: ExitCode.cannotOpen)
  }
  return (files, missing)
}

extension Failures {
  /// Why `-` (with no file of that name) is no log: a reader of standard input would expect
  /// it there, but a log is read again from offsets.
  static let standardInputIsNoLog =
    "cannot open -: a log is read from its file (seeks read it again from offsets), and "
    + "standard input cannot be one: name the log's file (./- for a file named '-')"

  /// Why a log among many was read only in part, or not at all.
  static func message(_ problem: LogProblem) -> String {
    switch problem.reason {
    case .noSuchFile:
      if problem.path == "-" { return standardInputIsNoLog }
      return "cannot open \(problem.path): no such file"
    case .noLogs: return "cannot open \(problem.path): no .ltape files in it"
    case .unreadable(let error): return message(error)
    case .damaged(let damage): return "\(damage) (\(problem.path))"
    }
  }
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

  static func run(_ arguments: FindCommand.Arguments, _ io: IO) throws(CLIError) -> Int32 {
    guard let query = arguments.query, !arguments.faults else {
      throw FindCommand.usageError("'--faults' takes one log; with several use '--where <expr>'")
    }
    guard query.isBoolean else {
      throw FindCommand.usageError(
        "The expression for '--where <expr>' is not a predicate: with several logs find "
          + "reports where it first holds; compare the value with == != < <= > >=")
    }
    let (files, missing) = try openable(arguments.logs)
    let json = arguments.json
    let out = io.out
    let style = io.style
    for problem in missing { report(problem, json: json, out: out) }
    let progress = LogsProgress("searching", total: files.count)
    var problems = missing.count
    let matched = ManyLogs.find(query, in: files) { result in
      defer { progress.step() }
      progress.finish()
      switch result {
      case .failure(let problem):
        problems += 1
        report(problem, json: json, out: out)
      case .success(let m):
        let damage = m.damage.map {
          Failures.message(LogProblem(path: m.path, reason: .damaged($0)))
        }
        if let damage {
          problems += 1
          if !json { Diagnostics.line("listtape: warning: \(damage)") }
        }
        // A salvaged log: states that are not the recorded ones are never judged.
        let unjudged =
          m.exact
          ? nil
          : "states after events lost in a salvage were not judged"
            + (m.event.map { " before event \($0)" } ?? "")
        if json {
          if m.event != nil || damage != nil || unjudged != nil {
            out.bytes(
              JSONWriter.line { w in
                w.field("log", m.path)
                w.field("event", m.event)
                w.recorded(m.op)
                if let damage { w.field("problem", damage) }
                if !m.exact { w.field("exact", false) }
              })
          }
        } else if let event = m.event {
          let what =
            m.op.map { Render.event($0, number: nil, style: style) }
            ?? style.dim("(holds on the empty list)")
          let label = unjudged.map { "  " + style.yellow("(not exact: \($0))") } ?? ""
          out.line(style.bold("\(m.path): event \(event)") + "  " + what + label)
        } else if let unjudged {
          Diagnostics.line(
            "listtape: warning: \(m.path): no match among its recorded states; \(unjudged)")
        }
      }
      out.flush()
    }
    progress.finish()
    let total = files.count + missing.count
    if json {
      out.bytes(
        JSONWriter.line { w in
          w.field("expression", query.description)
          w.field("logs", total)
          w.field("matched", matched)
          w.field("problems", problems)
        })
    } else {
      var summary = "\(Render.count(matched)) of \(Render.plural(total, "log")) match"
      if problems > 0 { summary += " (\(Render.plural(problems, "log")) damaged or unreadable)" }
      out.line(style.dim(summary))
    }
    return matched > 0 ? ExitCode.success : ExitCode.notFound
  }

  /// A log that could not be read: a JSON line, or a warning on standard error.
  static func report(_ problem: LogProblem, json: Bool, out: Output) {
    guard json else {
      Diagnostics.line("listtape: warning: skipped \(problem.path): \(Failures.message(problem))")
      return
    }
    out.bytes(
      JSONWriter.line { w in
        w.field("log", problem.path)
        w.field("problem", Failures.message(problem))
      })
  }
}

/// `listtape stats LOG LOG...`: the figures of many logs added up.
enum StatsManyCommand {
  static let discussion = """
    With several logs, or directories (searched for .ltape files), adds them up: logs, \
    events, faults by kind, ops, bytes and time span, reading the logs in parallel. A \
    log that cannot be read, or is damaged, is named and the others are counted. Exit \
    status: 0, or 2 when some log is damaged or unreadable.
    """

  static func run(logs: [String], json: Bool, _ io: IO) throws(CLIError) -> Int32 {
    let (files, missing) = try openable(logs)
    let progress = LogsProgress("reading", total: files.count)
    var totals = ManyLogs.stats(files) { _, _ in progress.step() }
    progress.finish()
    totals.problems = missing + totals.problems
    let logs = files.count + missing.count
    if json {
      io.out.bytes(
        JSONWriter.line { w in
          w.field("logs", logs)
          w.field("read", totals.logs)
          w.field("events", totals.events)
          w.field("faults", totals.faults)
          w.key("faultsByReason")
          counts(totals.faultsByKind.map { ($0.kind.rawValue, $0.count) }, &w)
          w.key("ops")
          counts(totals.opCounts.map { ($0.op, $0.count) }, &w)
          w.field("marks", totals.marks)
          w.field("bytes", totals.bytes)
          w.field("firstTime", totals.firstTime)
          w.field("lastTime", totals.lastTime)
          w.field("problems", totals.problems.count)
          w.key("problemLogs")
          w.beginArray()
          for problem in totals.problems {
            w.beginObject()
            w.field("log", problem.path)
            w.field("problem", Failures.message(problem))
            w.endObject()
          }
          w.endArray()
        })
    } else {
      render(totals, logs: logs, style: io.style, into: io.out)
    }
    return totals.problems.isEmpty ? ExitCode.success : ExitCode.damaged
  }

  static func counts(_ list: [(String, Int)], _ w: inout JSONWriter) {
    w.beginObject()
    for (key, n) in list { w.field(key, n) }
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
    if !t.problems.isEmpty { head += " (\(t.problems.count) damaged or unreadable)" }
    out.line(style.bold(head))
    row("events", Render.count(t.events))
    row("faults", t.faults == 0 ? "0" : style.red(Render.count(t.faults)))
    table(t.faultsByKind.map { ($0.kind.rawValue, $0.count) })
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
    for problem in t.problems {
      out.line(style.red("  damaged: \(problem.path): \(Failures.message(problem))"))
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
