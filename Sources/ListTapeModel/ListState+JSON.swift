import ListTapeJSON

extension ListState {
  /// Writes the state as protocol section 3's JSON: `event`, `sections` (each with `items`
  /// in pre-order and `visible`), then `selected` in display order, then what `more` adds
  /// to the object. Ids, titles and fields are written from the state's bytes (no `String`
  /// per item, no array per sibling list). - Complexity: O(items), without recursion.
  package func writeJSON(
    event: Int, to w: inout JSONWriter, more: (inout JSONWriter) -> Void = { _ in }
  ) {
    let f = forest
    w.reserve(64 &+ f.itemCount &* 96)
    w.beginObject()
    w.key("event")
    w.int(event)
    w.key("sections")
    w.beginArray()
    var stack: [PreorderFrame] = []
    for s in f.sectionOrder {
      w.beginObject()
      w.key("id")
      f.ids.withText(Int(f.sections[Int(s)].entry)) { w.string(utf8: $0) }
      w.key("items")
      w.beginArray()
      f.forEachPreorder(list: f.sections[Int(s)].roots, visibleOnly: false, &stack) { x, level in
        let n = f.nodes[Int(x)]
        w.beginObject()
        w.key("id")
        f.withID(of: x) { w.string(utf8: $0) }
        w.key("parent")
        if n.parent >= 0 {
          f.withID(of: n.parent) { w.string(utf8: $0) }
        } else {
          w.null()
        }
        w.key("level")
        w.int(level)
        w.key("expanded")
        w.bool(n.expanded)
        f.withContent(x) { blob in
          guard !blob.isEmpty else { return }
          let parts = ItemText.parts(blob)
          if let title = parts.title {
            w.key("title")
            w.string(utf8: title.assumingMemoryBound(to: UInt8.self))
          }
          if parts.fields != nil {
            w.key("fields")
            w.beginObject()
            ItemText.forEachField(parts) { k, v in
              w.key(utf8: k.assumingMemoryBound(to: UInt8.self))
              w.string(utf8: v.assumingMemoryBound(to: UInt8.self))
            }
            w.endObject()
          }
        }
        w.endObject()
      }
      w.endArray()
      w.key("visible")
      w.beginArray()
      f.forEachPreorder(list: f.sections[Int(s)].roots, visibleOnly: true, &stack) { x, _ in
        f.withID(of: x) { w.string(utf8: $0) }
      }
      w.endArray()
      w.endObject()
    }
    w.endArray()
    w.key("selected")
    w.beginArray()
    for x in f.selectedItems() { f.withID(of: x) { w.string(utf8: $0) } }
    w.endArray()
    more(&w)
    w.endObject()
  }

  /// The state JSON as text (compact, or indented by two spaces when `pretty`).
  package func json(event: Int, pretty: Bool = false) -> String {
    var w = JSONWriter(pretty: pretty)
    writeJSON(event: event, to: &w)
    return w.text
  }
}

/// One step of `Forest.forEachPreorder`'s walk: a B-tree block, its next entry, and the
/// outline level of the items it holds.
struct PreorderFrame {
  var block: Handle
  var next: Int32
  var level: Int32
}

extension Forest {
  /// Calls `body(item, level)` on every item under the list whose root block is `root`, in
  /// depth-first pre-order (only those shown when `visibleOnly`), walking the B-tree blocks
  /// with `stack` (reused, emptied): no array per sibling list, no recursion.
  func forEachPreorder(
    list root: Handle, visibleOnly: Bool, _ stack: inout [PreorderFrame],
    _ body: (Handle, Int) -> Void
  ) {
    guard root >= 0 else { return }
    stack.removeAll(keepingCapacity: true)
    stack.append(PreorderFrame(block: root, next: 0, level: 0))
    while let top = stack.last {
      let block = blocks[Int(top.block)]
      if top.next == block.count {
        stack.removeLast()
        continue
      }
      stack[stack.count &- 1].next &+= 1
      let h = entry(top.block, Int(top.next))
      if !block.leaf {
        stack.append(PreorderFrame(block: h, next: 0, level: top.level))
        continue
      }
      body(h, Int(top.level))
      let n = nodes[Int(h)]
      if n.children >= 0 && (!visibleOnly || n.expanded) {
        stack.append(PreorderFrame(block: n.children, next: 0, level: top.level &+ 1))
      }
    }
  }
}
