import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Ctrl-C (SIGINT) or SIGTERM while a command writes its output: what it wrote in part is
/// removed, and the process exits 130 or 143 (128 + the signal, as a shell reports it).
/// Partial outputs are the temporary file `OutputFile` writes beside the output (with what
/// a library makes beside that: salvage's `.salvage-PID`, upgrade's `.upgrade-PID`, a new
/// log's `.new-…`), an export's staging directory, and the temporary index file a read
/// builds beside its log. The finished output, once in place, is never touched.
///
/// The signal handler only notes the signal (an atomic flag, and a byte on a pipe, both
/// async-signal-safe); a thread waiting on the pipe does the removal in ordinary code, then
/// ends the process. Putting a finished output in place (`placing`) waits if the flag is
/// set, so an output is never put in place after the handler ran. A second signal gets the
/// default action.
final class PartialOutputs: @unchecked Sendable {
  static let shared = PartialOutputs()

  /// Set by the signal handler: from then on the command's own messages (errors its
  /// removal of files causes) are not printed, no output is put in place, and its exit
  /// waits for the removal to end the process instead (`beforeExit`).
  static let interrupting = Atomic<Bool>(false)
  /// The pipe the handler writes the signal's number to.
  private static let pipeRead = Atomic<Int32>(-1)
  private static let pipeWrite = Atomic<Int32>(-1)

  private let lock = NSLock()
  private var entries: [Int: (path: String, siblings: Bool)] = [:]
  private var nextToken = 0
  private var watching = false

  /// Handles SIGINT and SIGTERM from now on: a command that will write an output calls it
  /// before its work, so an interrupt at any point exits 130 or 143.
  func watch() {
    lock.withLock {
      guard !watching else { return }
      watching = true
      startWatching()
    }
  }

  /// Removes `path` (a file, or a directory with its contents) if the command is
  /// interrupted, and with `siblings` every entry beside it whose name starts with its name;
  /// returns the token that `forget` takes once the output is complete or discarded.
  func add(_ path: String, siblings: Bool = false) -> Int {
    watch()
    return lock.withLock {
      nextToken += 1
      entries[nextToken] = (path, siblings)
      return nextToken
    }
  }

  /// `add`, only when a command already writes an output (a read's index file).
  func addIfWatching(_ path: String) {
    lock.withLock {
      guard watching else { return }
      nextToken += 1
      entries[nextToken] = (path, false)
    }
  }

  /// The output `token` names is complete (or was removed): no longer partial.
  func forget(_ token: Int) {
    lock.withLock { forgetLocked(token) }
  }

  /// `forget` inside `placing` (lock held).
  func forgetLocked(_ token: Int) {
    entries.removeValue(forKey: token)
  }

  /// Runs `body`, which puts a finished output in place, unless an interrupt came first (then
  /// it waits for the removal to end the process). An interrupt that comes while it runs
  /// waits for it: the output, finished, stays.
  func placing<T>(_ body: () throws(CLIError) -> T) throws(CLIError) -> T {
    lock.lock()
    defer { lock.unlock() }
    while Self.interrupting.load(ordering: .relaxed) {
      lock.unlock()
      pause()  // the thread removing the partial outputs ends the process
      lock.lock()
    }
    return try body()
  }

  /// Installs the handler and starts the thread that waits for it. Lock held.
  private func startWatching() {
    var fds: [Int32] = [-1, -1]
    guard pipe(&fds) == 0 else { return }
    for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
    Self.pipeRead.store(fds[0], ordering: .relaxed)
    Self.pipeWrite.store(fds[1], ordering: .relaxed)
    // A parent may have spawned us with these blocked (the mask survives exec).
    var set = sigset_t()
    sigemptyset(&set)
    for sig in [SIGINT, SIGTERM] { sigaddset(&set, sig) }
    pthread_sigmask(SIG_UNBLOCK, &set, nil)
    for sig in [SIGINT, SIGTERM] {
      _ = signal(sig) { sig in
        PartialOutputs.interrupting.store(true, ordering: .relaxed)
        var byte = UInt8(truncatingIfNeeded: sig)
        let fd = PartialOutputs.pipeWrite.load(ordering: .relaxed)
        if fd >= 0 { _ = write(fd, &byte, 1) }
        _ = signal(sig, SIG_DFL)
      }
    }
    let readEnd = fds[0]
    let thread = Thread { [self] in
      var byte: UInt8 = 0
      while true {
        let n = read(readEnd, &byte, 1)
        if n == 1 { interrupted(by: Int32(byte)) }
        if n < 0 && errno == EINTR { continue }
        if n <= 0 { return }
      }
    }
    thread.name = "listtape-signals"
    thread.start()
  }

  /// Called before the process exits the ordinary way: waits while an interrupt removes
  /// partial outputs (which then ends the process with its own code).
  func beforeExit() {
    lock.withLock {}
  }

  /// Removes every partial output, says so, and ends the process with 128 + `sig`. Holds
  /// the lock to the end, so the command's own exit waits (`beforeExit`).
  private func interrupted(by sig: Int32) -> Never {
    Self.interrupting.store(true, ordering: .relaxed)
    lock.lock()
    let removed = { () -> [String] in
      var removed: [String] = []
      // Twice: a library may have created a file beside its output during the first pass.
      for _ in 0..<2 {
        for (path, siblings) in entries.values {
          removed += Self.remove(path, siblings: siblings)
        }
      }
      return removed
    }()
    let name = sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "signal \(sig)"
    let what =
      removed.isEmpty
      ? "" : "; removed the partial output " + Set(removed).sorted().joined(separator: ", ")
    FileHandle.standardError.write(Data("listtape: interrupted by \(name)\(what)\n".utf8))
    _exit(128 + sig)
  }

  /// Removes `path` and, with `siblings`, the entries beside it named like it; returns what
  /// was there.
  private static func remove(_ path: String, siblings: Bool) -> [String] {
    var removed: [String] = []
    let files = FileManager.default
    if files.fileExists(atPath: path) || (try? files.destinationOfSymbolicLink(atPath: path)) != nil
    {
      try? files.removeItem(atPath: path)
      removed.append(path)
    }
    guard siblings else { return removed }
    let directory = (path as NSString).deletingLastPathComponent
    let name = (path as NSString).lastPathComponent
    let beside = (try? files.contentsOfDirectory(atPath: directory.isEmpty ? "." : directory)) ?? []
    for entry in beside where entry.hasPrefix(name) && entry != name {
      let full = directory.isEmpty ? entry : directory + "/" + entry
      try? files.removeItem(atPath: full)
      removed.append(full)
    }
    return removed
  }
}
