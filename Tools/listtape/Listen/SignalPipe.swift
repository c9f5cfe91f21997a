import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Signals turned into bytes on a pipe (the self-pipe trick), so a `poll(2)` loop wakes up
/// and handles them in ordinary code: the handler only calls `write(2)`, which is
/// async-signal-safe. Each byte is the signal's number.
enum SignalPipe {
  private static let readEnd = Atomic<Int32>(-1)
  private static let writeEnd = Atomic<Int32>(-1)
  /// Signals whose second arrival gets the default action (the handler resets them).
  private static let oneShot = Atomic<UInt64>(0)

  /// The descriptor to poll; -1 when the pipe could not be made.
  static var descriptor: Int32 { readEnd.load(ordering: .relaxed) }

  /// Installs the handler for `signals` (unblocking them first: a spawning parent may have
  /// blocked them, and the mask survives exec). Signals in `resetAfterFirst` get the default
  /// action back once caught, so a second one ends the process the usual way.
  static func install(_ signals: [Int32], resetAfterFirst: [Int32] = []) {
    var fds: [Int32] = [-1, -1]
    guard pipe(&fds) == 0 else { return }
    for fd in fds {
      _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
      _ = fcntl(fd, F_SETFL, O_NONBLOCK)
    }
    readEnd.store(fds[0], ordering: .relaxed)
    writeEnd.store(fds[1], ordering: .relaxed)
    var mask: UInt64 = 0
    for sig in resetAfterFirst where sig > 0 && sig < 64 { mask |= 1 << UInt64(sig) }
    oneShot.store(mask, ordering: .relaxed)
    var set = sigset_t()
    sigemptyset(&set)
    for sig in signals { sigaddset(&set, sig) }
    pthread_sigmask(SIG_UNBLOCK, &set, nil)
    for sig in signals {
      _ = signal(sig) { sig in
        var byte = UInt8(truncatingIfNeeded: sig)
        let fd = SignalPipe.writeEnd.load(ordering: .relaxed)
        if fd >= 0 { _ = write(fd, &byte, 1) }
        if sig > 0 && sig < 64
          && SignalPipe.oneShot.load(ordering: .relaxed) & (1 << UInt64(sig)) != 0
        {
          _ = signal(sig, SIG_DFL)
        }
      }
    }
  }

  /// Restores the default action for `signals` and closes the pipe.
  static func uninstall(_ signals: [Int32]) {
    for sig in signals { _ = signal(sig, SIG_DFL) }
    let write = writeEnd.exchange(-1, ordering: .relaxed)
    if write >= 0 { close(write) }
    let read = readEnd.exchange(-1, ordering: .relaxed)
    if read >= 0 { close(read) }
  }

  /// The signals caught since the last call, oldest first.
  static func take() -> [Int32] {
    let fd = descriptor
    guard fd >= 0 else { return [] }
    var caught: [Int32] = []
    var buffer = [UInt8](repeating: 0, count: 64)
    while true {
      let n = buffer.withUnsafeMutableBytes { raw in
        guard let base = raw.baseAddress else { return 0 }
        return read(fd, base, raw.count)
      }
      if n < 0 && errno == EINTR { continue }
      if n <= 0 { break }
      caught += buffer[..<n].map { Int32($0) }
    }
    return caught
  }
}
