import ListTapeInvestigate
import ListTapeJSON
import ListTapeModel

/// A `StateDiff` on a terminal (coloured by what each line says) and as JSON for scripts.
extension DiffText {
  /// The diff's lines (`lines(_:context:)`), coloured.
  static func lines(_ diff: StateDiff, context: Int, style: Style) -> [String] {
    lines(diff, context: context).map { colored($0, style) }
  }

  static func colored(_ line: DiffLine, _ style: Style) -> String {
    let text = Visible.text(line.text)
    switch line.kind {
    case .inserted: return style.green(text)
    case .deleted: return style.red(text)
    case .changed: return style.yellow(text)
    case .disclosure: return style.cyan(text)
    case .section: return style.bold(style.blue(text))
    case .unchanged: return text
    case .folded, .summary: return style.dim(text)
    }
  }

  /// The diff's lines then a count; `no differences` when the states match.
  static func print(_ diff: StateDiff, context: Int, style: Style, into out: Output) {
    for line in text(diff, context: context) { out.line(colored(line, style)) }
  }

  /// The diff as one JSON object for tools.
  static func write(_ diff: StateDiff, to w: inout JSONWriter) {
    func place(_ p: ItemPlace) {
      w.beginObject()
      w.field("section", p.section)
      w.field("parent", p.parent)
      w.field("after", p.after)
      w.endObject()
    }
    func strings(_ key: String, _ list: [String]) {
      w.key(key)
      w.beginArray()
      for s in list { w.string(s) }
      w.endArray()
    }
    func ids(_ key: String, _ list: IDList) {
      w.key(key)
      w.beginArray()
      for i in 0..<list.count { list.withID(i) { w.string(utf8: $0) } }
      w.endArray()
    }
    /// `{"id": id, key: {"from": …, "to": …}}` for a change with two sides.
    func change(_ id: String, _ key: String, _ sides: (inout JSONWriter) -> Void) {
      w.beginObject()
      w.field("id", id)
      w.key(key)
      w.beginObject()
      sides(&w)
      w.endObject()
      w.endObject()
    }
    w.beginObject()
    w.key("sections")
    w.beginObject()
    strings("inserted", diff.sectionsInserted)
    strings("deleted", diff.sectionsDeleted)
    strings("moved", diff.sectionsMoved)
    w.endObject()
    for (key, placeKey, list) in [
      ("inserted", "at", diff.inserted), ("deleted", "was", diff.deleted),
    ] {
      w.key(key)
      w.beginArray()
      for (id, p) in list {
        w.beginObject()
        w.field("id", id)
        w.key(placeKey)
        place(p)
        w.endObject()
      }
      w.endArray()
    }
    w.key("moved")
    w.beginArray()
    for (id, from, to) in diff.moved {
      w.beginObject()
      w.field("id", id)
      w.key("from")
      place(from)
      w.key("to")
      place(to)
      w.endObject()
    }
    w.endArray()
    strings("expanded", diff.expanded)
    strings("collapsed", diff.collapsed)
    w.key("selection")
    if diff.selectionChanged {
      w.beginObject()
      ids("from", diff.selectedBefore)
      ids("to", diff.selectedAfter)
      w.endObject()
    } else {
      w.null()
    }
    w.key("selectionMode")
    if diff.selectionModeChanged {
      w.beginObject()
      w.field("from", mode(diff.multipleSelectionBefore))
      w.field("to", mode(diff.multipleSelectionAfter))
      w.endObject()
    } else {
      w.null()
    }
    w.key("content")
    w.beginArray()
    for (id, from, to) in diff.titles {
      change(id, "title") { w in
        w.field("from", from)
        w.field("to", to)
      }
    }
    for (id, from, to) in diff.fields {
      change(id, "fields") { w in
        w.field("from", from)
        w.field("to", to)
      }
    }
    w.endArray()
    w.field("unchanged", diff.unchanged)
    w.endObject()
  }
}
