extension ListState: Equatable {
  /// Logical equality: sections, outlines, flags, content, selection and mode; never the
  /// internal tree shape or how either state numbers its ids.
  package static func == (lhs: ListState, rhs: ListState) -> Bool {
    let l = lhs.forest
    let r = rhs.forest
    guard lhs.allowsMultipleSelection == rhs.allowsMultipleSelection,
      l.itemCount == r.itemCount, l.selectedCount == r.selectedCount,
      l.sectionOrder.count == r.sectionOrder.count
    else { return false }
    for (a, b) in zip(l.sectionOrder, r.sectionOrder) {
      guard
        l.ids.same(Int(l.sections[Int(a)].entry), as: Int(r.sections[Int(b)].entry), in: r.ids)
      else { return false }
      let xs = l.items(inSection: a, visibleOnly: false)
      let ys = r.items(inSection: b, visibleOnly: false)
      guard xs.count == ys.count else { return false }
      // Pre-order plus every subtree size (`cnt`) fixes the shape, levels included, so
      // no per-item walk up the ancestors (quadratic on deep outlines) is needed.
      for (x, y) in zip(xs, ys) {
        let n = l.nodes[Int(x)]
        let m = r.nodes[Int(y)]
        guard n.expanded == m.expanded, n.selected == m.selected, n.cnt == m.cnt,
          l.ids.same(Int(l.entryOf[Int(x)]), as: Int(r.entryOf[Int(y)]), in: r.ids)
        else { return false }
        let sameText = l.withContent(x) { c in r.withContent(y) { d in c.elementsEqual(d) } }
        guard sameText else { return false }
      }
    }
    return true
  }
}
