import Foundation
import ListTapeRead

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A one-shot command whose seek folded far on a 2.0 log without a usable index (`show`,
/// `diff`, ...) answers from the log's own checkpoints as before, then leaves the index to a
/// process of its own, started as it exits: the next command on that log seeks from the
/// index. On when standard error is a terminal (a person waiting); `LISTTAPE_BACKGROUND_INDEX`
/// `1` turns it on anyway, `0` off (docs/cli.md).
final class BackgroundIndex: @unchecked Sendable {
  static let shared = BackgroundIndex()

  /// The builder's command line: `listtape __build-index LOG`, never shown in help.
  static let command = "__build-index"

  private let lock = NSLock()
  private var logs: [String] = []

  /// Notes that a seek in `path` would have been served by an index.
  func want(_ path: String) {
    lock.withLock {
      if !logs.contains(path) { logs.append(path) }
    }
  }

  /// Starts a builder for each log noted, when the environment allows.
  func startBuilders(environment: [String: String]) {
    let logs = lock.withLock { self.logs }
    guard !logs.isEmpty else { return }
    switch environment["LISTTAPE_BACKGROUND_INDEX"] {
    case "0": return
    case "1": break
    default: guard Terminal.isTTY(2) else { return }
    }
    guard let program = Self.executablePath() else { return }
    for log in logs { Self.spawn(program, log) }
  }

  /// Starts `program __build-index LOG` in a process group of its own (a Ctrl-C at the
  /// prompt is not for it), reading and writing nothing.
  private static func spawn(_ program: String, _ log: String) {
    let absolute =
      log.hasPrefix("/") ? log : FileManager.default.currentDirectoryPath + "/" + log
    #if os(Linux)
    var actions = posix_spawn_file_actions_t()
    var attributes = posix_spawnattr_t()
    posix_spawn_file_actions_init(&actions)
    posix_spawnattr_init(&attributes)
    defer {
      posix_spawn_file_actions_destroy(&actions)
      posix_spawnattr_destroy(&attributes)
    }
    for fd: Int32 in [0, 1, 2] {
      posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0)
    }
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP))
    posix_spawnattr_setpgroup(&attributes, 0)
    let words: [String] = [program, command, absolute]
    let argv: [UnsafeMutablePointer<CChar>?] = words.map { strdup($0) } + [nil]
    defer { for a in argv { free(a) } }
    var pid: pid_t = 0
    _ = posix_spawn(&pid, program, &actions, &attributes, argv, environ)
    #else
    // Elsewhere (macOS, read and not built here) through Foundation, in the same group.
    let process = Process()
    process.executableURL = URL(fileURLWithPath: program)
    process.arguments = [command, absolute]
    process.standardInput = FileHandle.nullDevice
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try? process.run()
    #endif
  }

  /// This program's own file, to start again as the builder.
  private static func executablePath() -> String? {
    #if os(Linux)
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
    guard n > 0 else { return nil }
    return String(decoding: buffer[..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    #else
    return Bundle.main.executablePath
    #endif
  }

  /// `listtape __build-index LOG`: builds or extends LOG's index at a low priority, unless
  /// another builder holds the log's directory; prints nothing and exits 0 whatever happens
  /// (the index is only a cache: a failed build leaves the log as it was). A wrong command
  /// line (a person trying it) gets its usage and 64.
  static func child(_ args: [String]) -> Int32 {
    guard args.count == 1, let log = args.first, !log.hasPrefix("-") else {
      Diagnostics.line(
        "listtape: usage: listtape \(command) LOG (builds LOG's index quietly; commands "
          + "that seek start it themselves: docs/cli.md)")
      return ExitCode.usage
    }
    _ = nice(10)
    let directory = (log as NSString).deletingLastPathComponent
    let fd = open(directory.isEmpty ? "." : directory, O_RDONLY)
    guard fd >= 0 else { return ExitCode.success }
    defer { close(fd) }
    // One builder per directory at a time: a script running `show` in a loop starts one.
    guard flock(fd, LOCK_EX | LOCK_NB) == 0 else { return ExitCode.success }
    guard let timeline = try? openTimeline(log), timeline.formatMajor >= 2 else {
      return ExitCode.success
    }
    try? timeline.buildIndex()
    return ExitCode.success
  }
}
