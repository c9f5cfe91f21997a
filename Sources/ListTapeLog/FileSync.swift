#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How far a sync pushes written bytes: the two strengths the writer asks for.
package enum SyncKind: Sendable, Equatable {
  /// Survives power loss once it returns: `fdatasync` on Linux; on Apple platforms
  /// `fcntl(F_FULLFSYNC)`, which also empties the drive's write cache (`fsync` there does not).
  case full
  /// Keeps the order of writes across power loss without waiting for the drive's cache:
  /// `fcntl(F_BARRIERFSYNC)` on Apple platforms, `fdatasync` on Linux (which has no barrier).
  case barrier
}

/// The platform's sync calls behind `SyncKind`, with the fallback when a file system does
/// not support the Apple-specific ones.
package enum FileSync {
  /// Syncs an open file; returns the errno of the failure, or nil.
  package static func sync(_ fd: Int32, _ kind: SyncKind) -> Int32? {
    #if canImport(Darwin)
    let command = kind == .full ? F_FULLFSYNC : F_BARRIERFSYNC
    return withFallback(
      { fcntl(fd, command) == -1 ? errno : nil }, fallback: { fsync(fd) == 0 ? nil : errno })
    #elseif canImport(Glibc)
    return fdatasync(fd) == 0 ? nil : errno
    #else
    return fsync(fd) == 0 ? nil : errno
    #endif
  }

  /// Syncs an open directory, so that an entry created in it survives power loss.
  package static func syncDirectory(_ fd: Int32) -> Int32? {
    #if canImport(Darwin)
    return withFallback(
      { fcntl(fd, F_FULLFSYNC) == -1 ? errno : nil }, fallback: { fsync(fd) == 0 ? nil : errno })
    #else
    return fsync(fd) == 0 ? nil : errno
    #endif
  }

  /// Runs `primary`; only when it failed because the file system does not support it (a
  /// network or FAT volume refusing `F_FULLFSYNC`) runs `fallback` and returns its result.
  /// Any other failure is returned as it is: after an I/O error the kernel may have dropped
  /// the dirty pages, so a second call that succeeds would claim durability falsely.
  package static func withFallback(_ primary: () -> Int32?, fallback: () -> Int32?) -> Int32? {
    guard let e = primary() else { return nil }
    guard isUnsupported(e) else { return e }
    return fallback()
  }

  /// Whether an errno means "this call is not supported here" rather than "it failed".
  package static func isUnsupported(_ e: Int32) -> Bool {
    e == EINVAL || e == ENOTSUP || e == EOPNOTSUPP || e == ENOTTY || e == ENOSYS
  }
}
