/// The common shape of a JSON Lines event read in one pass, with no JSON tree: one object of
/// known keys, each once, whose strings are ASCII without escapes, whose items are
/// identifier strings and whose time is a plain integer. Anything else, and anything the
/// protocol refuses, is declined (nil): `Event(jsonLine:)` then reads the line through the
/// JSON tree, which gives the same event or the exact error. A differential test holds the
/// two to the same events.
struct FastEventLine {
  private let p: UnsafeRawBufferPointer
  private var i = 0

  /// The fields a fast line may hold (a bit each, to refuse a repeat).
  private enum Key: Int, CaseIterable {
    case op, t, site, sections, section, items, item, parent, before, after, title, fields
    case label, multipleSelection

    init?(_ name: String) {
      switch name {
      case "op": self = .op
      case "t": self = .t
      case "site": self = .site
      case "sections": self = .sections
      case "section": self = .section
      case "items": self = .items
      case "item": self = .item
      case "parent": self = .parent
      case "before": self = .before
      case "after": self = .after
      case "title": self = .title
      case "fields": self = .fields
      case "label": self = .label
      case "multipleSelection": self = .multipleSelection
      default: return nil
      }
    }
  }

  private var seen = 0
  private var time: Int64?
  /// The string fields read, by `Key`.
  private var strings = [String?](repeating: nil, count: Key.allCases.count)
  /// The one list read (`items` or `sections`).
  private var list: [String]?
  private var map: [String: String]?
  private var flag: Bool?

  private init(_ p: UnsafeRawBufferPointer) { self.p = p }

  /// The event `bytes` hold when they have the fast shape, else nil.
  static func decode(_ bytes: UnsafeRawBufferPointer) -> Event? {
    var line = FastEventLine(bytes)
    guard line.object(), line.has(.op), let op = line.strings[Key.op.rawValue] else { return nil }
    if line.has(.site), line.strings[Key.site.rawValue]?.isEmpty != false { return nil }
    guard let operation = try? Event.operation(op, line) else { return nil }
    return Event(operation, time: line.time, site: line.strings[Key.site.rawValue])
  }

  // MARK: Scanning

  private mutating func skipSpace() {
    while i < p.count {
      let b = p[i]
      guard b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0D else { return }
      i += 1
    }
  }

  private mutating func take(_ byte: UInt8) -> Bool {
    skipSpace()
    guard i < p.count, p[i] == byte else { return false }
    i += 1
    return true
  }

  /// The bytes of a string of printable ASCII without escapes, after its opening quote.
  private mutating func rawString() -> Range<Int>? {
    guard take(UInt8(ascii: "\"")) else { return nil }
    let start = i
    while i < p.count {
      let b = p[i]
      if b == UInt8(ascii: "\"") {
        i += 1
        return start..<(i - 1)
      }
      guard b >= 0x20, b < 0x80, b != UInt8(ascii: "\\") else { return nil }
      i += 1
    }
    return nil
  }

  private mutating func string() -> String? {
    guard let r = rawString() else { return nil }
    return String(decoding: UnsafeRawBufferPointer(rebasing: p[r]), as: UTF8.self)
  }

  /// A plain JSON integer that fits an `Int64` (no fraction, no exponent).
  private mutating func integer() -> Int64? {
    skipSpace()
    var negative = false
    if i < p.count, p[i] == UInt8(ascii: "-") {
      negative = true
      i += 1
    }
    let start = i
    var v: Int64 = 0
    while i < p.count, p[i] >= 0x30, p[i] <= 0x39 {
      let d = Int64(p[i] - 0x30)
      let (m, o1) = v.multipliedReportingOverflow(by: 10)
      let (s, o2) = negative ? m.subtractingReportingOverflow(d) : m.addingReportingOverflow(d)
      guard !o1, !o2 else { return nil }
      v = s
      i += 1
    }
    let digits = i - start
    guard digits > 0, digits == 1 || p[start] != 0x30 else { return nil }
    if i < p.count, p[i] == UInt8(ascii: ".") || p[i] | 0x20 == UInt8(ascii: "e") { return nil }
    return v
  }

  private mutating func literal(_ word: StaticString) -> Bool {
    skipSpace()
    let n = word.utf8CodeUnitCount
    guard p.count - i >= n else { return false }
    for k in 0..<n where p[i + k] != word.utf8Start[k] { return false }
    i += n
    return true
  }

  private mutating func stringArray() -> [String]? {
    guard take(UInt8(ascii: "[")) else { return nil }
    var out: [String] = []
    if take(UInt8(ascii: "]")) { return out }
    repeat {
      guard let s = string() else { return nil }
      out.append(s)
    } while take(UInt8(ascii: ","))
    return take(UInt8(ascii: "]")) ? out : nil
  }

  private mutating func stringMap() -> [String: String]? {
    guard take(UInt8(ascii: "{")) else { return nil }
    var out: [String: String] = [:]
    if take(UInt8(ascii: "}")) { return out }
    repeat {
      guard let k = string(), take(UInt8(ascii: ":")), let v = string(),
        out.updateValue(v, forKey: k) == nil
      else { return nil }
    } while take(UInt8(ascii: ","))
    return take(UInt8(ascii: "}")) ? out : nil
  }

  /// Reads the line's one object, each field into its place; false to decline.
  private mutating func object() -> Bool {
    guard take(UInt8(ascii: "{")) else { return false }
    repeat {
      guard let name = string(), let k = Key(name), seen & (1 << k.rawValue) == 0,
        take(UInt8(ascii: ":"))
      else { return false }
      seen |= 1 << k.rawValue
      switch k {
      case .t:
        guard let v = integer(), v != Int64.min else { return false }
        time = v
      case .items, .sections:
        // Both in one line: declined (the tree reads whichever the op takes).
        guard list == nil, let l = stringArray() else { return false }
        list = l
      case .fields:
        guard let m = stringMap() else { return false }
        map = m
      case .multipleSelection:
        if literal("true") {
          flag = true
        } else if literal("false") {
          flag = false
        } else {
          return false
        }
      default:
        guard let s = string() else { return false }
        strings[k.rawValue] = s
      }
    } while take(UInt8(ascii: ","))
    guard take(UInt8(ascii: "}")) else { return false }
    skipSpace()
    return i == p.count
  }

  private func has(_ k: Key) -> Bool { seen & (1 << k.rawValue) != 0 }
}

/// A fast line's fields as `Event.operation` asks for them; anything missing, empty where an
/// identifier is needed, or not read declines the line (the error's text is never shown).
extension FastEventLine: EventFields {
  private static let declined = MalformedEvent("")

  private func key(_ name: String) throws(MalformedEvent) -> Key {
    guard let k = Key(name) else { throw Self.declined }
    return k
  }

  func has(_ key: String) -> Bool { Key(key).map { has($0) } ?? false }

  func id(_ key: String) throws(MalformedEvent) -> String {
    guard let s = strings[try self.key(key).rawValue], !s.isEmpty else { throw Self.declined }
    return s
  }

  func optionalID(_ key: String) throws(MalformedEvent) -> String? {
    has(key) ? try id(key) : nil
  }

  func string(_ key: String) throws(MalformedEvent) -> String {
    guard let s = strings[try self.key(key).rawValue] else { throw Self.declined }
    return s
  }

  func optionalString(_ key: String) throws(MalformedEvent) -> String? {
    strings[try self.key(key).rawValue]
  }

  func bool(_ key: String) throws(MalformedEvent) -> Bool {
    guard has(key), let flag else { throw Self.declined }
    return flag
  }

  func ids(_ key: String) throws(MalformedEvent) -> [String] {
    guard has(key), let list, !list.contains(where: { $0.isEmpty }) else { throw Self.declined }
    return list
  }

  func optionalFields(_ key: String) throws(MalformedEvent) -> [String: String]? {
    has(key) ? map : nil
  }

  func anchor() throws(MalformedEvent) -> Anchor {
    switch (has(.before), has(.after)) {
    case (true, false): return .before(try id("before"))
    case (false, true): return .after(try id("after"))
    default: throw Self.declined
    }
  }

  func nodes(_ key: String) throws(MalformedEvent) -> [OutlineNode] {
    try ids(key).map { OutlineNode($0) }
  }
}
