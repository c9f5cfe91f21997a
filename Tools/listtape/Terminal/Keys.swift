/// A key press, decoded from the bytes a terminal sends in raw mode.
enum Key: Equatable {
  case left, right, up, down, pageUp, pageDown, home, end
  case enter, escape, backspace, interrupt
  case character(Character)
  /// A sequence the viewer does not use.
  case other
}

/// Turns raw terminal bytes into keys: ANSI/VT escape sequences for arrows, paging, Home
/// and End (both the `CSI` and `SS3` forms), control keys, and UTF-8 text.
struct KeyDecoder {
  private var pending: [UInt8] = []

  /// Decodes what `bytes` complete; an unfinished UTF-8 character waits for the next call.
  /// A lone ESC at the end of a read is the Escape key (terminals send sequences whole).
  mutating func feed(_ bytes: [UInt8]) -> [Key] {
    pending += bytes
    var keys: [Key] = []
    var i = 0
    let b = pending
    while i < b.count {
      let c = b[i]
      switch c {
      case 0x1B:
        guard i + 1 < b.count else {
          keys.append(.escape)
          i += 1
          continue
        }
        let (key, length) = Self.escape(b, from: i)
        keys.append(key)
        i += length
      case 0x0D, 0x0A:
        keys.append(.enter)
        i += 1
      case 0x7F, 0x08:
        keys.append(.backspace)
        i += 1
      case 0x03:
        keys.append(.interrupt)
        i += 1
      case 0x00..<0x20:
        keys.append(.other)
        i += 1
      case 0x20..<0x80:
        keys.append(.character(Character(Unicode.Scalar(c))))
        i += 1
      default:
        let length = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1
        guard i + length <= b.count else {
          pending = Array(b[i...])
          return keys
        }
        let text = String(decoding: b[i..<(i + length)], as: UTF8.self)
        keys.append(text.first.map(Key.character) ?? .other)
        i += length
      }
    }
    pending = []
    return keys
  }

  /// The key an escape sequence starting at `start` names, and its length in bytes.
  private static func escape(_ b: [UInt8], from start: Int) -> (Key, Int) {
    let introducer = b[start + 1]
    guard introducer == UInt8(ascii: "[") || introducer == UInt8(ascii: "O") else {
      // ESC followed by an ordinary byte (Alt+key): the Escape key, the byte read next.
      return (.escape, 1)
    }
    // Parameters and intermediates up to the final byte (0x40...0x7E).
    var j = start + 2
    while j < b.count && !(0x40...0x7E).contains(b[j]) { j += 1 }
    guard j < b.count else { return (.other, b.count - start) }
    let params = String(decoding: b[(start + 2)..<j], as: UTF8.self)
    let final = Character(Unicode.Scalar(b[j]))
    let length = j - start + 1
    switch final {
    case "A": return (.up, length)
    case "B": return (.down, length)
    case "C": return (.right, length)
    case "D": return (.left, length)
    case "H": return (.home, length)
    case "F": return (.end, length)
    case "~":
      switch params.split(separator: ";").first ?? "" {
      case "1", "7": return (.home, length)
      case "4", "8": return (.end, length)
      case "5": return (.pageUp, length)
      case "6": return (.pageDown, length)
      default: return (.other, length)
      }
    default: return (.other, length)
    }
  }
}
