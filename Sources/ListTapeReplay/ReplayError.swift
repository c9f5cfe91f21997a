import ListTapeLog
import ListTapeModel

/// Every failure of the replay tools, with the protocol's exit code and a one-line message
/// that names the file, byte offset or event number.
public struct ReplayError: Error, Sendable, CustomStringConvertible {
  public enum Kind: Sendable, Equatable {
    /// The file cannot be opened (missing, unreadable).
    case cannotOpen
    /// The log is damaged where the work needs to read.
    case damaged
    /// The file is not a ListTape log, or a version this build cannot read.
    case notALog
    /// A read, write or sync failed.
    case io
    /// Another process is recording into the log.
    case locked
    /// A mark, time or event the caller asked for does not exist.
    case notFound
    /// The request itself is wrong (an event number out of range, a bad time).
    case usage
    /// An event of a salvaged log that follows lost events and precedes the next reset
    /// point: it cannot be decoded. Scans skip such events.
    case afterGap
  }

  public var kind: Kind
  /// One line: what went wrong and where.
  public var description: String

  public init(_ kind: Kind, _ description: String) {
    self.kind = kind
    self.description = description
  }

  /// The protocol's exit code for this failure.
  public var exitCode: Int32 {
    switch kind {
    case .cannotOpen: return 66
    case .damaged, .notALog, .afterGap: return 2
    case .io, .locked: return 74
    case .notFound: return 1
    case .usage: return 64
    }
  }

  init(_ e: LogError) {
    switch e.kind {
    case .io:
      // ENOENT/EACCES at open time mean the file cannot be opened at all.
      let cannotOpen = e.errno == 2 || e.errno == 13 || e.errno == 21
      self.init(cannotOpen ? .cannotOpen : .io, e.description)
    case .locked: self.init(.locked, e.description)
    case .notALog, .incompleteHeader, .unsupportedVersion: self.init(.notALog, e.description)
    case .damaged, .tooLarge: self.init(.damaged, e.description)
    case .poisoned, .closed, .exists: self.init(.io, e.description)
    }
  }

  /// A record or checkpoint that passed the log's checksums but does not decode.
  static func undecodable(_ what: String, event: Int, path: String, _ e: CodecError) -> ReplayError
  {
    let event = e.event ?? event
    let subject = what == "event" ? "event \(event)" : "\(what) at event \(event)"
    return ReplayError(.damaged, "\(subject) does not decode: \(e) (\(path))")
  }
}
