/// The operations the reducer (`ListState.apply(_:_:)`) calls once it has found the items
/// and sections an event names: on handles, never on strings.
///
/// Each one that can fault checks everything before it writes anything, so a fault leaves
/// the forest untouched.
extension Forest {
  // MARK: Sections

  /// Adds a section for entry `e` at position `at` of the order (the end when nil); the
  /// caller checked that no live section has it.
  mutating func addSection(entry e: Int32, at: Int?) {
    guard let s = allocateSection(entry: e) else { return }
    if let at { sectionOrder.insert(s, at: at) } else { sectionOrder.append(s) }
  }

  /// Removes section `s` with all its items.
  mutating func deleteSection(_ s: Handle) {
    visibleRows &-= visibleCount(inSection: s)
    releaseAll(list: sections[Int(s)].roots)
    sectionOrder.remove(s)
    releaseSection(s)
  }

  /// Moves section `s` next to section `a` (not `s`).
  mutating func moveSection(_ s: Handle, anchor a: Handle, after: Bool) {
    sectionOrder.remove(s)
    let pos = sectionOrder.position(of: a) ?? sectionOrder.count
    sectionOrder.insert(s, at: after ? pos &+ 1 : pos)
  }

  // MARK: Items

  /// Removes item `x` with its descendants (the caller compacts afterwards).
  mutating func delete(_ x: Handle) {
    detach(x)
    releaseSubtree(x)
  }

  mutating func deleteAllItems() {
    for s in sectionOrder {
      visibleRows &-= visibleCount(inSection: s)
      releaseAll(list: sections[Int(s)].roots)
      setListRoot(parent: -1, section: s, -1)
    }
    compactIfNeeded()
  }

  /// Frees every item of a list and their subtrees (the list root itself is left dangling
  /// for the caller to reset).
  mutating func releaseAll(list root: Handle) {
    var stack: [Handle] = []
    forEachInList(root) { stack.append($0) }
    releaseBlocks(ofList: root)
    while let t = stack.popLast() {
      let kids = nodes[Int(t)].children
      if kids >= 0 {
        forEachInList(kids) { stack.append($0) }
        releaseBlocks(ofList: kids)
      }
      release(t)
    }
  }

  /// Inserts the detached items `xs` (built by `build`) next to item `a`.
  mutating func insert(_ xs: [Handle], nextTo a: Handle, after: Bool) {
    if xs.count == 1 {
      insert(xs[0], nextTo: a, after: after)
      return
    }
    let p = nodes[Int(a)].parent
    let s = p >= 0 ? -1 : nodes[Int(a)].section
    insertList(xs, parent: p, section: s, at: rank(a) &+ (after ? 1 : 0))
  }

  /// Moves item `x` with its subtree next to item `a`, taking `a`'s parent and section;
  /// Apple's arithmetic: the position is computed after the item is taken out.
  mutating func moveItem(_ x: Handle, anchor a: Handle, after: Bool) throws(ListFault) {
    guard x != a else { throw .moveNextToItself(id(of: x)) }
    guard !isSelfOrAncestor(x, of: a) else {
      throw .moveIntoOwnSubtree(item: id(of: x), anchor: id(of: a))
    }
    let deepest = level(of: a) &+ Int(nodes[Int(x)].height)
    guard deepest <= Self.deepestLevel else { throw .tooDeep(item: id(of: x), level: deepest) }
    detach(x)
    insert(x, nextTo: a, after: after)
    if nodes[Int(x)].sel > 0 && !isVisible(x) { deselectSubtree(of: x, includingSelf: true) }
  }

  /// Drops every descendant of `p`, then attaches the node list at word `w` of `ops` as its
  /// children; ids that were dropped and come back keep their selection when visible.
  mutating func replaceChildren(of p: Handle, with ops: FoldOps, atWord w: Int)
    throws(ListFault)
  {
    let kept = selectedItems(inList: nodes[Int(p)].children)
    let xs = try build(ops, atWord: w, base: level(of: p) &+ 1, replacing: .children(of: p))
    releaseAll(list: nodes[Int(p)].children)
    setListRoot(parent: p, section: -1, -1)
    propagate(from: p, refreshTotals(p))
    refreshHeight(p)
    insertList(xs, parent: p, section: -1, at: nil)
    reselect(kept)
    compactIfNeeded()
  }

  /// Replaces the whole content of section `s` (Apple's `apply(_:to:)`) with the node list
  /// at word `w` of `ops`.
  mutating func replaceSection(_ s: Handle, with ops: FoldOps, atWord w: Int) throws(ListFault) {
    let kept = selectedItems(inList: sections[Int(s)].roots)
    let xs = try build(ops, atWord: w, base: 0, replacing: .section(s))
    visibleRows &-= visibleCount(inSection: s)
    releaseAll(list: sections[Int(s)].roots)
    setListRoot(parent: -1, section: s, -1)
    insertList(xs, parent: -1, section: s, at: nil)
    reselect(kept)
    compactIfNeeded()
  }

  /// Selects again the items that took over the ids of dropped selected items `old`, when
  /// visible (a dropped item keeps its entry).
  private mutating func reselect(_ old: [Handle]) {
    for o in old {
      let x = item(entry: entryOf[Int(o)])
      if x >= 0, x != o, isVisible(x) { setSelected(x, true) }
    }
  }

  /// Replaces item `x`'s title (when the blob has one) and merges its fields key by key;
  /// never touches structure.
  mutating func update(_ x: Handle, with blob: UnsafeRawBufferPointer) {
    guard !blob.isEmpty else { return }
    let p = ItemText.parts(blob)
    if p.title == nil && p.fields == nil { return }
    if let bytes = withContent(x, { ItemText.merged($0, blob) }) {
      let c = bytes.withUnsafeBytes { storeText($0) }
      textGarbage &+= Int(content[Int(x)].length)
      editContent(x) { $0 = c }
      return
    }
    let (title, fields) = ItemText.decode(blob)
    let (oldTitle, oldFields) = withContent(x) { ItemText.decode($0) }
    var merged = oldFields
    if let fields {
      // A loop, not `merge`: Embedded Swift (the HTML viewer's reducer) has no dynamic casts.
      var f = merged ?? [:]
      for (key, value) in fields { f[key] = value }
      merged = f
    }
    let c = storeText(title: title ?? oldTitle, fields: merged)
    textGarbage &+= Int(content[Int(x)].length)
    editContent(x) { $0 = c }
  }

  /// `expand` or `collapse` of one item: collapsing deselects what it hides.
  mutating func expandOrCollapse(_ x: Handle, _ value: Bool) {
    setExpanded(x, value)
    if !value { deselectSubtree(of: x, includingSelf: false) }
  }
}
