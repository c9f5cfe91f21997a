#if canImport(Glibc)
import Glibc

/// A listening Unix domain stream socket bound to a path, which it removes when closed (if
/// the file there is still the one it bound).
final class Listener {
  let path: String
  private(set) var descriptor: Int32
  private var inode: UInt64 = 0

  /// The longest path `sockaddr_un` holds, in bytes (its `sun_path` less the final NUL).
  static let maxPathLength = MemoryLayout.size(ofValue: sockaddr_un().sun_path) - 1

  /// Refuses what can be told before the log is opened: an empty or over-long path.
  static func check<C: Command>(_ path: String, for command: C.Type) throws(CLIError) {
    if path.isEmpty { throw command.usageError("The socket path for '--listen' is empty") }
    if path.utf8.count > maxPathLength {
      throw command.usageError(
        "The socket path '\(path)' is too long (\(path.utf8.count) bytes; a Unix socket path "
          + "holds at most \(maxPathLength))")
    }
  }

  /// Binds and listens at `path`, first removing a stale socket file there (one nobody
  /// listens on). Refuses a path that exists and is not a socket, or a live socket.
  init(path: String) throws(CLIError) {
    self.path = path
    var info = stat()
    if lstat(path, &info) == 0 {
      guard info.st_mode & S_IFMT == S_IFSOCK else {
        throw .failure(
          "cannot listen on \(path): the file exists and is not a socket",
          code: ExitCode.cannotOpen)
      }
      if Self.someoneListens(at: path) {
        throw .failure(
          "cannot listen on \(path): another process is listening there", code: ExitCode.io)
      }
      guard unlink(path) == 0 || errno == ENOENT else {
        throw .failure(
          "cannot remove the stale socket \(path): \(Self.systemError())", code: ExitCode.io)
      }
    }
    descriptor = Self.makeSocket()
    guard descriptor >= 0 else {
      throw .failure("cannot create a socket: \(Self.systemError())", code: ExitCode.io)
    }
    let bound = Self.withAddress(path) { address, length in bind(descriptor, address, length) }
    guard bound == 0 else {
      let reason = Self.systemError()
      Glibc.close(descriptor)
      descriptor = -1
      throw .failure("cannot listen on \(path): \(reason)", code: ExitCode.cannotOpen)
    }
    if lstat(path, &info) == 0 { inode = UInt64(info.st_ino) }
    guard Glibc.listen(descriptor, 64) == 0 else {
      let reason = Self.systemError()
      self.close()
      throw .failure("cannot listen on \(path): \(reason)", code: ExitCode.io)
    }
    _ = fcntl(descriptor, F_SETFL, O_NONBLOCK)
  }

  deinit { close() }

  /// A pending connection, or nil when none is waiting.
  func accept() -> Int32? {
    while true {
      let fd = Glibc.accept(descriptor, nil, nil)
      if fd >= 0 {
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        return fd
      }
      if errno == EINTR { continue }
      return nil
    }
  }

  /// Stops listening and removes the socket file, if it is still ours.
  func close() {
    guard descriptor >= 0 else { return }
    Glibc.close(descriptor)
    descriptor = -1
    var info = stat()
    if lstat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFSOCK
      && UInt64(info.st_ino) == inode
    {
      unlink(path)
    }
  }

  private static func makeSocket() -> Int32 {
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
    if fd >= 0 { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
    return fd
  }

  /// Whether a connection to `path` succeeds, i.e. a live process still listens there.
  private static func someoneListens(at path: String) -> Bool {
    let fd = makeSocket()
    guard fd >= 0 else { return false }
    defer { Glibc.close(fd) }
    return withAddress(path) { address, length in connect(fd, address, length) } == 0
  }

  /// Calls `body` with `path` as a `sockaddr_un` (the caller has checked its length).
  static func withAddress<R>(
    _ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> R
  ) -> R {
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    let bytes = Array(path.utf8.prefix(maxPathLength))
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
      for (i, b) in bytes.enumerated() { raw[i] = b }
    }
    return withUnsafePointer(to: &address) { pointer in
      pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { sockaddrPointer in
        body(sockaddrPointer, socklen_t(MemoryLayout<sockaddr_un>.size))
      }
    }
  }

  static func systemError() -> String {
    guard let text = strerror(errno) else { return "error \(errno)" }
    return String(cString: text)
  }
}
#else
/// Elsewhere `--listen` is refused: the socket code is written against Glibc.
final class Listener {
  static func check<C: Command>(_ path: String, for command: C.Type) throws(CLIError) {}

  init(path: String) throws(CLIError) {
    throw .failure("--listen needs Linux (Unix domain sockets through Glibc)", code: ExitCode.io)
  }

  func close() {}
}
#endif
