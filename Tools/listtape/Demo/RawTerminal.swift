#if canImport(Glibc)
import Glibc

/// The controlling terminal in raw mode on the alternate screen, for the demo's lifetime:
/// no echo, no line editing, keys byte by byte, Ctrl-C as a key; cursor hidden and line wrap
/// off. `restore()` (also run by `deinit`) puts everything back as it was.
final class RawTerminal {
  private var original = termios()
  private var active = false
  let input: Int32
  let output: Int32

  /// Switches `input`/`output` (a terminal) to raw mode and the alternate screen.
  init?(input: Int32 = 0, output: Int32 = 1) {
    self.input = input
    self.output = output
    guard isatty(input) == 1, isatty(output) == 1, tcgetattr(input, &original) == 0 else {
      return nil
    }
    var raw = original
    raw.c_lflag &= ~tcflag_t(ECHO | ICANON | ISIG | IEXTEN)
    raw.c_iflag &= ~tcflag_t(IXON | ICRNL | BRKINT | INPCK | ISTRIP)
    withUnsafeMutableBytes(of: &raw.c_cc) { cc in
      cc[Int(VMIN)] = 1
      cc[Int(VTIME)] = 0
    }
    guard tcsetattr(input, TCSAFLUSH, &raw) == 0 else { return nil }
    active = true
    // Alternate screen, hidden cursor, no auto-wrap (long lines are clipped, not wrapped).
    write("\u{1B}[?1049h\u{1B}[?25l\u{1B}[?7l\u{1B}[H\u{1B}[2J")
  }

  deinit { restore() }

  /// Leaves the alternate screen and restores the terminal's settings; safe to call twice.
  func restore() {
    guard active else { return }
    active = false
    write("\u{1B}[0m\u{1B}[?7h\u{1B}[?25h\u{1B}[?1049l")
    _ = tcsetattr(input, TCSAFLUSH, &original)
  }

  /// Rows and columns, with a fallback when the terminal does not say.
  var size: (rows: Int, columns: Int) {
    var ws = winsize()
    guard ioctl(output, UInt(TIOCGWINSZ), &ws) == 0, ws.ws_row > 0, ws.ws_col > 0 else {
      return (24, 80)
    }
    return (Int(ws.ws_row), Int(ws.ws_col))
  }

  /// Writes all of `text`; gives up quietly when the terminal is gone.
  func write(_ text: String) {
    var bytes = Array(text.utf8)
    var offset = 0
    while offset < bytes.count {
      let n = bytes.withUnsafeMutableBytes { raw -> Int in
        guard let base = raw.baseAddress else { return 0 }
        return Glibc.write(output, base + offset, raw.count - offset)
      }
      if n < 0 && errno == EINTR { continue }
      if n <= 0 { return }
      offset += n
    }
  }

  /// Reads what is available (blocking until something is); empty at end of input.
  func read() -> [UInt8] {
    var buffer = [UInt8](repeating: 0, count: 256)
    while true {
      let n = buffer.withUnsafeMutableBytes { raw -> Int in
        guard let base = raw.baseAddress else { return 0 }
        return Glibc.read(input, base, raw.count)
      }
      if n < 0 && errno == EINTR { continue }
      return n > 0 ? Array(buffer[..<n]) : []
    }
  }
}
#endif

/// A key the demo understands.
enum Key: Equatable {
  case up, down, left, right, home, end, pageUp, pageDown
  case activate, delete, quit
  case other
}

/// Turns terminal input bytes into keys; keeps an escape sequence split across reads.
struct KeyDecoder {
  private var pending: [UInt8] = []

  /// The keys in `bytes` (with what was pending before).
  mutating func keys(_ bytes: [UInt8]) -> [Key] {
    pending += bytes
    var keys: [Key] = []
    var i = 0
    let b = pending
    while i < b.count {
      let c = b[i]
      if c == 0x1B {
        // ESC [ X, ESC O X, ESC [ N ~; a lone ESC at the end waits for the next read.
        guard i + 1 < b.count else { break }
        let kind = b[i + 1]
        guard kind == UInt8(ascii: "[") || kind == UInt8(ascii: "O") else {
          keys.append(.other)
          i += 1
          continue
        }
        var j = i + 2
        while j < b.count && (b[j] < 0x40 || b[j] > 0x7E) { j += 1 }
        guard j < b.count else { break }
        let params = String(decoding: b[(i + 2)..<j], as: UTF8.self)
        switch (b[j], params) {
        case (UInt8(ascii: "A"), _): keys.append(.up)
        case (UInt8(ascii: "B"), _): keys.append(.down)
        case (UInt8(ascii: "C"), _): keys.append(.right)
        case (UInt8(ascii: "D"), _): keys.append(.left)
        case (UInt8(ascii: "H"), _), (UInt8(ascii: "~"), "1"), (UInt8(ascii: "~"), "7"):
          keys.append(.home)
        case (UInt8(ascii: "F"), _), (UInt8(ascii: "~"), "4"), (UInt8(ascii: "~"), "8"):
          keys.append(.end)
        case (UInt8(ascii: "~"), "5"): keys.append(.pageUp)
        case (UInt8(ascii: "~"), "6"): keys.append(.pageDown)
        case (UInt8(ascii: "~"), "3"): keys.append(.delete)
        default: keys.append(.other)
        }
        i = j + 1
        continue
      }
      switch c {
      case UInt8(ascii: "k"): keys.append(.up)
      case UInt8(ascii: "j"): keys.append(.down)
      case UInt8(ascii: "h"): keys.append(.left)
      case UInt8(ascii: "l"): keys.append(.right)
      case UInt8(ascii: "g"): keys.append(.home)
      case UInt8(ascii: "G"): keys.append(.end)
      case 0x0D, 0x0A, UInt8(ascii: " "): keys.append(.activate)
      case UInt8(ascii: "d"), 0x7F: keys.append(.delete)
      case UInt8(ascii: "q"), 0x03, 0x04: keys.append(.quit)
      default: keys.append(.other)
      }
      i += 1
    }
    pending.removeSubrange(..<i)
    return keys
  }

  /// Whether an escape sequence is waiting for its end.
  var isWaiting: Bool { !pending.isEmpty }

  /// A lone ESC that nothing followed: dropped.
  mutating func flush() { pending.removeAll() }
}
