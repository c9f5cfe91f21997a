import ListTapeInvestigate
import ListTapeJSON

/// A `StateDiff` for people and for scripts: `diff`, `diverge` and the scrubber's diff pane.
enum DiffText {
  /// One line per change in the new state's display order, coloured by what it says; runs
  /// of more than `context` unchanged items are folded into one line.
  static func lines(_ diff: StateDiff, context: Int, style: Style) -> [String] {
    var out: [String] = []
    for s in diff.sectionsInserted { out.append(style.green("+ section \(s)")) }
    for s in diff.sectionsDeleted { out.append(style.red("- section \(s)")) }
    for s in diff.sectionsMoved { out.append(style.yellow("~ section \(s) moved")) }
    // Deleted rows go under their section's header, before its remaining rows.
    var deleted: [String: [String]] = [:]
    var deletedOrder: [String] = []
    for (id, p) in diff.deleted {
      if deleted[p.section] == nil { deletedOrder.append(p.section) }
      deleted[p.section, default: []].append(style.red("- \(id) (was \(place(p)))"))
    }
    func header(_ section: String) {
      out.append(style.bold(style.blue("[\(section)]")))
      out += deleted.removeValue(forKey: section) ?? []
    }
    var section: String?
    for row in diff.foldingUnchanged(longerThan: context).rows {
      if row.section != section {
        section = row.section
        header(row.section)
      }
      let indent = String(repeating: "  ", count: row.level)
      if row.unchangedRun > 0 {
        let n = row.unchangedRun
        out.append(style.dim("  … \(n) unchanged item\(n == 1 ? "" : "s")"))
        continue
      }
      if row.changes.isEmpty {
        out.append("  \(indent)\(row.id)")
        continue
      }
      for change in row.changes {
        switch change {
        case .inserted(let at):
          out.append(style.green("+ \(indent)\(row.id) (\(place(at)))"))
        case .moved(let from, let to):
          out.append(style.yellow("~ \(indent)\(row.id) moved: \(place(from)) → \(place(to))"))
        case .expanded: out.append(style.cyan("▾ \(indent)\(row.id) expanded"))
        case .collapsed: out.append(style.cyan("▸ \(indent)\(row.id) collapsed"))
        case .title(let from, let to):
          out.append(style.yellow("  \(indent)title \(row.id): \(quote(from)) → \(quote(to))"))
        case .fields(let from, let to):
          out.append(
            style.yellow("  \(indent)fields \(row.id): \(fields(from)) → \(fields(to))"))
        }
      }
    }
    for s in deletedOrder where deleted[s] != nil { header(s) }
    if diff.selectionModeChanged {
      out.append(
        style.yellow(
          "selection mode \(mode(diff.multipleSelectionBefore)) → "
            + mode(diff.multipleSelectionAfter)))
    }
    if diff.selectionChanged {
      out.append(
        style.yellow(
          "selection {\(diff.selectionBefore.joined(separator: ", "))} → "
            + "{\(diff.selectionAfter.joined(separator: ", "))}"))
    }
    return out
  }

  /// `under parent, after sibling` or `at the top of section, first`.
  static func place(_ p: ItemPlace) -> String {
    (p.parent.map { "under \($0)" } ?? "at the top of \(p.section)") + ", "
      + (p.after.map { "after \($0)" } ?? "first")
  }

  private static func mode(_ multiple: Bool) -> String { multiple ? "multiple" : "single" }

  private static func quote(_ s: String?) -> String { s.map { "\"\($0)\"" } ?? "none" }

  private static func fields(_ f: [String: String]?) -> String {
    guard let f else { return "none" }
    return "{" + f.keys.sorted().map { "\($0): \"\(f[$0] ?? "")\"" }.joined(separator: ", ") + "}"
  }

  /// The diff's lines then a count; `no differences` when the states match.
  static func print(_ diff: StateDiff, context: Int, style: Style, into out: Output) {
    guard !diff.isEmpty else {
      out.line(style.dim("no differences (\(Render.plural(diff.unchanged, "item")) unchanged)"))
      return
    }
    for line in lines(diff, context: context, style: style) { out.line(line) }
    out.line(
      style.dim(
        "\(Render.plural(diff.changeCount, "change")), "
          + "\(Render.plural(diff.unchanged, "item")) unchanged"))
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
      strings("from", diff.selectionBefore)
      strings("to", diff.selectionAfter)
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
