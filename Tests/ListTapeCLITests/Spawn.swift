import Foundation

#if canImport(Glibc)
import Glibc

/// Starts a program as a shell would, with standard input empty, standard output and error
/// to files (created or truncated), and no other inherited descriptors: default signal
/// actions and an empty mask (the test runner may block or ignore some: tmux's SIGHUP must
/// reach the pane when the server is killed). Returns its process id.
func startProcess(
  _ path: String, argv: [String], environment: [String: String], stdout: String,
  stderr: String = "/dev/null"
) throws -> pid_t {
  var actions = posix_spawn_file_actions_t()
  posix_spawn_file_actions_init(&actions)
  defer { posix_spawn_file_actions_destroy(&actions) }
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
  posix_spawn_file_actions_addopen(&actions, 1, stdout, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
  posix_spawn_file_actions_addopen(&actions, 2, stderr, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
  // The descriptors open now (the listing's own one is gone by the spawn and ignored).
  let open = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
  for fd in open.compactMap({ Int32($0) }) where fd > 2 {
    posix_spawn_file_actions_addclose(&actions, fd)
  }
  let cArgs = argv.map { strdup($0) } + [nil]
  let cEnv = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
  defer {
    for p in cArgs { free(p) }
    for p in cEnv { free(p) }
  }
  var attributes = posix_spawnattr_t()
  posix_spawnattr_init(&attributes)
  defer { posix_spawnattr_destroy(&attributes) }
  var none = sigset_t()
  sigemptyset(&none)
  var all = sigset_t()
  sigfillset(&all)
  posix_spawnattr_setsigmask(&attributes, &none)
  posix_spawnattr_setsigdefault(&attributes, &all)
  posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
  var pid: pid_t = 0
  let rc = posix_spawn(&pid, path, &actions, &attributes, cArgs, cEnv)
  guard rc == 0 else { throw RecordFailed(message: "posix_spawn \(path): \(rc)") }
  return pid
}

/// Runs a program with standard output to a file and no other inherited descriptors;
/// its exit status (killed after `seconds`).
func spawn(
  _ path: String, argv: [String], environment: [String: String], stdout: String,
  seconds: Double = 30
) throws -> Int32 {
  let pid = try startProcess(path, argv: argv, environment: environment, stdout: stdout)
  let deadline = Date().addingTimeInterval(seconds)
  var status: Int32 = 0
  while true {
    let done = waitpid(pid, &status, WNOHANG)
    if done == pid { break }
    if done < 0 && errno != EINTR { throw RecordFailed(message: "waitpid: \(errno)") }
    if Date() > deadline {
      kill(pid, SIGKILL)
      _ = waitpid(pid, &status, 0)
      throw RecordFailed(message: "\(argv) hung")
    }
    usleep(2_000)
  }
  // WIFEXITED / WEXITSTATUS, which Swift does not import (they are macros).
  return status & 0x7F == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
}

/// `listtape` started in the background with its standard output and error to files
/// (`startProcess`).
struct Started {
  let pid: pid_t

  init(_ argv: [String], stdout: String = "/dev/null", stderr: String) throws {
    pid = try startProcess(
      CLI.binary.path, argv: [CLI.binary.path] + argv, environment: CLI.baseEnvironment,
      stdout: stdout, stderr: stderr)
  }

  /// The exit code (128 + the signal for a process a signal ended) once it has ended,
  /// or nil while it runs; `block` waits.
  func status(block: Bool) -> Int32? {
    var status: Int32 = 0
    while true {
      let done = waitpid(pid, &status, block ? 0 : WNOHANG)
      if done == pid { break }
      if done < 0 && errno == EINTR { continue }
      return nil
    }
    return status & 0x7F == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
  }
}
#endif
