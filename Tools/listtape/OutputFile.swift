import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where `-o` sends a command's output, decided once before any work, as Unix tools do:
/// `-` is standard output; a pipe, terminal or device is opened and written to, never
/// replaced; an existing regular file is refused (73) unless `--force`; a symlink is
/// written through (its target gets the new content, the link stays). A file is written
/// beside its final name and renamed into place, so readers see the old content or the new,
/// and a failure leaves nothing behind: nothing but the named output is created, replaced
/// or removed. docs/cli.md ("Output files") is the user's side of this.
///
/// A command calls `OutputFile.open(_:force:content:for:)` right after parsing, then
/// `write(_:)` and `commit()` for bytes it produces, or `writeFile(_:)` when a library
/// writes the file by path (a log).
final class OutputFile {
  /// What the output holds: text may go to a terminal; a log is binary and may not.
  enum Content {
    case text
    case log
    /// Like `.log`, but standard output carries the command's own report, so `-o -` cannot
    /// be used (a usage error).
    case logBesideReport
  }

  /// The path as given.
  let path: String
  /// How messages name it.
  var name: String { path == "-" ? "standard output" : path }
  private let destination: Destination
  private let content: Content
  /// The descriptor written to: the stream's, or the temporary file's.
  private var fd: Int32 = -1
  /// The temporary file beside the target, while it exists.
  private var temporary: String?
  /// `temporary` (and what a library makes beside it) as a partial output to remove if the
  /// command is interrupted (`PartialOutputs`).
  private var partial: Int?
  private var committed = false

  private enum Destination {
    /// An open descriptor: standard output, a pipe, a terminal or a device.
    case stream(fd: Int32, closes: Bool)
    /// A regular file at `target` (a symlink's resolved target), created or replaced.
    case file(target: String, replacing: Bool, mode: mode_t?)
  }

  private init(path: String, destination: Destination, content: Content) {
    self.path = path
    self.destination = destination
    self.content = content
    // From here on Ctrl-C or SIGTERM removes what this output has written in part and
    // exits 130 or 143.
    if case .file = destination { PartialOutputs.shared.watch() }
  }

  deinit { discard() }

  /// Decides where `path` goes and refuses what cannot be written, before any work:
  /// usage errors (64) for `-` or a terminal where the output cannot go, 73 for an existing
  /// file without `force`, a directory, a socket or an unresolvable link.
  static func open<C: Command>(
    _ path: String, force: Bool, content: Content, for command: C.Type
  ) throws(CLIError) -> OutputFile {
    if path.isEmpty { throw command.usageError("The output path is empty") }
    if path == "-" {
      if content == .logBesideReport {
        throw command.usageError(
          "'-o -' cannot be used here: standard output carries the report; name a file")
      }
      return try stream(path, fd: 1, closes: false, content: content, for: command)
    }
    let resolved = try resolve(path)
    switch resolved {
    case .descriptor(let n):
      return try stream(path, fd: n, closes: false, content: content, for: command)
    case .missing(let target):
      let directory = (target as NSString).deletingLastPathComponent
      var info = stat()
      let found = stat(directory.isEmpty ? "." : directory, &info) == 0
      guard found, info.st_mode & S_IFMT == S_IFDIR else {
        let why = found || errno != ENOENT ? "is not a directory" : "does not exist"
        throw .failure("cannot create \(path): \(directory) \(why)", code: ExitCode.cannotCreate)
      }
      return OutputFile(
        path: path, destination: .file(target: target, replacing: false, mode: nil),
        content: content)
    case .existing(let target, let info):
      switch info.st_mode & S_IFMT {
      case S_IFREG:
        guard force else {
          let through = target == path ? "" : " (through the link to \(target))"
          throw .failure(
            "\(path) already exists\(through); pass --force to replace it, or choose another "
              + "name", code: ExitCode.cannotCreate)
        }
        return OutputFile(
          path: path, destination: .file(target: target, replacing: true, mode: info.st_mode),
          content: content)
      case S_IFIFO, S_IFCHR, S_IFBLK:
        let fd = Foundation.open(target, O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else {
          throw .failure(
            "cannot open \(path) for writing: \(String(cString: strerror(errno)))",
            code: ExitCode.cannotCreate)
        }
        return try stream(path, fd: fd, closes: true, content: content, for: command)
      case S_IFDIR:
        throw .failure("\(path) is a directory; name a file", code: ExitCode.cannotCreate)
      default:
        throw .failure(
          "\(path) is a socket or another special file that cannot be written",
          code: ExitCode.cannotCreate)
      }
    }
  }

  private static func stream<C: Command>(
    _ path: String, fd: Int32, closes: Bool, content: Content, for command: C.Type
  ) throws(CLIError) -> OutputFile {
    if content != .text && isatty(fd) == 1 {
      if closes { _ = close(fd) }
      throw command.usageError(
        "A log is binary and is not written to a terminal; redirect it or name a file")
    }
    return OutputFile(path: path, destination: .stream(fd: fd, closes: closes), content: content)
  }

  /// Whether the output is a regular file (which a library may write by path directly).
  var isFile: Bool {
    if case .file = destination { return true }
    return false
  }

  /// Appends bytes to the output (a temporary file until `commit()`).
  func write(_ bytes: [UInt8]) throws(CLIError) {
    try prepare()
    var offset = 0
    while offset < bytes.count {
      let n = bytes.withUnsafeBytes { raw -> Int in
        guard let base = raw.baseAddress else { return 0 }
        return Foundation.write(fd, base + offset, raw.count - offset)
      }
      if n < 0 && errno == EINTR { continue }
      guard n > 0 else {
        let e = errno
        if e == EPIPE, case .stream = destination {
          return  // the reader went away, as when printing to a closed pipe
        }
        throw .failure(
          "cannot write \(path): \(String(cString: strerror(e)))", code: ExitCode.io)
      }
      offset += n
    }
  }

  /// Opens the temporary file beside the target on the first write.
  private func prepare() throws(CLIError) {
    guard fd < 0 else { return }
    switch destination {
    case .stream(let stream, _):
      fd = stream
    case .file(let target, _, let mode):
      let name = try Self.temporaryName(beside: target, path: path)
      // Known as partial before it exists, so an interrupt never leaves it behind.
      partial = PartialOutputs.shared.add(name)
      let created = Foundation.open(name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o666)
      guard created >= 0 else {
        throw .failure(
          "cannot create \(path): \(String(cString: strerror(errno)))",
          code: ExitCode.cannotCreate)
      }
      if let mode { _ = fchmod(created, mode & 0o7777) }
      temporary = name
      fd = created
    }
  }

  /// Lets a library write the whole file at a path it creates (`body` gets a path that does
  /// not exist yet); the file is then moved into place, or copied into the stream and
  /// removed. Returns what `body` returns.
  func writeFile<T>(_ body: (String) throws(CLIError) -> T) throws(CLIError) -> T {
    precondition(fd < 0 && temporary == nil, "writeFile on an output already written")
    let name: String
    switch destination {
    case .file(let target, _, _):
      name = try Self.temporaryName(beside: target, path: path)
    case .stream:
      // A log cannot be written to a pipe as it is recorded: it is built in a private
      // temporary file, then copied.
      let directory =
        ProcessInfo.processInfo.environment["TMPDIR"].flatMap {
          $0.isEmpty ? nil : $0
        } ?? "/tmp"
      name = try Self.temporaryName(beside: directory + "/listtape-output", path: path)
    }
    temporary = name
    // The library may make files of its own beside it (`.salvage-PID`, `.new-…`).
    partial = PartialOutputs.shared.add(name, siblings: true)
    let result: T
    do {
      result = try body(name)
    } catch {
      discard()
      throw error
    }
    if case .file(_, _, let mode) = destination, let mode {
      _ = chmod(name, mode & 0o7777)
    }
    if case .stream = destination {
      try copyTemporaryIntoStream(name)
    }
    return result
  }

  private func copyTemporaryIntoStream(_ name: String) throws(CLIError) {
    let source = Foundation.open(name, O_RDONLY | O_CLOEXEC)
    guard source >= 0 else {
      throw .failure(
        "cannot read back \(name): \(String(cString: strerror(errno)))", code: ExitCode.io)
    }
    defer { _ = close(source) }
    // Gone from the directory at once: nothing is left behind even if the copy fails.
    _ = unlink(name)
    temporary = nil
    var chunk = [UInt8](repeating: 0, count: 1 << 16)
    while true {
      let n = chunk.withUnsafeMutableBytes { read(source, $0.baseAddress, $0.count) }
      if n < 0 && errno == EINTR { continue }
      if n < 0 {
        throw .failure(
          "cannot read back \(name): \(String(cString: strerror(errno)))", code: ExitCode.io)
      }
      if n == 0 { break }
      try write(Array(chunk[0..<n]))
    }
  }

  /// Makes the output final: a file is synced and renamed (or linked) into place; a stream
  /// is left open for the process to close.
  func commit() throws(CLIError) {
    guard !committed else { return }
    if case .file(let target, let replacing, _) = destination {
      if temporary == nil { try prepare() }  // an empty output is still an output
      guard let name = temporary else { return }
      if fd >= 0 {
        if fsync(fd) != 0 {
          throw .failure(
            "cannot sync \(path): \(String(cString: strerror(errno)))", code: ExitCode.io)
        }
        _ = close(fd)
        fd = -1
      }
      let token = partial
      try PartialOutputs.shared.placing { () throws(CLIError) in
        try Self.place(name, at: target, replacing: replacing, path: path)
        if let token { PartialOutputs.shared.forgetLocked(token) }
      }
      temporary = nil
      partial = nil
    } else if case .stream(_, let closes) = destination, closes, fd >= 0 {
      _ = close(fd)
      fd = -1
    }
    committed = true
  }

  /// Removes the temporary file, if any: the target is left as it was.
  func discard() {
    if case .file = destination, fd >= 0 {
      _ = close(fd)
      fd = -1
    }
    if let name = temporary {
      _ = unlink(name)
      temporary = nil
    }
    if let partial { PartialOutputs.shared.forget(partial) }
    partial = nil
  }

  // MARK: - Paths

  private enum Resolved {
    case descriptor(Int32)
    case missing(target: String)
    case existing(target: String, stat)
  }

  /// Follows symlinks one at a time to what they name: one of this process's descriptors
  /// (`/dev/stdout`, `/dev/fd/N`, `/proc/self/fd/N`), a file that does not exist (a dangling
  /// link creates its target), or an existing file.
  private static func resolve(_ path: String) throws(CLIError) -> Resolved {
    var current = path
    for _ in 0..<40 {
      if let n = descriptor(named: current) { return .descriptor(n) }
      var info = stat()
      if lstat(current, &info) != 0 {
        let e = errno
        guard e == ENOENT else {
          throw .failure(
            "cannot use \(path) as the output: \(String(cString: strerror(e)))",
            code: ExitCode.cannotCreate)
        }
        return .missing(target: current)
      }
      guard info.st_mode & S_IFMT == S_IFLNK else { return .existing(target: current, info) }
      var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
      let n = readlink(current, &buffer, buffer.count - 1)
      guard n >= 0 else {
        throw .failure(
          "cannot read the link \(current): \(String(cString: strerror(errno)))",
          code: ExitCode.cannotCreate)
      }
      let link = String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
      if link.hasPrefix("/") {
        current = link
      } else {
        let directory = (current as NSString).deletingLastPathComponent
        current = directory.isEmpty ? link : directory + "/" + link
      }
    }
    throw .failure(
      "cannot use \(path) as the output: too many levels of symbolic links",
      code: ExitCode.cannotCreate)
  }

  /// `N` for `/dev/fd/N`, `/proc/self/fd/N` and `/proc/PID/fd/N` (this process); `/dev/stdout`
  /// and `/dev/stderr` are 1 and 2 on systems where they are not links.
  private static func descriptor(named path: String) -> Int32? {
    let own = "/proc/\(getpid())/fd/"
    for prefix in ["/dev/fd/", "/proc/self/fd/", own] where path.hasPrefix(prefix) {
      return Int32(path.dropFirst(prefix.count))
    }
    return nil
  }

  /// A free name in the target's directory, hidden, naming this process.
  private static func temporaryName(beside target: String, path: String) throws(CLIError)
    -> String
  {
    let directory = (target as NSString).deletingLastPathComponent
    let base = (target as NSString).lastPathComponent
    let prefix = directory.isEmpty ? "" : directory + "/"
    for _ in 0..<100 {
      let name = "\(prefix).\(base).listtape-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
      var info = stat()
      if lstat(name, &info) != 0 && errno == ENOENT { return name }
    }
    throw .failure("cannot find a free temporary name beside \(path)", code: ExitCode.cannotCreate)
  }

  /// Moves the finished temporary file to `target`: over it when replacing, else only if
  /// nothing took the name meanwhile (link, which fails if it exists).
  private static func place(_ name: String, at target: String, replacing: Bool, path: String)
    throws(CLIError)
  {
    defer { _ = unlink(name) }
    if !replacing {
      if link(name, target) == 0 {
        syncDirectory(of: target)
        return
      }
      let e = errno
      if e == EEXIST {
        throw .failure(
          "\(path) was created by someone else while this command ran; nothing was written "
            + "to it", code: ExitCode.cannotCreate)
      }
      // File systems without hard links: check, then rename (a narrow race remains).
      var info = stat()
      if lstat(target, &info) == 0 {
        throw .failure(
          "\(path) was created by someone else while this command ran; nothing was written "
            + "to it", code: ExitCode.cannotCreate)
      }
    }
    guard rename(name, target) == 0 else {
      throw .failure(
        "cannot move the new content into \(path): \(String(cString: strerror(errno)))",
        code: ExitCode.cannotCreate)
    }
    syncDirectory(of: target)
  }

  /// Makes the new name durable (best effort: the content itself was synced).
  private static func syncDirectory(of target: String) {
    let directory = (target as NSString).deletingLastPathComponent
    let fd = Foundation.open(directory.isEmpty ? "." : directory, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return }
    _ = fsync(fd)
    _ = close(fd)
  }
}
