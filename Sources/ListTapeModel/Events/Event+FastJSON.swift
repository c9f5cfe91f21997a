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
  private enum Key: Int {
    case op, t, site, sections, section, items, item, parent, before, after, title, fields
    case label, multipleSelection
  }

  private var opRange = 0..<0
  private var seen = 0
  private var time: Int64?
  /// The string fields read, by `Key`.
  private var strings = [String?](repeating: nil, count: 14)
  private var list: [String]?
  private var map: [String: String]?
  private var flag: Bool?

  private init(_ p: UnsafeRawBufferPointer) { self.p = p }

  /// The event `bytes` hold when they have the fast shape, else nil.
  static func decode(_ bytes: UnsafeRawBufferPointer) -> Event? {
    var line = FastEventLine(bytes)
    guard line.object() else { return nil }
    return line.event()
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

  private func key(_ r: Range<Int>) -> Key? {
    let name = UnsafeRawBufferPointer(rebasing: p[r])
    func equals(_ s: StaticString) -> Bool { Self.same(name, s) }
    switch name.count {
    case 1: return equals("t") ? .t : nil
    case 2: return equals("op") ? .op : nil
    case 4: return equals("site") ? .site : equals("item") ? .item : nil
    case 5:
      return equals("items")
        ? .items
        : equals("after")
          ? .after
          : equals("title")
            ? .title
            : equals("label") ? .label : nil
    case 6:
      return equals("parent")
        ? .parent
        : equals("before")
          ? .before
          : equals("fields")
            ? .fields : nil
    case 7: return equals("section") ? .section : nil
    case 8: return equals("sections") ? .sections : nil
    case 17: return equals("multipleSelection") ? .multipleSelection : nil
    default: return nil
    }
  }

  /// Reads the line's one object, each field into its place; false to decline.
  private mutating func object() -> Bool {
    guard take(UInt8(ascii: "{")) else { return false }
    repeat {
      guard let r = rawString(), let k = key(r), seen & (1 << k.rawValue) == 0,
        take(UInt8(ascii: ":"))
      else { return false }
      seen |= 1 << k.rawValue
      switch k {
      case .t:
        guard let v = integer(), v != Int64.min else { return false }
        time = v
      case .op:
        guard let r = rawString() else { return false }
        opRange = r
      case .items, .sections:
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

  /// Whether `bytes` spell `s`.
  private static func same(_ bytes: UnsafeRawBufferPointer, _ s: StaticString) -> Bool {
    guard bytes.count == s.utf8CodeUnitCount else { return false }
    for k in 0..<bytes.count where bytes[k] != s.utf8Start[k] { return false }
    return true
  }

  // MARK: The event

  private func has(_ k: Key) -> Bool { seen & (1 << k.rawValue) != 0 }

  /// A present identifier field (non-empty), or nil.
  private func id(_ k: Key) -> String? {
    guard let s = strings[k.rawValue], !s.isEmpty else { return nil }
    return s
  }

  /// Identifiers of `k` (the list read), all non-empty, or nil.
  private func ids(_ k: Key) -> [String]? {
    guard has(k), let l = list, !l.contains(where: { $0.isEmpty }) else { return nil }
    return l
  }

  private func nodes() -> [OutlineNode]? { ids(.items).map { $0.map { OutlineNode($0) } } }

  /// One of `before` and `after`, or nil.
  private func anchor() -> Anchor? {
    switch (has(.before), has(.after)) {
    case (true, false): return id(.before).map { .before($0) }
    case (false, true): return id(.after).map { .after($0) }
    default: return nil
    }
  }

  /// An optional identifier: absent is `.some(nil)`, present and empty nil (declined).
  private func optionalID(_ k: Key) -> String?? {
    guard has(k) else { return .some(nil) }
    return id(k).map { .some($0) }
  }

  private func event() -> Event? {
    guard has(.op) else { return nil }
    if has(.site), strings[Key.site.rawValue]?.isEmpty != false { return nil }
    if has(.sections) && has(.items) { return nil }
    let op = UnsafeRawBufferPointer(rebasing: p[opRange])
    func named(_ s: StaticString) -> Bool { Self.same(op, s) }
    let operation: ListOperation?
    if named("expand") {
      operation = ids(.items).map { .expand($0) }
    } else if named("collapse") {
      operation = ids(.items).map { .collapse($0) }
    } else if named("select") {
      operation = ids(.items).map { .select($0) }
    } else if named("update") {
      guard let item = id(.item) else { return nil }
      operation = .update(item: item, title: strings[Key.title.rawValue], fields: map)
    } else if named("deleteItems") {
      operation = ids(.items).map { .deleteItems($0) }
    } else if named("appendItems") {
      guard let items = nodes(), let section = optionalID(.section),
        let parent = optionalID(.parent)
      else { return nil }
      operation = .appendItems(items, section: section, parent: parent)
    } else if named("deselect") {
      if has(.items) {
        operation = ids(.items).map { .deselect($0) }
      } else {
        operation = .deselect(nil)
      }
    } else if named("moveItem") {
      guard let item = id(.item), let a = anchor() else { return nil }
      operation = .moveItem(item, a)
    } else if named("insertItems") {
      guard let items = nodes(), let a = anchor() else { return nil }
      operation = .insertItems(items, a)
    } else if named("reloadItems") {
      operation = ids(.items).map { .reloadItems($0) }
    } else if named("reconfigureItems") {
      operation = ids(.items).map { .reconfigureItems($0) }
    } else if named("mark") {
      operation = strings[Key.label.rawValue].map { .mark($0) }
    } else if named("replaceChildren") {
      guard let parent = id(.parent), let items = nodes() else { return nil }
      operation = .replaceChildren(parent: parent, items: items)
    } else if named("applySectionSnapshot") {
      guard let section = id(.section), let items = nodes() else { return nil }
      operation = .applySectionSnapshot(section: section, items: items)
    } else if named("appendSections") {
      operation = ids(.sections).map { .appendSections($0) }
    } else if named("deleteSections") {
      operation = ids(.sections).map { .deleteSections($0) }
    } else if named("reloadSections") {
      operation = ids(.sections).map { .reloadSections($0) }
    } else if named("insertSections") {
      guard let sections = ids(.sections), let a = anchor() else { return nil }
      operation = .insertSections(sections, a)
    } else if named("moveSection") {
      guard let section = id(.section), let a = anchor() else { return nil }
      operation = .moveSection(section, a)
    } else if named("deleteAllItems") {
      operation = .deleteAllItems
    } else if named("configure") {
      operation = flag.map { .configure(multipleSelection: $0) }
    } else {
      operation = nil
    }
    return operation.map { Event($0, time: time, site: strings[Key.site.rawValue]) }
  }
}
