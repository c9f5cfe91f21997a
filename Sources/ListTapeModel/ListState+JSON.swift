import ListTapeJSON

extension ListState {
  /// Writes the state as protocol section 3's JSON: `event`, `sections` (each with `items`
  /// in pre-order and `visible`), then `selected` in display order.
  package func writeJSON(event: Int, to w: inout JSONWriter) {
    w.beginObject()
    w.key("event")
    w.int(event)
    w.key("sections")
    w.beginArray()
    for s in forest.sectionOrder {
      w.beginObject()
      w.key("id")
      w.string(forest.sectionID(s))
      w.key("items")
      w.beginArray()
      forest.walk(list: forest.sections[Int(s)].roots, visibleOnly: false) { x, level in
        let n = forest.nodes[Int(x)]
        let (title, fields) = forest.withContent(x) { ItemText.decode($0) }
        w.beginObject()
        w.key("id")
        w.string(forest.id(of: x))
        w.key("parent")
        if n.parent >= 0 {
          w.string(forest.id(of: n.parent))
        } else {
          w.null()
        }
        w.key("level")
        w.int(level)
        w.key("expanded")
        w.bool(n.expanded)
        if let title {
          w.key("title")
          w.string(title)
        }
        if let fields {
          w.key("fields")
          OutlineNode.encodeFields(fields, to: &w)
        }
        w.endObject()
      }
      w.endArray()
      w.key("visible")
      w.beginArray()
      forest.walk(list: forest.sections[Int(s)].roots, visibleOnly: true) { x, _ in
        w.string(forest.id(of: x))
      }
      w.endArray()
      w.endObject()
    }
    w.endArray()
    w.key("selected")
    w.beginArray()
    for id in selectedItems { w.string(id) }
    w.endArray()
    w.endObject()
  }

  /// The state JSON as text (compact, or indented by two spaces when `pretty`).
  package func json(event: Int, pretty: Bool = false) -> String {
    var w = JSONWriter(pretty: pretty)
    writeJSON(event: event, to: &w)
    return w.text
  }
}
