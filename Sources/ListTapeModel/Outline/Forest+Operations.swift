/// The validated, id-level operations shared by `ListState` and `SectionSnapshot`.
///
/// Each one checks everything that could fault before it writes anything, so a fault
/// leaves the forest untouched.
extension Forest {
  // MARK: Lookups that fault

  /// The fold's lookups: long ids referenced again cost O(1) (`IdentifierIndex.handle(remembering:)`).
  mutating func lookupItem(_ id: String) -> Handle? { itemIndex.handle(remembering: id) }

  mutating func lookupSection(_ id: String) -> Handle? { sectionIndex.handle(remembering: id) }

  mutating func requireSection(_ id: String) throws(ListFault) -> Handle {
    guard let s = lookupSection(id) else { throw .missingSection(id) }
    return s
  }

  mutating func requireItem(_ id: String) throws(ListFault) -> Handle {
    guard let x = lookupItem(id) else { throw .missingItem(id) }
    return x
  }

  mutating func requireAnchor(_ id: String) throws(ListFault) -> Handle {
    guard let x = lookupItem(id) else { throw .missingAnchor(id) }
    return x
  }

  // MARK: Sections

  mutating func appendSections(_ ids: [String]) throws(ListFault) {
    try validateNewSections(ids)
    for id in ids {
      guard let s = allocateSection(id) else { continue }
      sectionOrder.append(s)
    }
  }

  mutating func insertSections(_ ids: [String], anchor: String, after: Bool) throws(ListFault) {
    try validateNewSections(ids)
    let a = try requireSection(anchor)
    guard let pos = sectionPosition(a) else { throw .missingSection(anchor) }
    var at = after ? pos &+ 1 : pos
    for id in ids {
      guard let s = allocateSection(id) else { continue }
      sectionOrder.insert(s, at: at)
      at &+= 1
    }
  }

  private func validateNewSections(_ ids: [String]) throws(ListFault) {
    var seen = Set<IdentifierKey>()
    for id in ids {
      guard seen.insert(IdentifierKey(id)).inserted else { throw .repeatedSection(id) }
      if sectionIndex[id] != nil { throw .duplicateSection(id) }
    }
  }

  mutating func deleteSections(_ ids: [String]) {
    for id in ids {
      guard let s = lookupSection(id) else { continue }
      visibleRows &-= visibleCount(inSection: s)
      releaseAll(list: sections[Int(s)].roots)
      sectionOrder.remove(s)
      releaseSection(s)
    }
    compactIfNeeded()
  }

  mutating func moveSection(_ id: String, anchor: String, after: Bool) throws(ListFault) {
    let s = try requireSection(id)
    let a = try requireSection(anchor)
    guard s != a else { throw .moveNextToItself(id) }
    sectionOrder.remove(s)
    let pos = sectionOrder.position(of: a) ?? sectionOrder.count
    sectionOrder.insert(s, at: after ? pos &+ 1 : pos)
  }

  mutating func requireSections(_ ids: [String]) throws(ListFault) {
    for id in ids where lookupSection(id) == nil { throw .missingSection(id) }
  }

  // MARK: Items

  /// `appendItems`: as last children of `parent`, else as last roots of `section` (the
  /// last section when both are nil).
  mutating func appendItems(
    _ nodes: [OutlineNode], section: String?, parent: String?
  ) throws(ListFault) {
    if let parent {
      guard let p = lookupItem(parent) else { throw .missingParent(parent) }
      if let section {
        let s = try requireSection(section)
        guard self.section(of: p) == s else {
          throw .parentNotInSection(parent: parent, section: section)
        }
      }
      if nodes.count == 1 && nodes[0].box == nil {
        insertList(try buildOne(nodes[0], base: level(of: p) &+ 1), parent: p, section: -1, at: nil)
      } else {
        insertList(try build(nodes, base: level(of: p) &+ 1), parent: p, section: -1, at: nil)
      }
    } else {
      let s: Handle
      if let section {
        s = try requireSection(section)
      } else {
        guard let last = sectionOrder.last else { throw .noSections }
        s = last
      }
      if nodes.count == 1 && nodes[0].box == nil {
        insertList(try buildOne(nodes[0], base: 0), parent: -1, section: s, at: nil)
      } else {
        insertList(try build(nodes, base: 0), parent: -1, section: s, at: nil)
      }
    }
  }

  /// `insertItems`: siblings of the anchor; `after` lands after the anchor's subtree.
  mutating func insertItems(
    _ nodes: [OutlineNode], anchor: String, after: Bool
  ) throws(ListFault) {
    let a = try requireAnchor(anchor)
    if nodes.count == 1 {
      let x =
        nodes[0].box == nil
        ? try buildOne(nodes[0], base: level(of: a)) : try build(nodes, base: level(of: a))[0]
      insert(x, nextTo: a, after: after)
      return
    }
    let xs = try build(nodes, base: level(of: a))
    let p = self.nodes[Int(a)].parent
    let s = p >= 0 ? -1 : self.nodes[Int(a)].section
    let pos = rank(a) + (after ? 1 : 0)
    insertList(xs, parent: p, section: s, at: pos)
  }

  /// Removes items with their descendants; absent ids are ignored.
  mutating func deleteItems(_ ids: [String]) {
    for id in ids {
      guard let x = lookupItem(id) else { continue }
      delete(x)
    }
    compactIfNeeded()
  }

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

  /// Moves an item with its subtree next to the anchor, taking the anchor's parent and
  /// section; Apple's arithmetic: the position is computed after the item is taken out.
  mutating func moveItem(_ id: String, anchor: String, after: Bool) throws(ListFault) {
    try moveItem(try requireItem(id), anchor: try requireAnchor(anchor), after: after)
  }

  /// `moveItem` of item `x` next to item `a`.
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

  /// Drops every descendant of `parent`, then attaches `nodes` as its children; ids that
  /// were dropped and come back keep their selection when visible.
  mutating func replaceChildren(of parent: String, with nodes: [OutlineNode]) throws(ListFault) {
    guard let p = lookupItem(parent) else { throw .missingParent(parent) }
    let kept = selectedItems(inList: self.nodes[Int(p)].children)
    let xs = try build(nodes, base: level(of: p) &+ 1, replacing: .children(of: p))
    releaseAll(list: self.nodes[Int(p)].children)
    setListRoot(parent: p, section: -1, -1)
    propagate(from: p, refreshTotals(p))
    refreshHeight(p)
    insertList(xs, parent: p, section: -1, at: nil)
    reselect(kept)
    compactIfNeeded()
  }

  /// Replaces the whole content of a section (Apple's `apply(_:to:)`).
  mutating func replaceSection(_ section: String, with nodes: [OutlineNode]) throws(ListFault) {
    let s = try requireSection(section)
    let kept = selectedItems(inList: sections[Int(s)].roots)
    let xs = try build(nodes, base: 0, replacing: .section(s))
    visibleRows &-= visibleCount(inSection: s)
    releaseAll(list: sections[Int(s)].roots)
    setListRoot(parent: -1, section: s, -1)
    insertList(xs, parent: -1, section: s, at: nil)
    reselect(kept)
    compactIfNeeded()
  }

  /// Selects again the items that took over the ids of dropped selected items `old`, when
  /// visible (the dropped items' ids stay readable until the next compaction).
  private mutating func reselect(_ old: [Handle]) {
    for o in old {
      let x = withID(of: o) { itemIndex.handle(itemIndex.key($0)) }
      if let x, x != o, isVisible(x) { setSelected(x, true) }
    }
  }

  mutating func requireItems(_ ids: [String]) throws(ListFault) {
    for id in ids where lookupItem(id) == nil { throw .missingItem(id) }
  }

  /// Replaces the title and merges `fields` key by key; never touches structure.
  mutating func update(_ id: String, title: String?, fields: [String: String]?) throws(ListFault) {
    update(try requireItem(id), title: title, fields: fields)
  }

  /// `update` of item `x`.
  mutating func update(_ x: Handle, title: String?, fields: [String: String]?) {
    if title == nil && fields == nil { return }
    editContent(x) { n in
      if let title { n.title = title }
      if let fields {
        // A loop, not `merge`: Embedded Swift (the HTML viewer's reducer) has no dynamic casts.
        var merged = n.fields ?? [:]
        for (key, value) in fields { merged[key] = value }
        n.fields = merged
      }
    }
  }

  mutating func setExpanded(_ ids: [String], _ value: Bool) throws(ListFault) {
    if ids.count == 1 {
      expandOrCollapse(try requireItem(ids[0]), value)
      return
    }
    var handles: [Handle] = []
    handles.reserveCapacity(ids.count)
    for id in ids { handles.append(try requireItem(id)) }
    for x in handles { expandOrCollapse(x, value) }
  }

  /// `expand` or `collapse` of one item: collapsing deselects what it hides.
  mutating func expandOrCollapse(_ x: Handle, _ value: Bool) {
    setExpanded(x, value)
    if !value { deselectSubtree(of: x, includingSelf: false) }
  }
}
