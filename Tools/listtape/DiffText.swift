import ListTapeInvestigate

/// One line of a diff as `listtape diff` words it, with what it says: the command line
/// colours by it, the HTML viewer styles by it.
struct DiffLine: Equatable {
  enum Kind: Int {
    /// `+ …`: a section or an item that is new.
    case inserted
    /// `- …`: a section or an item that is gone.
    case deleted
    /// `~ … moved`, a title, fields, the selection or its mode.
    case changed
    /// `▾ … expanded`, `▸ … collapsed`.
    case disclosure
    /// `[section]` before its rows.
    case section
    /// An unchanged item shown for context.
    case unchanged
    /// `… N unchanged items`.
    case folded
    /// The count of changes at the end.
    case summary
  }

  var kind: Kind
  var text: String
}

/// A `StateDiff` in words: `diff`, `diverge`, `what-if`, the scrubber's diff pane and the
/// HTML viewer's. The viewer's WebAssembly module compiles this file as it is (with
/// Counting.swift and the differ's own sources: Tools/wasm/build.sh), so the page states
/// each change in the words of `listtape diff`.
enum DiffText {
  /// One line per change in the new state's display order; runs of more than `context`
  /// unchanged items are folded into one line.
  static func lines(_ diff: StateDiff, context: Int) -> [DiffLine] {
    var out: [DiffLine] = []
    func add(_ kind: DiffLine.Kind, _ text: String) { out.append(DiffLine(kind: kind, text: text)) }
    for s in diff.sectionsInserted { add(.inserted, "+ section \(s)") }
    for s in diff.sectionsDeleted { add(.deleted, "- section \(s)") }
    for s in diff.sectionsMoved { add(.changed, "~ section \(s) moved") }
    // Deleted rows go under their section's header, before its remaining rows.
    var deleted: [(section: String, lines: [DiffLine])] = []
    for (id, p) in diff.deleted {
      let line = DiffLine(kind: .deleted, text: "- \(id) (was \(place(p)))")
      if let i = deleted.firstIndex(where: { $0.section == p.section }) {
        deleted[i].lines.append(line)
      } else {
        deleted.append((p.section, [line]))
      }
    }
    func header(_ section: String) {
      add(.section, "[\(section)]")
      if let i = deleted.firstIndex(where: { $0.section == section }) {
        out += deleted.remove(at: i).lines
      }
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
        add(.folded, "  … \(n) unchanged item\(n == 1 ? "" : "s")")
        continue
      }
      if row.changes.isEmpty {
        add(.unchanged, "  \(indent)\(row.id)")
        continue
      }
      for change in row.changes {
        switch change {
        case .inserted(let at): add(.inserted, "+ \(indent)\(row.id) (\(place(at)))")
        case .moved(let from, let to):
          add(.changed, "~ \(indent)\(row.id) moved: \(place(from)) → \(place(to))")
        case .expanded: add(.disclosure, "▾ \(indent)\(row.id) expanded")
        case .collapsed: add(.disclosure, "▸ \(indent)\(row.id) collapsed")
        case .title(let from, let to):
          add(.changed, "  \(indent)title \(row.id): \(quote(from)) → \(quote(to))")
        case .fields(let from, let to):
          add(.changed, "  \(indent)fields \(row.id): \(fields(from)) → \(fields(to))")
        }
      }
    }
    while let rest = deleted.first { header(rest.section) }
    if diff.selectionModeChanged {
      add(
        .changed,
        "selection mode \(mode(diff.multipleSelectionBefore)) → "
          + mode(diff.multipleSelectionAfter))
    }
    if diff.selectionChanged {
      if diff.selectedCountBefore + diff.selectedCountAfter <= StateDiff.listedSelection {
        add(
          .changed,
          "selection {\(diff.selectionBefore.joined(separator: ", "))} → "
            + "{\(diff.selectionAfter.joined(separator: ", "))}")
      } else {
        // A long selection is told by what changed in it, not listed twice whole.
        var text =
          "selection \(Counting.plural(diff.selectedCountBefore, "item")) → "
          + "\(Counting.plural(diff.selectedCountAfter, "item")):"
        if !diff.selectionAdded.isEmpty {
          text += " +{\(diff.selectionAdded.joined(separator: ", "))}"
        }
        if !diff.selectionRemoved.isEmpty {
          text += " −{\(diff.selectionRemoved.joined(separator: ", "))}"
        }
        add(.changed, text)
      }
    }
    return out
  }

  /// What `listtape diff` prints after its header: the lines, then the count of changes;
  /// only `no differences (…)` when the states match.
  static func text(_ diff: StateDiff, context: Int) -> [DiffLine] {
    (diff.isEmpty ? [] : lines(diff, context: context)) + [summary(diff)]
  }

  /// The last line: how many changes, or `no differences` when the states match.
  static func summary(_ diff: StateDiff) -> DiffLine {
    let unchanged = Counting.plural(diff.unchanged, "item")
    guard !diff.isEmpty else {
      return DiffLine(kind: .summary, text: "no differences (\(unchanged) unchanged)")
    }
    return DiffLine(
      kind: .summary,
      text: "\(Counting.plural(diff.changeCount, "change")), \(unchanged) unchanged")
  }

  /// `under parent, after sibling` or `at the top of section, first`.
  static func place(_ p: ItemPlace) -> String {
    (p.parent.map { "under \($0)" } ?? "at the top of \(p.section)") + ", "
      + (p.after.map { "after \($0)" } ?? "first")
  }

  static func mode(_ multiple: Bool) -> String { multiple ? "multiple" : "single" }

  private static func quote(_ s: String?) -> String { s.map { "\"\($0)\"" } ?? "none" }

  private static func fields(_ f: [String: String]?) -> String {
    guard let f else { return "none" }
    return "{" + f.keys.sorted().map { "\($0): \"\(f[$0] ?? "")\"" }.joined(separator: ", ") + "}"
  }
}
