#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// strerror text for an errno value.
func errnoText(_ e: Int32) -> String {
  guard let s = strerror(e) else { return "errno \(e)" }
  return String(cString: s)
}

/// Thin, typed-throwing wrappers over the few system calls the log needs.
package enum Posix {
  /// Opens a file, retrying on EINTR; returns the fd or the errno.
  package static func open(_ path: String, _ flags: Int32, _ mode: mode_t = 0o644) -> Opened {
    while true {
      let fd = path.withCString { sysOpen($0, flags | O_CLOEXEC, mode) }
      if fd >= 0 { return .success(fd) }
      if errno != EINTR { return .failure(errno) }
    }
  }

  /// Opens `path` to read it at offsets (a log, an index): without waiting for a pipe's
  /// writer, and refused unless it is a regular file (a pipe or a terminal would block or
  /// could not be read again at an offset; a directory or a device is no log).
  package static func openFile(_ path: String) throws(LogError) -> Int32 {
    let fd: Int32
    switch open(path, O_RDONLY | O_NONBLOCK) {
    case .success(let f): fd = f
    case .failure(let e): throw .io("cannot open", path: path, errno: e)
    }
    var st = stat()
    guard fstat(fd, &st) == 0 else {
      let e = errno
      _ = close(fd)
      throw .io("cannot stat", path: path, errno: e)
    }
    if let what = kindName(st.st_mode) {
      _ = close(fd)
      throw LogError(
        .io, path: path,
        message: "cannot open: it is \(what), and a log is a regular file (read again at offsets)",
        errno: st.st_mode & S_IFMT == S_IFDIR ? EISDIR : ESPIPE)
    }
    let flags = fcntl(fd, F_GETFL)
    if flags >= 0 { _ = fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) }
    return fd
  }

  /// What a file of mode `mode` is, as messages say it ("a pipe"); nil for a regular file.
  package static func kindName(_ mode: mode_t) -> String? {
    switch mode & S_IFMT {
    case S_IFREG: return nil
    case S_IFDIR: return "a directory"
    case S_IFIFO: return "a pipe"
    case S_IFSOCK: return "a socket"
    case S_IFCHR, S_IFBLK: return "a device"
    default: return "a special file"
    }
  }

  /// An open file descriptor or the errno of the failure.
  package enum Opened {
    case success(Int32)
    case failure(Int32)
  }

  /// The size of an open file.
  static func size(_ fd: Int32, path: String) throws(LogError) -> UInt64 {
    var st = stat()
    guard fstat(fd, &st) == 0 else { throw .io("cannot stat", path: path, errno: errno) }
    return UInt64(max(0, st.st_size))
  }

  /// Reads up to `count` bytes at `offset`; returns how many arrived (fewer only at EOF).
  static func pread(
    _ fd: Int32, _ buf: UnsafeMutableRawPointer, _ count: Int, _ offset: UInt64, path: String
  ) throws(LogError) -> Int {
    var done = 0
    while done < count {
      let n = sysPread(fd, buf + done, count - done, off_t(offset) + off_t(done))
      if n > 0 {
        done += n
      } else if n == 0 {
        break
      } else if errno != EINTR {
        throw .io("read failed", path: path, errno: errno, offset: offset + UInt64(done))
      }
    }
    return done
  }

  /// Writes every byte or returns the errno of the failure (ENOSPC for a short write).
  static func writeAll(_ fd: Int32, _ p: UnsafeRawBufferPointer) -> Int32? {
    guard var base = p.baseAddress else { return nil }
    var left = p.count
    while left > 0 {
      let n = sysWrite(fd, base, left)
      if n > 0 {
        base += n
        left -= n
      } else if n == 0 {
        return ENOSPC
      } else if errno != EINTR {
        return errno
      }
    }
    return nil
  }

  /// Forces the file's data to stable storage (`FileSync`, `.full`); the errno on failure.
  static func dataSync(_ fd: Int32) -> Int32? { FileSync.sync(fd, .full) }

  /// Syncs the directory holding `path`, so a created or renamed entry survives power loss.
  static func syncDirectory(of path: String) -> Int32? {
    SystemFiles.shared.syncDirectory(of: path)
  }

  static func directory(of path: String) -> String {
    guard let slash = path.lastIndex(of: "/") else { return "." }
    let d = String(path[..<slash])
    return d.isEmpty ? "/" : d
  }

  /// Where a file created at `path` lands: `path` itself, or, when `path` is a symbolic link
  /// to nothing (a chain of them), the missing name at its end, as `open(O_CREAT)` and a
  /// shell's `>` would create it. A loop or a chain over 40 links gives `path` back.
  static func creationTarget(_ path: String) -> String {
    var current = path
    for _ in 0..<40 {
      var info = stat()
      guard lstat(current, &info) == 0, info.st_mode & S_IFMT == S_IFLNK else { return current }
      var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
      let n = readlink(current, &buffer, buffer.count - 1)
      guard n > 0 else { return path }
      let target = String(decoding: buffer[..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
      current =
        target.hasPrefix("/") || !current.contains("/")
        ? target : directory(of: current) + "/" + target
    }
    return path
  }

  static func close(_ fd: Int32) -> Int32 { sysClose(fd) }

  /// Milliseconds since the Unix epoch, for the header's creation stamp.
  static func nowMillis() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_REALTIME, &ts)
    return UInt64(max(0, ts.tv_sec)) * 1000 + UInt64(max(0, ts.tv_nsec)) / 1_000_000
  }

  /// Monotonic nanoseconds, for batch delays and fsync intervals.
  static func monotonicNanos() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(max(0, ts.tv_sec)) * 1_000_000_000 + UInt64(max(0, ts.tv_nsec))
  }
}

#if canImport(Glibc)
private func sysOpen(_ p: UnsafePointer<CChar>, _ f: Int32, _ m: mode_t) -> Int32 {
  Glibc.open(p, f, m)
}
private func sysPread(_ fd: Int32, _ b: UnsafeMutableRawPointer, _ n: Int, _ o: off_t) -> Int {
  Glibc.pread(fd, b, n, o)
}
private func sysWrite(_ fd: Int32, _ b: UnsafeRawPointer, _ n: Int) -> Int { Glibc.write(fd, b, n) }
private func sysClose(_ fd: Int32) -> Int32 { Glibc.close(fd) }
#elseif canImport(Darwin)
private func sysOpen(_ p: UnsafePointer<CChar>, _ f: Int32, _ m: mode_t) -> Int32 {
  Darwin.open(p, f, m)
}
private func sysPread(_ fd: Int32, _ b: UnsafeMutableRawPointer, _ n: Int, _ o: off_t) -> Int {
  Darwin.pread(fd, b, n, o)
}
private func sysWrite(_ fd: Int32, _ b: UnsafeRawPointer, _ n: Int) -> Int {
  Darwin.write(fd, b, n)
}
private func sysClose(_ fd: Int32) -> Int32 { Darwin.close(fd) }
#endif

/// Random bytes for a new log's UUID, from the system generator.
func randomUUID() -> [UInt8] {
  var g = SystemRandomNumberGenerator()
  return (0..<16).map { _ in UInt8.random(in: 0...255, using: &g) }
}

/// A read-only view of a log's bytes, from a file (pread through a window) or from memory.
///
/// Views returned by `bytes(at:count:)` stay valid until the next call.
final class ByteSource {
  let path: String
  private let fd: Int32?
  private(set) var size: UInt64
  private var buffer: UnsafeMutableRawPointer
  private var capacity: Int
  private var windowStart: UInt64 = 0
  private var windowLength = 0
  private static let window = 1 << 20
  /// Reads of at most `smallRead` bytes away from the window fill `smallWindow` bytes.
  private static let smallRead = 16 << 10
  private static let smallWindow = 64 << 10
  /// Bytes that replace the file's own, by offset, sorted and disjoint (blocks salvage
  /// rebuilt from parity).
  private var patches: [(offset: UInt64, bytes: [UInt8])] = []

  /// Reads through `fd` (not owned: the caller closes it).
  init(fd: Int32, path: String) throws(LogError) {
    self.fd = fd
    self.path = path
    self.size = try Posix.size(fd, path: path)
    self.capacity = Self.window
    self.buffer = UnsafeMutableRawPointer.allocate(byteCount: Self.window, alignment: 16)
  }

  /// Reads from a copy of `bytes`, for tests and fuzzing.
  init(bytes: [UInt8], path: String) {
    self.fd = nil
    self.path = path
    self.size = UInt64(bytes.count)
    self.capacity = max(1, bytes.count)
    self.buffer = UnsafeMutableRawPointer.allocate(byteCount: max(1, bytes.count), alignment: 16)
    bytes.withUnsafeBytes { p in
      if let b = p.baseAddress { buffer.copyMemory(from: b, byteCount: p.count) }
    }
    self.windowLength = bytes.count
  }

  deinit { buffer.deallocate() }

  /// Re-reads the file size and forgets cached bytes (the file may have grown or been cut).
  func refresh() throws(LogError) {
    guard let fd else { return }
    size = try Posix.size(fd, path: path)
    windowLength = 0
  }

  /// `count` bytes at `offset`, or nil when the file (as last sized) does not hold them all.
  func bytes(at offset: UInt64, count: Int) throws(LogError) -> UnsafeRawBufferPointer? {
    guard count >= 0, offset <= size, UInt64(count) <= size - offset else { return nil }
    if offset >= windowStart, offset - windowStart + UInt64(count) <= UInt64(windowLength) {
      return UnsafeRawBufferPointer(start: buffer + Int(offset - windowStart), count: count)
    }
    guard let fd else { return nil }
    if count > capacity {
      buffer.deallocate()
      capacity = count
      buffer = UnsafeMutableRawPointer.allocate(byteCount: count, alignment: 16)
    }
    // A small read away from the last window (a header, a table) reads a little around it:
    // a fresh process faults in every page of the window a read fills.
    let near =
      windowLength > 0 && offset >= windowStart
      && offset - windowStart <= UInt64(windowLength + Self.window)
    let span = count <= Self.smallRead && !near ? Self.smallWindow : min(capacity, Self.window)
    let want = Int(min(UInt64(max(count, span)), size - offset))
    windowLength = 0
    let got = try Posix.pread(fd, buffer, want, offset, path: path)
    windowStart = offset
    windowLength = got
    if !patches.isEmpty { applyPatches(to: buffer, at: offset, count: got) }
    guard got >= count else { return nil }
    return UnsafeRawBufferPointer(start: buffer, count: count)
  }

  /// Copies the `count` bytes at `offset` to `dst` (read straight into it from a file, not
  /// through the window), or returns false when the source does not hold them all.
  func copy(at offset: UInt64, count: Int, to dst: UnsafeMutableRawPointer) throws(LogError)
    -> Bool
  {
    guard count >= 0, offset <= size, UInt64(count) <= size - offset else { return false }
    guard count > 0 else { return true }
    guard fd != nil, count > Self.window else {
      guard let b = try bytes(at: offset, count: count), let base = b.baseAddress else {
        return false
      }
      dst.copyMemory(from: base, byteCount: count)
      return true
    }
    return try detachedRead(at: offset, count: count, into: dst)
  }

  /// Reads the `count` bytes at `offset` into `dst` without the window (so another thread
  /// may call it while this source serves reads through the window); false when the source
  /// does not hold them all.
  func detachedRead(at offset: UInt64, count: Int, into dst: UnsafeMutableRawPointer)
    throws(LogError) -> Bool
  {
    guard count >= 0, offset <= size, UInt64(count) <= size - offset else { return false }
    guard count > 0 else { return true }
    guard let fd else {
      guard windowStart == 0, Int(offset) + count <= windowLength else { return false }
      dst.copyMemory(from: buffer + Int(offset), byteCount: count)
      return true
    }
    guard try Posix.pread(fd, dst, count, offset, path: path) == count else { return false }
    if !patches.isEmpty { applyPatches(to: dst, at: offset, count: count) }
    return true
  }

  /// Reads `replacements` in place of the bytes they cover from now on (disjoint ranges).
  func patch(_ replacements: [(UInt64, [UInt8])]) {
    patches += replacements.map { (offset: $0.0, bytes: $0.1) }
    patches.sort { $0.offset < $1.offset }
    if fd == nil {
      applyPatches(to: buffer, at: 0, count: windowLength)
    } else {
      windowLength = 0
    }
  }

  /// Copies the patches overlapping `[at, at + count)` over the bytes read there.
  private func applyPatches(to dst: UnsafeMutableRawPointer, at: UInt64, count: Int) {
    let end = at + UInt64(count)
    var lo = 0
    var hi = patches.count
    while lo < hi {
      let mid = (lo + hi) / 2
      if patches[mid].offset + UInt64(patches[mid].bytes.count) <= at {
        lo = mid + 1
      } else {
        hi = mid
      }
    }
    while lo < patches.count, patches[lo].offset < end {
      let p = patches[lo]
      let from = max(p.offset, at)
      let to = min(p.offset + UInt64(p.bytes.count), end)
      if from < to {
        p.bytes.withUnsafeBytes { b in
          if let base = b.baseAddress {
            (dst + Int(from - at)).copyMemory(
              from: base + Int(from - p.offset), byteCount: Int(to - from))
          }
        }
      }
      lo += 1
    }
  }

  /// Drops an oversized window buffer after reading a big frame.
  func shrink() {
    guard fd != nil, capacity > Self.window else { return }
    buffer.deallocate()
    capacity = Self.window
    buffer = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16)
    windowLength = 0
  }
}
