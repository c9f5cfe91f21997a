import ListTapeRead

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What `events --follow` and `scrub --follow` share: which logs can be followed, how
/// often they are looked at, and how a follow that the log's path ended is reported
/// (docs/cli.md, "Following a log").
enum Following {
  /// Milliseconds between two looks at the file: a new frame shows at most this long (plus
  /// its reading) after the writer wrote it.
  static let interval: Int32 = 50

  /// Refuses, as a usage error of `command`, a log that cannot be read again from an
  /// offset: standard input, a pipe, a device.
  static func check<C: Command>(_ path: String, for command: C.Type) throws(CLIError) {
    if path == "-" {
      throw command.usageError("'--follow' needs a log file: standard input cannot be followed")
    }
    var info = stat()
    if stat(path, &info) == 0, info.st_mode & S_IFMT != S_IFREG {
      throw command.usageError("'--follow' needs a log file: \(path) is not a regular file")
    }
  }

  /// The error a follow ends with when the log's path stopped naming it (exit 66, as for an
  /// input that cannot be opened); nil for damage, which each command reports its way.
  static func failure(_ end: LogFollower.End, _ timeline: Timeline) -> CLIError? {
    let after = "stopped after event \(timeline.eventCount)"
    switch end {
    case .removed:
      return .failure(
        "the log was removed while it was followed; \(after) (\(timeline.path))",
        code: ExitCode.cannotOpen)
    case .replaced:
      return .failure(
        "the log was replaced by another file while it was followed; \(after) "
          + "(\(timeline.path))",
        code: ExitCode.cannotOpen)
    case .damaged:
      return nil
    }
  }
}
