import ListTapeInvestigate
import ListTapeLog
import ListTapeRead
import ListTapeStore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The libraries' errors as the tool reports them: one line naming the file and the event
/// number or byte offset, and the protocol's exit code (section 4).
extension CLIError {
  init(_ error: StoreError) {
    self = .failure(Failures.message(error), code: Failures.exitCode(error))
  }
}

enum Failures {
  static func message(_ error: StoreError) -> String {
    switch error {
    case .log(let e):
      return e.description
    case .undecodableEvent(let n, let reason, let path):
      return "event \(n) does not decode: \(reason) (\(path))"
    case .undecodableCheckpoint(let n, let reason, let path):
      return "checkpoint at event \(n) does not decode: \(reason) (\(path))"
    case .undecodableDictionary(let n, let reason, let path):
      return "the dictionary before event \(n) does not decode: \(reason) (\(path))"
    case .undecodableIndex(let n, let reason, let path):
      return "the seek point after event \(n) does not decode: \(reason) (\(path))"
    case .unrecordableEvent(let n, let reason, let path):
      return "cannot record event \(n): \(reason.message) (\(path))"
    case .unrecordableCheckpoint(let n, let reason, let path):
      return "cannot write the checkpoint after event \(n): \(reason.message) (\(path))"
    case .incompleteLog(let path, let damage, let lost):
      if let damage {
        return "cannot upgrade a damaged log: \(damage) (\(path)); 'listtape salvage' writes "
          + "a log of every readable event, which upgrade takes"
      }
      if lost == 0 {
        return "cannot upgrade a log that lost a dictionary frame in a salvage: events after it "
          + "do not decode, and their numbers would change (\(path))"
      }
      return "cannot upgrade a log that lost \(Render.plural(lost, "event")) in a salvage: their "
        + "numbers would change (\(path))"
    case .afterGap(let n, let from, let path):
      return "event \(n) follows lost events and cannot be decoded before event \(from) (\(path))"
    case .eventOutOfRange(let n, let lowest, let last, let path):
      return "event \(n) is out of range \(lowest)...\(last) (\(path))"
    case .outputExists(let path):
      return "\(path) already exists; write a new log elsewhere (remove it or choose another name)"
    case .unusablePath(let path, let directory):
      return path.isEmpty
        ? "empty log path"
        : "relative log path '\(path)' would resolve against the working directory \(directory); "
          + "pass an absolute path"
    case .nothingToResume(let path):
      return "nothing to resume: the log has not failed (\(path))"
    case .undecodableIdentifier(let id, let path):
      return "\(path) names \"\(id)\", which the store's identifier type cannot read"
    }
  }

  /// A failure from a scan whose body may throw too.
  static func message(_ error: any Error) -> String {
    if let e = error as? StoreError { return message(e) }
    return "\(error)"
  }

  static func exitCode(_ error: StoreError) -> Int32 {
    switch error {
    case .log(let e): return exitCode(e)
    case .undecodableEvent, .undecodableCheckpoint, .undecodableDictionary, .undecodableIndex,
      .afterGap, .incompleteLog:
      return ExitCode.damaged
    case .unrecordableEvent: return ExitCode.malformed
    case .unrecordableCheckpoint: return ExitCode.io
    case .eventOutOfRange: return ExitCode.usage
    case .outputExists: return ExitCode.cannotCreate
    case .unusablePath, .nothingToResume: return ExitCode.usage
    case .undecodableIdentifier: return ExitCode.malformed
    }
  }

  static func exitCode(_ error: LogError) -> Int32 {
    switch error.kind {
    case .io:
      // ENOENT, EACCES, ENOTDIR, EISDIR and ELOOP at open time: the file cannot be opened
      // at all; ESPIPE: a pipe, socket or device where a log should be (`Posix.openFile`).
      let cannotOpen = [ENOENT, EACCES, ENOTDIR, EISDIR, ESPIPE, ELOOP].contains(error.errno)
      return cannotOpen ? ExitCode.cannotOpen : ExitCode.io
    case .notALog, .incompleteHeader, .unsupportedVersion, .damaged, .tooLarge:
      return ExitCode.damaged
    case .locked, .poisoned, .closed, .exists:
      return ExitCode.io
    }
  }

  /// Why `verify` found a log wanting.
  static func message(_ problem: VerifyProblem, path: String) -> String {
    switch problem {
    case .unreadable(let e): return e.description
    case .damage(let d): return d.description
    case .undecodable(let e): return message(e)
    case .checkpointDisagrees(let n):
      return "checkpoint after event \(n) disagrees with the fold of events 1...\(n) (\(path))"
    }
  }

  /// The warnings for a log whose reading stops early or that lost events to a salvage
  /// (docs/cli.md, "Damaged logs"): where reading stops, and for each gap which states are
  /// not the recorded ones.
  static func warnings(_ timeline: Timeline) -> [String] {
    var out: [String] = []
    if let damage = timeline.damage { out.append(warning(damage, in: timeline)) }
    return out + gapWarnings(timeline)
  }

  /// Where reading `timeline` stops, and what was read before.
  static func warning(_ damage: LogDamage, in timeline: Timeline) -> String {
    let read =
      timeline.eventCount == 0
      ? "no event is readable" : "only events 1...\(timeline.eventCount) are read"
    return "\(damage) (\(timeline.path)); \(read)"
  }

  /// What a salvage lost, and which states are therefore not the recorded ones.
  static func gapWarnings(_ timeline: Timeline) -> [String] {
    var out: [String] = []
    let gaps = timeline.gaps
    for (i, gap) in gaps.prefix(5).enumerated() {
      let first = Int(gap.firstEvent)
      var line = "salvaged log: \(what(gap)) lost; "
      let end = i + 1 < gaps.count ? Int(gaps[i + 1].firstEvent) - 1 : timeline.eventCount
      let probe = gap.events?.upperBound ?? first
      if case .inexact(_, let exactFrom) = timeline.exactness(at: probe), let exactFrom {
        line +=
          "states at events \(first)...\(exactFrom - 1) are not the recorded ones "
          + "(exact again from event \(exactFrom), a checkpoint)"
      } else {
        line +=
          "states at events \(first)...\(end) are not the recorded ones (no checkpoint "
          + "after the gap restores them)"
      }
      out.append(line + " (\(timeline.path))")
    }
    if gaps.count > 5 {
      out.append("salvaged log: \(gaps.count - 5) more gaps (\(timeline.path))")
    }
    return out
  }

  /// What a gap lost: `events 8,969...10,113`, or `a dictionary frame before event 602`
  /// (no event with it; the events of its segment do not decode).
  static func what(_ gap: LogGap) -> String {
    gap.events.map(events) ?? "a dictionary frame before event \(gap.firstEvent)"
  }

  /// `event 9` or `events 8,969...10,113`.
  static func events(_ range: ClosedRange<Int>) -> String {
    range.count == 1
      ? "event \(range.lowerBound)" : "events \(range.lowerBound)...\(range.upperBound)"
  }

  /// Why the states after event `last` were not judged: they are not the recorded ones.
  static func notJudged(after last: Int, _ timeline: Timeline) -> String {
    "the states after it are not the recorded ones and were not judged (\(lost(after: last, timeline)))"
  }

  /// An answer at event `n` that rests on a state that is not the recorded one.
  static func restsOn(_ n: Int, _ timeline: Timeline) -> String {
    "it rests on a state that is not the recorded one (\(lost(after: n - 1, timeline)))"
  }

  /// `events 8,969...10,113 were lost in a salvage; exact again from event 18,049`: the gap
  /// that makes the states after event `n` inexact.
  static func lost(after n: Int, _ timeline: Timeline) -> String {
    let probe =
      timeline.reader.exactStretch(containing: UInt64(max(n, 0))).map { Int($0.end) + 1 } ?? n + 1
    guard case .inexact(let gap, let exactFrom) = timeline.exactness(at: probe) else {
      return "events were lost in a salvage"
    }
    return "\(what(gap)) \(gap.count == 1 ? "was" : "were") lost in a salvage"
      + (exactFrom.map { "; exact again from event \($0)" } ?? "")
  }

  /// Says plainly that the state at `n` is not the recorded one, or nil when it is.
  static func inexactState(_ exactness: StateExactness, event n: Int, _ timeline: Timeline)
    -> String?
  {
    guard case .inexact(let gap, let exactFrom) = exactness else { return nil }
    let next = exactFrom.map { "; states are exact again from event \($0)" } ?? ""
    let why: String
    if let lost = gap.events, lost.contains(n) {
      why = "event \(n) was lost in a salvage (with \(events(lost)))"
    } else {
      why =
        "\(what(gap)) \(gap.count == 1 ? "was" : "were") lost in a salvage and no checkpoint "
        + "between them and event \(n) restores it"
    }
    return "the state at event \(n) is not the recorded one: \(why)\(next) (\(timeline.path))"
  }
}
