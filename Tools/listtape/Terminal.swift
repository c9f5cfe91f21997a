import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Buffered standard output: commands print many short lines, so bytes are gathered and
/// written in large `write(2)` calls.
final class Output {
  private var buffer: [UInt8] = []
  private let fd: Int32
  private let limit = 1 << 16
  /// The error of the first write that failed (EPIPE: the reader of a pipe went away); a
  /// follow stops then, and any other command exits 74 when it ends (`CLI.main`).
  private(set) var failure: Int32?
  /// Whether a write failed.
  var failed: Bool { failure != nil }

  init(fileDescriptor: Int32 = 1) {
    fd = fileDescriptor
    buffer.reserveCapacity(limit + 4096)
  }

  deinit { flush() }

  func write(_ text: String) {
    var text = text
    text.withUTF8 { buffer.append(contentsOf: $0) }
    if buffer.count >= limit { flush() }
  }

  func line(_ text: String = "") {
    write(text)
    buffer.append(0x0A)
    if buffer.count >= limit { flush() }
  }

  /// Appends a line that `body` writes into the buffer as UTF-8 (no `String` made).
  func line(building body: (inout [UInt8]) -> Void) {
    body(&buffer)
    buffer.append(0x0A)
    if buffer.count >= limit { flush() }
  }

  /// Appends raw bytes, e.g. a JSONWriter's output; a large piece (a whole state) is
  /// written as it is, not copied into the buffer first.
  func bytes(_ bytes: [UInt8]) {
    if bytes.count >= limit {
      flush()
      if failure == nil && !writeAll(fd, bytes) { noteFailure() }
      return
    }
    buffer.append(contentsOf: bytes)
    if buffer.count >= limit { flush() }
  }

  /// Writes what is buffered; after a failed write nothing more is written (the output is
  /// already incomplete).
  func flush() {
    if failure == nil && !writeAll(fd, buffer) { noteFailure() }
    buffer.removeAll(keepingCapacity: true)
  }

  private func noteFailure() {
    let e = errno
    failure = e == 0 ? EIO : e
  }
}

/// Writes every byte to `fd`, retrying short writes and EINTR; stops quietly on an error
/// (a closed pipe: the reader went away) and returns false.
@discardableResult
func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
  var offset = 0
  while offset < bytes.count {
    let n = bytes.withUnsafeBytes { raw -> Int in
      guard let base = raw.baseAddress else { return 0 }
      #if canImport(Glibc)
      return Glibc.write(fd, base + offset, raw.count - offset)
      #else
      return Darwin.write(fd, base + offset, raw.count - offset)
      #endif
    }
    if n < 0 && errno == EINTR { continue }
    if n <= 0 { return false }
    offset += n
  }
  return true
}

/// Messages on standard error, one line at a time, unbuffered.
enum Diagnostics {
  /// Where messages go instead of standard error, for a command run in process (the claim
  /// sweep runs thousands); nil: standard error.
  @TaskLocal static var sink: (@Sendable (String) -> Void)?

  static func line(_ text: String) { write(text + "\n") }

  static func write(_ text: String) {
    // An interrupt is removing partial outputs: what the command says of it is noise.
    if PartialOutputs.interrupting.load(ordering: .relaxed) { return }
    if let sink {
      sink(text)
    } else {
      FileHandle.standardError.write(Data(text.utf8))
    }
  }
}

/// Whether to colour output, decided once per run.
enum ColorChoice: String, ChoiceValue {
  case always, never, auto

  /// `--color` first, then `NO_COLOR` (any non-empty value), then `TERM=dumb`, then isatty.
  static func resolve(flag: ColorChoice?, environment: [String: String], stdoutIsTTY: Bool) -> Bool
  {
    switch flag {
    case .always: return true
    case .never: return false
    case .auto, .none: break
    }
    if let noColor = environment["NO_COLOR"], !noColor.isEmpty { return false }
    if environment["TERM"] == "dumb" { return false }
    return stdoutIsTTY
  }
}

/// ANSI styling that collapses to plain text when colour is off.
struct Style {
  var enabled: Bool

  func bold(_ s: String) -> String { wrap(s, "1") }
  func dim(_ s: String) -> String { wrap(s, "2") }
  func red(_ s: String) -> String { wrap(s, "31") }
  func green(_ s: String) -> String { wrap(s, "32") }
  func yellow(_ s: String) -> String { wrap(s, "33") }
  func blue(_ s: String) -> String { wrap(s, "34") }
  func cyan(_ s: String) -> String { wrap(s, "36") }
  func inverse(_ s: String) -> String { wrap(s, "7") }

  /// What `red` makes of the text `body` appends to `bytes`, appended to `bytes`.
  func red(into bytes: inout [UInt8], _ body: (inout [UInt8]) -> Void) {
    wrap("31", into: &bytes, body)
  }

  /// The text `body` appends to `bytes` in the style of SGR `code` (`"1"` bold, `"36"`
  /// cyan…), as the `String` methods wrap it.
  func wrap(_ code: StaticString, into bytes: inout [UInt8], _ body: (inout [UInt8]) -> Void) {
    if enabled {
      bytes.append(contentsOf: [0x1B, UInt8(ascii: "[")])
      bytes.append(
        contentsOf: UnsafeBufferPointer(start: code.utf8Start, count: code.utf8CodeUnitCount))
      bytes.append(UInt8(ascii: "m"))
    }
    body(&bytes)
    if enabled {
      bytes.append(contentsOf: [0x1B, UInt8(ascii: "["), UInt8(ascii: "0"), UInt8(ascii: "m")])
    }
  }

  private func wrap(_ s: String, _ code: String) -> String {
    enabled ? "\u{1B}[\(code)m\(s)\u{1B}[0m" : s
  }
}

enum Terminal {
  static func isTTY(_ fd: Int32) -> Bool { isatty(fd) == 1 }

  /// Bytes a pipe on standard output is asked to hold (Linux's default limit for one
  /// process, `/proc/sys/fs/pipe-max-size`).
  static let pipeBytes: Int32 = 1 << 20

  /// Widens the pipe standard output writes to (Linux): a state's JSON is megabytes, and
  /// through the default 64 KiB a writer and its reader take turns every 64 KiB; `show
  /// --json` into a pipe ran 0.85-0.92 × the time with 1 MiB (docs/performance.md). Anything
  /// else (a file, a terminal, a pipe already as wide, a refusal) is left as it is.
  static func widenOutputPipe() {
    #if os(Linux)
    var info = stat()
    guard fstat(1, &info) == 0, info.st_mode & S_IFMT == S_IFIFO else { return }
    let getSize: Int32 = 1032  // F_GETPIPE_SZ
    let setSize: Int32 = 1031  // F_SETPIPE_SZ
    guard fcntl(1, getSize) < pipeBytes else { return }
    _ = fcntl(1, setSize, pipeBytes)
    #endif
  }
}

/// A progress line on standard error, redrawn in place at most a few times a second, and
/// only when standard error is a terminal.
final class Progress {
  private let label: String
  private let enabled: Bool
  private var lastDraw: UInt64 = 0
  private var drawn = false

  init(_ label: String, enabled: Bool = Terminal.isTTY(2)) {
    self.label = label
    self.enabled = enabled
  }

  /// A progress line for a scan of `events` events: only long scans draw one.
  convenience init(_ label: String, events: Int) {
    self.init(label, enabled: Terminal.isTTY(2) && events >= 100_000)
  }

  func update(_ done: Int, _ total: Int) {
    guard enabled else { return }
    let now = DispatchTime.now().uptimeNanoseconds
    guard now - lastDraw > 100_000_000 || !drawn else { return }
    lastDraw = now
    drawn = true
    let percent = total > 0 ? done * 100 / total : 0
    Diagnostics.write("\r\u{1B}[K\(label) \(done)/\(total) events (\(percent)%)")
  }

  /// Erases the line before other output goes to the terminal.
  func finish() {
    guard enabled, drawn else { return }
    Diagnostics.write("\r\u{1B}[K")
    drawn = false
  }
}
