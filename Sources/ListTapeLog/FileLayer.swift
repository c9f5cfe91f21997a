#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The file operations a writer performs that change what a crash leaves on disk, so that a
/// test can put a simulated disk under the writer (as LevelDB's and RocksDB's fault-injection
/// environments do). Reads, `fstat` and `flock` go straight to the descriptor.
package protocol FileLayer: AnyObject, Sendable {
  /// `open(2)` with `O_CLOEXEC` added, retried on EINTR.
  func open(_ path: String, _ flags: Int32) -> Posix.Opened
  /// Writes every byte at the descriptor's position (the end, for `O_APPEND`), or the errno.
  func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Int32?
  /// `ftruncate(2)`; the errno on failure.
  func truncate(_ fd: Int32, _ length: UInt64) -> Int32?
  /// Forces the file's written bytes toward stable storage; the errno on failure.
  func sync(_ fd: Int32, _ kind: SyncKind) -> Int32?
  /// Makes the directory entries in the directory of `path` durable; the errno on failure.
  func syncDirectory(of path: String) -> Int32?
  /// `link(2)`: a second name for an existing file; EEXIST when `to` exists.
  func link(_ from: String, _ to: String) -> Int32?
  /// `unlink(2)`; the errno on failure.
  func unlink(_ path: String) -> Int32?
  /// `rename(2)`: replaces `to` atomically; the errno on failure.
  func rename(_ from: String, _ to: String) -> Int32?
  /// `close(2)`; the errno on failure.
  func close(_ fd: Int32) -> Int32?
  /// Called on a thread the writer starts, before it does anything (tests find it by this).
  func threadStarted(_ name: String)
  /// The data protection class of the file at `path`, nil where there is none (Linux).
  func protectionClass(of path: String) -> ProtectionClass?
  /// Sets the data protection class of the file at `path` (nothing where there is none).
  func setProtectionClass(_ protection: ProtectionClass, of path: String)
}

extension FileLayer {
  package func threadStarted(_ name: String) {}

  package func rename(_ from: String, _ to: String) -> Int32? {
    from.withCString { f in to.withCString { t in sysRename(f, t) == 0 ? nil : errno } }
  }
}

/// The real file system.
package final class SystemFiles: FileLayer {
  package static let shared = SystemFiles()

  package init() {}

  package func open(_ path: String, _ flags: Int32) -> Posix.Opened { Posix.open(path, flags) }

  package func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Int32? {
    Posix.writeAll(fd, bytes)
  }

  package func truncate(_ fd: Int32, _ length: UInt64) -> Int32? {
    while ftruncate(fd, off_t(length)) != 0 {
      if errno != EINTR { return errno }
    }
    return nil
  }

  package func sync(_ fd: Int32, _ kind: SyncKind) -> Int32? { FileSync.sync(fd, kind) }

  package func syncDirectory(of path: String) -> Int32? {
    switch Posix.open(Posix.directory(of: path), O_RDONLY) {
    case .failure(let e): return e
    case .success(let fd):
      defer { _ = Posix.close(fd) }
      return FileSync.syncDirectory(fd)
    }
  }

  package func link(_ from: String, _ to: String) -> Int32? {
    from.withCString { f in to.withCString { t in sysLink(f, t) == 0 ? nil : errno } }
  }

  package func unlink(_ path: String) -> Int32? {
    path.withCString { sysUnlink($0) == 0 ? nil : errno }
  }

  package func close(_ fd: Int32) -> Int32? { Posix.close(fd) == 0 ? nil : errno }
}

#if canImport(Glibc)
private func sysLink(_ f: UnsafePointer<CChar>, _ t: UnsafePointer<CChar>) -> Int32 {
  Glibc.link(f, t)
}
private func sysUnlink(_ p: UnsafePointer<CChar>) -> Int32 { Glibc.unlink(p) }
private func sysRename(_ f: UnsafePointer<CChar>, _ t: UnsafePointer<CChar>) -> Int32 {
  Glibc.rename(f, t)
}
#elseif canImport(Darwin)
private func sysLink(_ f: UnsafePointer<CChar>, _ t: UnsafePointer<CChar>) -> Int32 {
  Darwin.link(f, t)
}
private func sysUnlink(_ p: UnsafePointer<CChar>) -> Int32 { Darwin.unlink(p) }
private func sysRename(_ f: UnsafePointer<CChar>, _ t: UnsafePointer<CChar>) -> Int32 {
  Darwin.rename(f, t)
}
#endif
