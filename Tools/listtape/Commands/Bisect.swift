import Foundation
import ListTapeInvestigate
import ListTapeJSON
import ListTapeModel
import ListTapeRead
import ListTapeStore

/// `listtape bisect LOG --where EXPR | --run CMD`: the first event where the list went wrong.
enum BisectCommand: Command {
  struct Arguments: ParsableArguments {
    var log = ""
    var query: Query?
    var command: String?
    var json = false
  }

  static let spec = CommandSpec<Arguments>(
    name: "bisect",
    abstract: "Find the first event at which a predicate holds, by binary search.",
    discussion: """
      Assumes the predicate keeps holding once it holds. Prints the first event N where it \
      holds (the first bad event), the boundary (false at N-1, true at N), that event and the \
      list there. Every probe is logged on standard error as `probe N: good|bad|skip \
      (purpose)`; if a probe after N shows the predicate false again it warns and suggests \
      `listtape find`, which does not assume monotonicity.

      --run CMD runs CMD through /bin/sh with the state JSON on standard input and \
      LISTTAPE_EVENT and LISTTAPE_LOG in its environment, using git bisect's exit codes: 0 \
      good, 125 skip, any other 1...127 bad; 128 or more, or a signal, aborts (exit 74). \
      When skipped events hide the answer, the range of candidates is printed.

      Exit status: 0 found, 1 the predicate never holds, 64 a malformed expression (the \
      message names the column), 74 the check could not run or aborted, 2 damaged log.
      """,
    arguments: [.log(\.log)],
    options: [
      .where(\.query),
      .option(
        \.command, "run", value: "cmd",
        help: "A shell command that judges the state JSON on its standard input (exit 0 "
          + "good, 125 skip, 1...127 bad)."),
      .flag(\.json, "json", help: "Print every probe and the result as JSON Lines."),
    ])

  static func run(_ arguments: Arguments, _ io: IO) throws(CLIError) -> Int32 {
    try requirePredicate(arguments.query, arguments.command)
    let timeline = try openTimeline(arguments.log)
    warnIfDamaged(timeline)
    let report = Report(arguments: arguments, timeline: timeline, io: io)
    let result: BisectResult
    if let query = arguments.query {
      result = try replaying { () throws(StoreError) in
        try Bisect.run(timeline, where: query, onProbe: report.probe)
      }
    } else {
      let check = ExternalCheck(command: arguments.command ?? "", logPath: arguments.log)
      do {
        result = try Bisect.run(timeline, check: check.verdict, onProbe: report.probe)
      } catch {
        switch error {
        case .timeline(let e): throw CLIError(e)
        case .check(let e): throw .failure(e.message, code: ExitCode.io)
        }
      }
    }
    report.warnIfNotMonotonic(result)
    if arguments.json {
      report.json(result)
    } else {
      report.text(result)
    }
    if timeline.readIncompletely { return ExitCode.damaged }
    return result.first == nil ? ExitCode.notFound : ExitCode.success
  }

  /// A bisect's probes, warnings and answer, for a person or as JSON Lines.
  struct Report {
    let arguments: Arguments
    let timeline: Timeline
    let io: IO

    /// What the answer is about, and the words for its two verdicts.
    var subject: String { arguments.query?.description ?? "the check" }
    var holds: String { arguments.query == nil ? "bad" : "true" }
    var fails: String { arguments.query == nil ? "good" : "false" }

    func word(_ v: Verdict?) -> String {
      switch v {
      case .bad?: return holds
      case .good?: return fails
      case .skip?: return "skipped"
      case nil: return "not probed"
      }
    }

    /// Each probe as it is made: on standard error, or a JSON line on standard output.
    func probe(_ p: BisectProbe) {
      let why = Self.purpose(p.purpose) + (p.exact ? "" : ", not the recorded state")
      guard arguments.json else {
        Diagnostics.line("probe \(p.event): \(p.verdict.rawValue) (\(why))")
        return
      }
      io.out.bytes(
        JSONWriter.line { w in
          w.field("event", p.event)
          w.field("verdict", p.verdict.rawValue)
          w.field("purpose", Self.purpose(p.purpose))
          if !p.exact { w.field("exact", false) }
        })
    }

    /// How a probe's purpose reads in the probe log.
    static func purpose(_ purpose: ProbePurpose) -> String {
      switch purpose {
      case .boundary: return "boundary"
      case .search: return "search"
      case .scan: return "scan"
      case .monotonicCheck: return "monotonic check"
      }
    }

    func warnIfNotMonotonic(_ result: BisectResult) {
      guard !result.contradictions.isEmpty, let first = result.first else { return }
      let list = result.contradictions.prefix(5).map(String.init).joined(separator: ", ")
      let hint =
        arguments.query.map {
          "listtape find \(shellQuoted(arguments.log)) --where \(shellQuoted($0.description))"
        } ?? "listtape find"
      Diagnostics.line(
        "listtape: warning: \(subject) is not monotonic: \(fails) again at "
          + "\(result.contradictions.count == 1 ? "event" : "events") \(list) after \(holds) "
          + "at \(first); the answer is one place where it turns \(holds)")
      Diagnostics.line("  List every change with: \(hint)")
    }

    func json(_ result: BisectResult) {
      io.out.bytes(
        JSONWriter.line { w in
          w.field("first", result.first)
          w.key("candidates")
          if let c = result.candidates {
            w.beginArray()
            w.int(c.lowerBound)
            w.int(c.upperBound)
            w.endArray()
          } else {
            w.null()
          }
          w.key("boundary")
          if let n = result.first {
            w.beginObject()
            w.key("before")
            if n > 0, let v = result.verdict(at: n - 1) { w.string(v.rawValue) } else { w.null() }
            w.field("at", result.verdict(at: n)?.rawValue ?? Verdict.bad.rawValue)
            w.endObject()
          } else {
            w.null()
          }
          w.field("monotonic", result.contradictions.isEmpty)
          w.field("exact", result.exact)
          w.key("contradictions")
          w.beginArray()
          for n in result.contradictions { w.int(n) }
          w.endArray()
          w.field("probes", result.probes.count)
          w.field("seeks", result.seeks)
          w.field("folded", result.folded)
          w.recorded(result.eventAtFirst)
          w.key("state")
          if let state = result.stateAtFirst, let n = result.first {
            state.writeJSON(event: n, to: &w)
          } else {
            w.null()
          }
        })
    }

    func text(_ result: BisectResult) {
      let out = io.out
      let style = io.style
      guard let n = result.first, let state = result.stateAtFirst else {
        let judged = result.probes.filter { $0.verdict != .skip }
        if judged.isEmpty {
          out.line("every event probed was skipped: the check could not judge any state")
        } else if !result.exact, let last = judged.map(\.event).max() {
          // The states after the last one judged are not the recorded ones.
          out.line(
            (arguments.query == nil
              ? "no bad event through event \(last): the check says good there"
              : "\(subject) does not hold through event \(last): false there")
              + "; " + Failures.notJudged(after: last, timeline))
        } else {
          out.line(
            arguments.query == nil
              ? "no bad event: the check says good at the last event \(timeline.eventCount)"
              : "\(subject) never holds: false at the last event \(timeline.eventCount)")
        }
        return
      }
      let what = arguments.query == nil ? "first bad event" : "first event where \(subject) holds"
      if let c = result.candidates {
        let hide =
          result.exact
          ? "skipped events hide which"
          : "states that are not the recorded ones, after events lost in a salvage, hide which"
        out.line(
          style.bold("\(what): one of \(c.lowerBound)...\(c.upperBound)")
            + " (\(hide); \(holds) at \(n))")
      } else if !result.exact {
        out.line(style.bold("\(what): \(n)") + " (not exact: \(Failures.restsOn(n, timeline)))")
      } else {
        out.line(style.bold("\(what): \(n)"))
      }
      if n == 0 {
        out.line("boundary: \(holds) at 0, the empty list")
      } else {
        out.line(
          "boundary: \(word(result.verdict(at: n - 1))) at \(n - 1), "
            + "\(word(result.verdict(at: n))) at \(n)")
      }
      out.line(
        style.dim(
          "\(Render.plural(result.probes.count, "probe")), \(Render.plural(result.seeks, "seek")), "
            + "\(Render.plural(result.folded, "event")) folded"))
      let event = result.eventAtFirst
      if let event { out.line(Render.event(event, number: n, style: style)) }
      out.line()
      out.line(Render.header(event: n, of: timeline.eventCount, event: event, style: style))
      Render.state(state, all: false, style: style, into: out)
    }
  }
}

/// `text` quoted for a POSIX shell, so a printed command can be pasted as is.
func shellQuoted(_ text: String) -> String {
  let safe = text.allSatisfy { $0.isLetter || $0.isNumber || "-_./:=@%+,".contains($0) }
  if safe && !text.isEmpty { return text }
  return "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
}
