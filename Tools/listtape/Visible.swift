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
    return text.withUTF8 { utf8 in
      guard needsEscapes(utf8) else { return nil }
      var bytes: [UInt8] = []
      escaping(utf8, to: &bytes)
      return String(decoding: bytes, as: UTF8.self)
    } ?? text
  }

  /// Appends the UTF-8 `text` to `out`, its control characters escaped: a copy when it
  /// has none (nearly always: a list of 100k rows goes through here id by id).
  static func append(_ text: some Collection<UInt8>, to out: inout [UInt8]) {
    let done: Bool? = text.withContiguousStorageIfAvailable { utf8 in
      if needsEscapes(utf8) { escaping(utf8, to: &out) } else { out.append(contentsOf: utf8) }
      return true
    }
    if done == nil { Array(text).withUnsafeBufferPointer { escaping($0, to: &out) } }
  }

  /// Whether the UTF-8 `text` holds a character `append` escapes.
  static func needsEscapes(_ text: UnsafeBufferPointer<UInt8>) -> Bool {
    // Printable ASCII (0x20...0x7E) cannot need one; only then look closer.
    for (i, c) in text.enumerated() where c < 0x20 || c >= 0x7F {
      if isControl(text, i) { return true }
    }
    return false
  }

  /// Whether the byte at `i` is a C0 control or DEL, or starts a C1 control (`C2 80...9F`).
  private static func isControl(_ text: UnsafeBufferPointer<UInt8>, _ i: Int) -> Bool {
    let c = text[i]
    return c < 0x20 || c == 0x7F
      || (c == 0xC2 && i + 1 < text.count && (0x80...0x9F).contains(text[i + 1]))
  }

  private static func escaping(_ text: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) {
    var i = 0
    while i < text.count {
      if isControl(text, i) {
        // A C1 control is its second byte's code point.
        if text[i] == 0xC2 { i += 1 }
        escape(text[i], to: &out)
      } else {
        out.append(text[i])
      }
      i += 1
    }
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
