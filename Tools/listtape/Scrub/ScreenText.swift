/// Plain-text measures of lines that may hold ANSI styling.
enum ScreenText {
  /// `line` cut to `width` visible characters (escape sequences cost nothing), with the
  /// styling reset when it was cut inside a styled run.
  static func fit(_ line: String, width: Int) -> String {
    var out = ""
    var visible = 0
    var inEscape = false
    var styled = false
    for ch in line {
      if inEscape {
        out.append(ch)
        if let a = ch.asciiValue, (0x40...0x7E).contains(a), ch != "[" { inEscape = false }
        continue
      }
      if ch == "\u{1B}" {
        inEscape = true
        styled = true
        out.append(ch)
        continue
      }
      if visible >= width {
        return styled ? out + "\u{1B}[0m" : out
      }
      out.append(ch)
      visible += 1
    }
    return out
  }

  /// Visible characters of `line` (escape sequences excluded).
  static func width(_ line: String) -> Int {
    var n = 0
    var inEscape = false
    for ch in line {
      if inEscape {
        if let a = ch.asciiValue, (0x40...0x7E).contains(a), ch != "[" { inEscape = false }
      } else if ch == "\u{1B}" {
        inEscape = true
      } else {
        n += 1
      }
    }
    return n
  }
}
