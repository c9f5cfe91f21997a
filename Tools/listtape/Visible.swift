/// Text from a log (ids, titles, fields, labels, sites, fault reasons) as a person's
/// terminal may show it: a log comes from an app, or from anyone, and a control character
/// in an id would move the cursor, clear the screen or retitle the window. C0 controls, DEL
/// and C1 controls are written as escapes (`\n`, `\t`, `\r`, `\u001b`); everything else,
/// other scripts and emoji included, is written as it is. JSON outputs escape by JSON's
/// rules instead, and keep every id exactly.
enum Visible {
  /// `text` with its control characters escaped; `text` itself when it has none.
  static func text(_ text: String) -> String {
    var text = text
    let clean = text.withUTF8 { !needsEscapes($0) }
    if clean { return text }
    var bytes: [UInt8] = []
    text.withUTF8 { append($0, to: &bytes) }
    return String(decoding: bytes, as: UTF8.self)
  }

  /// Appends the UTF-8 `text` to `out`, its control characters escaped: a copy when it
  /// has none (nearly always: a list of 100k rows goes through here id by id).
  static func append(_ text: some Collection<UInt8>, to out: inout [UInt8]) {
    if text.withContiguousStorageIfAvailable({ !needsEscapes($0) }) == true {
      out.append(contentsOf: text)
      return
    }
    var previous: UInt8 = 0
    for c in text {
      defer { previous = c }
      if c == 0xC2 {
        continue  // Written with the byte after it: a C1 control, or the character it starts.
      }
      if previous == 0xC2 {
        if (0x80...0x9F).contains(c) {
          escape(c, to: &out)
        } else {
          out.append(0xC2)
          out.append(c)
        }
        continue
      }
      if c < 0x20 || c == 0x7F {
        escape(c, to: &out)
      } else {
        out.append(c)
      }
    }
    if previous == 0xC2 { out.append(0xC2) }
  }

  /// Whether the UTF-8 `text` holds a character `append` escapes.
  static func needsEscapes(_ text: UnsafeBufferPointer<UInt8>) -> Bool {
    // Printable ASCII (0x20...0x7E) cannot need one; only then look closer.
    for (i, c) in text.enumerated() where c < 0x20 || c >= 0x7F {
      if c < 0x20 || c == 0x7F { return true }
      if c == 0xC2, i + 1 < text.count, (0x80...0x9F).contains(text[i + 1]) { return true }
    }
    return false
  }

  private static func escape(_ c: UInt8, to out: inout [UInt8]) {
    out.append(UInt8(ascii: "\\"))
    switch c {
    case 0x0A: out.append(UInt8(ascii: "n"))
    case 0x09: out.append(UInt8(ascii: "t"))
    case 0x0D: out.append(UInt8(ascii: "r"))
    default:
      let hex: [UInt8] = Array("0123456789abcdef".utf8)
      out.append(contentsOf: Array("u00".utf8))
      out.append(hex[Int(c >> 4)])
      out.append(hex[Int(c & 0xF)])
    }
  }
}
