import ListTapeModel

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Text renderings for people: the list at an event, one event per line, times.
enum Render {
  /// `2020-09-22T10:22:13.120Z` for milliseconds since the epoch.
  static func time(_ ms: Int64) -> String {
    var bytes: [UInt8] = []
    time(ms, into: &bytes)
    return String(decoding: bytes, as: UTF8.self)
  }

  /// The last moment `time(_:into:)` spells by arithmetic: 9999-12-31T23:59:59.999Z.
  static let arithmeticTimes: Range<Int64> = 0..<253_402_300_800_000

  /// `time(_:)` appended to `out`: from the calendar's arithmetic (no `gmtime_r`, no
  /// `String`) for years 1970...9999, which a listing of a million events meets a million
  /// times; through `gmtimeText` for the rest.
  static func time(_ ms: Int64, into out: inout [UInt8]) {
    guard arithmeticTimes.contains(ms) else {
      out.append(contentsOf: gmtimeText(ms).utf8)
      return
    }
    // Days since 1970-01-01 to a civil date (H. Hinnant's `civil_from_days`).
    let z = ms / 86_400_000 + 719_468
    let era = z / 146_097
    let doe = z - era * 146_097
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
    let mp = (5 * doy + 2) / 153
    let month = mp < 10 ? mp + 3 : mp - 9
    let year = yoe + era * 400 + (month <= 2 ? 1 : 0)
    let day = doy - (153 * mp + 2) / 5 + 1
    let inDay = ms % 86_400_000
    // Constant divisors: each digit is a multiplication, not a division.
    func digit(_ n: Int64) { out.append(UInt8(truncatingIfNeeded: 0x30 &+ n)) }
    func two(_ n: Int64) {
      digit(n / 10)
      digit(n % 10)
    }
    func mark(_ c: Unicode.Scalar) { out.append(UInt8(ascii: c)) }
    two(year / 100)
    two(year % 100)
    mark("-")
    two(month)
    mark("-")
    two(day)
    mark("T")
    two(inDay / 3_600_000)
    mark(":")
    two(inDay / 60_000 % 60)
    mark(":")
    two(inDay / 1_000 % 60)
    mark(".")
    digit(inDay % 1_000 / 100)
    two(inDay % 100)
    mark("Z")
  }

  /// `time(_:)` by the C library's calendar: times before 1970 and after 9999.
  static func gmtimeText(_ ms: Int64) -> String {
    // Floor division that cannot overflow, down to Int64.min.
    let below = ms % 1000 < 0
    var seconds = time_t(ms / 1000 - (below ? 1 : 0))
    let millis = Int(ms % 1000 + (below ? 1000 : 0))
    var parts = tm()
    guard gmtime_r(&seconds, &parts) != nil else { return "\(ms) ms" }
    func pad(_ n: Int32, _ width: Int = 2) -> String {
      let s = String(n)
      return String(repeating: "0", count: max(0, width - s.count)) + s
    }
    let ms3 = String(repeating: "0", count: 3 - String(millis).count) + String(millis)
    return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1))-\(pad(parts.tm_mday))T"
      + "\(pad(parts.tm_hour)):\(pad(parts.tm_min)):\(pad(parts.tm_sec)).\(ms3)Z"
  }

  /// `5 min 13.2 s`, `850 ms`, `2 h 3 min`.
  static func duration(milliseconds ms: Int64) -> String {
    if ms < 1000 { return "\(ms) ms" }
    let s = Double(ms) / 1000
    if s < 60 { return "\(decimal(s, 1)) s" }
    let total = ms / 1000
    if total < 3600 { return "\(total / 60) min \(total % 60) s" }
    if total < 86400 { return "\(total / 3600) h \(total % 3600 / 60) min" }
    return "\(total / 86400) d \(total % 86400 / 3600) h"
  }

  /// `x` with `places` decimals, without Foundation's locale handling.
  static func decimal(_ x: Double, _ places: Int) -> String {
    var scale = 1.0
    for _ in 0..<places { scale *= 10 }
    let n = Int64((abs(x) * scale).rounded())
    let whole = n / Int64(scale)
    var frac = String(n % Int64(scale))
    frac = String(repeating: "0", count: max(0, places - frac.count)) + frac
    return (x < 0 ? "-" : "") + (places > 0 ? "\(whole).\(frac)" : "\(whole)")
  }

  /// `1,234,567` for large counts, so figures read at a glance.
  static func count(_ n: Int) -> String { Counting.count(n) }

  /// `1 event`, `2 events`.
  static func plural(_ n: Int, _ word: String, _ plural: String? = nil) -> String {
    Counting.plural(n, word, plural)
  }

  // MARK: - State

  /// The header line of `show`: where in the log the state is, event N's fault, and
  /// whether the state is not the recorded one.
  static func header(
    event n: Int, of total: Int, event: Event?, style: Style, fault: ListFault? = nil,
    exact: Bool = true, site: Bool = true
  ) -> String {
    var line = style.bold("event \(n)") + " of \(total)"
    if let event {
      line += "  " + style.cyan(event.op)
      if let t = event.time { line += "  " + time(t) }
      if case .mark(let label) = event.operation {
        line += "  " + style.yellow("“\(Visible.text(label))”")
      }
      if site, let s = event.site { line += "  " + self.site(s, style: style) }
    } else if n > 0 {
      line += "  " + style.dim("(lost in a salvage, or unreadable after lost events)")
    } else {
      line += "  " + style.dim("(the empty list before the first event)")
    }
    if let fault { line += "  " + style.red("fault: \(Visible.text(fault.description))") }
    if !exact { line += "  " + style.yellow("(not the recorded state)") }
    return line
  }

  /// The list as a person reads it: sections as headers, rows indented by level, ▸/▾ on
  /// items with children, ✓ on selected rows, titles in quotes; hidden rows only with `all`.
  static func state(_ state: ListState, all: Bool, style: Style, into out: Output) {
    let sections = state.sections
    let selected = state.numberOfSelectedItems
    var summary = [
      plural(sections.count, "section"), plural(state.numberOfAllItems, "item"),
      "\(count(state.numberOfItems)) visible",
      "\(count(selected)) selected",
    ]
    summary.append(state.allowsMultipleSelection ? "multiple selection" : "single selection")
    out.line(style.dim(summary.joined(separator: " · ")))
    if sections.isEmpty {
      out.line()
      out.line(style.dim("(no sections)"))
      return
    }
    for ref in sections {
      out.line()
      let visible = state.numberOfItems(in: ref)
      let total = state.numberOfAllItems(in: ref)
      out.line(
        style.bold(style.blue(Visible.text(state.id(of: ref)))) + "  "
          + style.dim("\(plural(total, "item")), \(count(visible)) visible"))
      var bytes: [UInt8] = []
      bytes.reserveCapacity(1 << 16 + 4096)
      var any = false
      state.forEachRowText(in: ref, visibleOnly: !all) { row in
        any = true
        Render.row(row, style: style, into: &bytes)
        bytes.append(0x0A)
        if bytes.count >= 1 << 16 {
          out.bytes(bytes)
          bytes.removeAll(keepingCapacity: true)
        }
      }
      out.bytes(bytes)
      if !any { out.line(style.dim("  (empty)")) }
    }
  }

  /// `row(_:style:)` written from the state's bytes (no `String` per row), byte for byte.
  static func row(_ row: RowText, style: Style, into line: inout [UInt8]) {
    func ascii(_ s: StaticString) {
      line.append(contentsOf: UnsafeBufferPointer(start: s.utf8Start, count: s.utf8CodeUnitCount))
    }
    func open(_ code: StaticString) {
      guard style.enabled else { return }
      ascii("\u{1B}[")
      ascii(code)
      ascii("m")
    }
    func close() { if style.enabled { ascii("\u{1B}[0m") } }
    func text() {
      Visible.append(row.id, to: &line)
      if let title = row.title, !title.elementsEqual(row.id) {
        ascii("  ")
        open("36")
        ascii("\"")
        Visible.append(title, to: &line)
        ascii("\"")
        close()
      }
      if !row.fields.isEmpty {
        ascii("  ")
        open("2")
        ascii("[")
        for (i, field) in row.fields.enumerated() {
          if i > 0 { ascii(", ") }
          Visible.append(field.key, to: &line)
          ascii("=")
          Visible.append(field.value, to: &line)
        }
        ascii("]")
        close()
      }
    }
    if !row.isVisible { open("2") }
    for _ in 0...row.level { ascii("  ") }
    if row.hasChildren { ascii(row.expanded ? "▾ " : "▸ ") } else { ascii("  ") }
    if !row.isVisible {
      text()
      ascii("  (hidden)")
      close()
    } else if row.isSelected {
      open("7")
      open("32")
      text()
      close()
      close()
      ascii(" ")
      open("32")
      ascii("✓")
      close()
    } else {
      text()
    }
  }

  static func row(_ row: OutlineRow, style: Style) -> String {
    let indent = String(repeating: "  ", count: row.level + 1)
    let disclosure = row.hasChildren ? (row.expanded ? "▾ " : "▸ ") : "  "
    var text = Visible.text(row.id)
    if let title = row.title, title != row.id {
      text += "  " + style.cyan("\"\(Visible.text(title))\"")
    }
    if let fields = row.fields, !fields.isEmpty {
      let pairs = fields.keys.sorted().map {
        "\(Visible.text($0))=\(Visible.text(fields[$0] ?? ""))"
      }
      text += "  " + style.dim("[" + pairs.joined(separator: ", ") + "]")
    }
    var line = indent + disclosure
    if !row.isVisible {
      line = style.dim(line + text + "  (hidden)")
    } else if row.isSelected {
      line += style.inverse(style.green(text)) + " " + style.green("✓")
    } else {
      line += text
    }
    return line
  }

  // MARK: - Events

  /// One event on one line: op, then what it does in a few words, then its site.
  static func event(_ event: Event, number: Int?, style: Style) -> String {
    var line: [UInt8] = []
    self.event(event, number: number, style: style, into: &line)
    return String(decoding: line, as: UTF8.self)
  }

  /// `event(_:number:style:)` appended to `line` (no `String` but the description's).
  static func event(_ event: Event, number: Int?, style: Style, into line: inout [UInt8]) {
    var first = true
    func part(_ code: StaticString?, _ body: (inout [UInt8]) -> Void) {
      if !first { line.append(contentsOf: [0x20, 0x20]) }
      first = false
      guard let code else { return body(&line) }
      style.wrap(code, into: &line, body)
    }
    if let number {
      part("1") {
        $0.append(UInt8(ascii: "#"))
        $0.append(contentsOf: String(number).utf8)
      }
    }
    if let t = event.time { part("2") { time(t, into: &$0) } }
    part("36") { $0.append(contentsOf: event.op.utf8) }
    let detail = describe(event.operation)
    if !detail.isEmpty { part(nil) { $0.append(contentsOf: detail.utf8) } }
    if let site = event.site {
      part("2") {
        $0.append(contentsOf: "at ".utf8)
        Visible.append(site.utf8, to: &$0)
      }
    }
  }

  /// Where an event was made, as every text output writes it: `at ListVC.swift:42 tap(_:)`.
  static func site(_ site: String, style: Style) -> String {
    style.dim("at \(Visible.text(site))")
  }

  /// An operation's arguments in a line (`EventText.describe`), its control characters
  /// escaped (`Visible`).
  static func describe(_ op: ListOperation) -> String { Visible.text(EventText.describe(op)) }
}
