#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The terminal settings to put back, readable from a signal handler. On the heap: as a
/// Swift global, AddressSanitizer sized it below what `tcgetattr` writes.
nonisolated(unsafe) private let savedAttributes: UnsafeMutablePointer<termios> = {
  let p = UnsafeMutablePointer<termios>.allocate(capacity: 1)
  p.initialize(to: termios())
  return p
}()
nonisolated(unsafe) private var rawModeActive: sig_atomic_t = 0
/// Set by SIGWINCH; the event loop redraws when it sees it.
nonisolated(unsafe) private var resized: sig_atomic_t = 0

/// Restores the cooked mode and the main screen: async-signal-safe (tcsetattr and write only).
private func restoreTerminalNow() {
  guard rawModeActive != 0 else { return }
  rawModeActive = 0
  let leave: StaticString = "\u{1B}[0m\u{1B}[?7h\u{1B}[?25h\u{1B}[?1049l"
  _ = write(1, leave.utf8Start, leave.utf8CodeUnitCount)
  _ = tcsetattr(0, TCSAFLUSH, savedAttributes)
}

/// A full-screen session (scrub, demo): raw keyboard input from standard input, the
/// alternate screen on standard output with line wrap off, the terminal put back on close,
/// on errors, and on SIGINT/SIGTERM/SIGHUP unless the caller handles those itself.
final class RawTerminal {
  private var closed = false
  private let handlesSignals: Bool
  /// The descriptor keys arrive on.
  let input: Int32 = 0

  /// Enters raw mode and the alternate screen; nil when standard input is not a terminal.
  /// With `handlesSignals`, SIGINT/SIGTERM/SIGHUP/SIGQUIT restore the terminal and end the
  /// process; without, the caller catches them (and must call `close()`).
  init?(handlesSignals: Bool = true) {
    self.handlesSignals = handlesSignals
    guard isatty(0) == 1, tcgetattr(0, savedAttributes) == 0 else { return nil }
    var raw = savedAttributes.pointee
    cfmakeraw(&raw)
    // Keep output processing off (we write \r\n ourselves) but read byte by byte.
    withUnsafeMutableBytes(of: &raw.c_cc) { cc in
      cc[Int(VMIN)] = 1
      cc[Int(VTIME)] = 0
    }
    guard tcsetattr(0, TCSAFLUSH, &raw) == 0 else { return nil }
    rawModeActive = 1
    if handlesSignals {
      let onSignal: @convention(c) (Int32) -> Void = { sig in
        restoreTerminalNow()
        signal(sig, SIG_DFL)
        raise(sig)
      }
      for sig in [SIGINT, SIGTERM, SIGHUP, SIGQUIT] { signal(sig, onSignal) }
      signal(SIGWINCH) { _ in resized = 1 }
    }
    // A spawning parent may have blocked these, and the mask survives exec.
    var unblock = sigset_t()
    sigemptyset(&unblock)
    for sig in [SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGWINCH] { sigaddset(&unblock, sig) }
    pthread_sigmask(SIG_UNBLOCK, &unblock, nil)
    write("\u{1B}[?1049h\u{1B}[?25l\u{1B}[?7l\u{1B}[H\u{1B}[2J")
  }

  deinit { close() }

  /// Leaves raw mode and the alternate screen; safe to call more than once.
  func close() {
    guard !closed else { return }
    closed = true
    restoreTerminalNow()
    if handlesSignals {
      for sig in [SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGWINCH] { signal(sig, SIG_DFL) }
    }
  }

  /// Blocks until input arrives; the bytes read, empty at end of input.
  func read() -> [UInt8] {
    while true {
      guard let bytes = read(timeout: -1) else { return [] }
      if !bytes.isEmpty { return bytes }
    }
  }

  /// Rows and columns of the terminal (24×80 when it will not say).
  var size: (rows: Int, columns: Int) {
    var ws = winsize()
    #if canImport(Glibc)
    let request = UInt(TIOCGWINSZ)
    #else
    let request = TIOCGWINSZ
    #endif
    if ioctl(1, request, &ws) == 0, ws.ws_row > 0, ws.ws_col > 0 {
      return (Int(ws.ws_row), Int(ws.ws_col))
    }
    return (24, 80)
  }

  /// Whether the window changed size since the last call.
  func takeResize() -> Bool {
    guard resized != 0 else { return false }
    resized = 0
    return true
  }

  /// Waits up to `timeout` milliseconds for input; returns the bytes read (empty on timeout
  /// or a signal), nil at end of input.
  func read(timeout: Int32) -> [UInt8]? {
    var fds = pollfd(fd: 0, events: Int16(POLLIN), revents: 0)
    let ready = poll(&fds, 1, timeout)
    if ready <= 0 { return [] }
    var buffer = [UInt8](repeating: 0, count: 256)
    let n = buffer.withUnsafeMutableBytes { raw -> Int in
      guard let base = raw.baseAddress else { return -1 }
      return rawRead(0, base, raw.count)
    }
    if n < 0 { return errno == EINTR || errno == EAGAIN ? [] : nil }
    if n == 0 { return nil }
    return Array(buffer[..<n])
  }

  /// Writes all of `text` to standard output.
  func write(_ text: String) { writeAll(1, Array(text.utf8)) }
}

private func rawRead(_ fd: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int {
  #if canImport(Glibc)
  return Glibc.read(fd, buffer, count)
  #else
  return Darwin.read(fd, buffer, count)
  #endif
}
