import ListTapeModel

/// An event in one line of words, as `events`, the scrubber and the HTML viewer list it.
/// The viewer's WebAssembly module compiles this file too (Tools/wasm/build.sh), so the page
/// describes the events it decodes from the log in the CLI's own words.
enum EventText {
  /// An operation's arguments in a line: its ids (the first six), anchor, titles, fields or
  /// label.
  static func describe(_ op: ListOperation) -> String {
    switch op {
    case .appendSections(let ids), .deleteSections(let ids), .reloadSections(let ids),
      .deleteItems(let ids), .reloadItems(let ids), .reconfigureItems(let ids),
      .expand(let ids), .collapse(let ids), .select(let ids):
      return list(ids)
    case .insertSections(let ids, let anchor): return "\(list(ids)) \(describe(anchor))"
    case .moveSection(let id, let anchor), .moveItem(let id, let anchor):
      return "\(id) \(describe(anchor))"
    case .appendItems(let nodes, let section, let parent):
      var s = nodeList(nodes)
      if let parent { s += " under \(parent)" }
      if let section { s += " in section \(section)" }
      return s
    case .insertItems(let nodes, let anchor): return "\(nodeList(nodes)) \(describe(anchor))"
    case .deleteAllItems: return ""
    case .replaceChildren(let parent, let nodes):
      return "children of \(parent) := \(nodes.isEmpty ? "[]" : nodeList(nodes))"
    case .applySectionSnapshot(let section, let nodes):
      return "section \(section) := \(nodes.isEmpty ? "[]" : nodeList(nodes))"
    case .update(let item, let title, let fields):
      var s = item
      if let title { s += " title \"\(title)\"" }
      if let fields, !fields.isEmpty {
        s +=
          " fields "
          + fields.keys.sorted().map { "\($0)=\(fields[$0] ?? "")" }.joined(separator: ", ")
      }
      return s
    case .deselect(let ids): return ids.map(list) ?? "all"
    case .configure(let multiple): return multiple ? "multiple selection" : "single selection"
    case .mark(let label): return "\"\(label)\""
    case .batch(let events):
      let ops = events.prefix(6).map { $0.op }.joined(separator: ", ")
      let more = events.count > 6 ? ", …" : ""
      return "\(Counting.plural(events.count, "event")): \(ops)\(more)"
    }
  }

  private static func describe(_ anchor: Anchor) -> String {
    switch anchor {
    case .before(let id): return "before \(id)"
    case .after(let id): return "after \(id)"
    }
  }

  private static func list(_ ids: [String]) -> String {
    if ids.isEmpty { return "[]" }
    let shown = ids.prefix(6).joined(separator: ", ")
    return ids.count > 6 ? "\(shown), … (\(ids.count) in all)" : shown
  }

  private static func nodeList(_ nodes: [OutlineNode]) -> String {
    func size(_ n: OutlineNode) -> Int { n.children.reduce(0) { $0 + 1 + size($1) } }
    let shown = nodes.prefix(6).map { n -> String in
      let inner = size(n)
      return inner > 0 ? "\(n.id) (+\(inner))" : n.id
    }
    let text = shown.joined(separator: ", ")
    return nodes.count > 6 ? "\(text), … (\(nodes.count) in all)" : text
  }

  /// The line the HTML viewer lists for an event: its arguments (at most 160 characters)
  /// and its site.
  static func line(_ event: Event) -> String {
    var text = describe(event.operation)
    if text.count > 160 { text = String(text.prefix(160)) + "…" }
    if let site = event.site { text += "  at \(site)" }
    return text
  }
}
