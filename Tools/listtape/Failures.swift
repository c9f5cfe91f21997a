import ListTapeInvestigate
import ListTapeLog
import ListTapeStore

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
        return "cannot upgrade a damaged log (salvage it first): \(damage) (\(path))"
      }
      return "cannot upgrade a log that lost \(lost) events in a salvage: their numbers would "
        + "change (\(path))"
    case .afterGap(let n, let from, let path):
      return "event \(n) follows lost events and cannot be decoded before event \(from) (\(path))"
    case .eventOutOfRange(let n, let lowest, let last, let path):
      return "event \(n) is out of range \(lowest)...\(last) (\(path))"
    case .noSuchMark(let label, let path):
      return "no mark \"\(label)\" in \(path)"
    case .notATime(let text):
      return "\"\(text)\" is not an ISO 8601 time (like 2026-11-29T12:00:00Z)"
    case .notAPoint(let text):
      return "\"\(text)\" is not an event number, mark:LABEL or time:ISO8601"
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
    case .eventOutOfRange, .notATime, .notAPoint: return ExitCode.usage
    case .noSuchMark: return ExitCode.notFound
    case .outputExists: return ExitCode.cannotCreate
    case .unusablePath, .nothingToResume: return ExitCode.usage
    case .undecodableIdentifier: return ExitCode.malformed
    }
  }

  static func exitCode(_ error: LogError) -> Int32 {
    switch error.kind {
    case .io:
      // ENOENT, EACCES and EISDIR at open time: the file cannot be opened at all.
      let cannotOpen = error.errno == 2 || error.errno == 13 || error.errno == 21
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

  /// The warnings for a log whose reading stops early or that lost events to a salvage.
  static func warnings(_ timeline: Timeline) -> [String] {
    var out: [String] = []
    if let damage = timeline.damage { out.append("\(damage) (\(timeline.path))") }
    let gaps = timeline.gaps
    if !gaps.isEmpty {
      let ranges = gaps.prefix(5).map { "\($0.firstEvent)...\($0.firstEvent + $0.count - 1)" }
      out.append(
        "salvaged log: events \(ranges.joined(separator: ", "))\(gaps.count > 5 ? ", …" : "") "
          + "were lost; states after a gap are exact only from the next checkpoint on "
          + "(\(timeline.path))")
    }
    return out
  }
}
