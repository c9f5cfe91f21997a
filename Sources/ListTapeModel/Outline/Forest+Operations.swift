/// The validated, id-level operations shared by `ListState` and `SectionSnapshot`.
///
/// Each one checks everything that could fault before it writes anything, so a fault
/// leaves the forest untouched.
extension Forest {
  // MARK: Lookups that fault

  func requireSection(_ id: String) throws(ListFault) -> Handle {
    guard let s = sectionIndex[id] else { throw .missingSection(id) }
    return s
  }

  func requireItem(_ id: String) throws(ListFault) -> Handle {
    guard let x = itemIndex[id] else { throw .missingItem(id) }
    return x
  }

  func requireAnchor(_ id: String) throws(ListFault) -> Handle {
    guard let x = itemIndex[id] else { throw .missingAnchor(id) }
    return x
  }

  /// Checks that the ids inserted by `nodes` are unique in the event and new to the list;
  /// `replaceable` says which existing items the same event drops first.
  func validateNew(
    _ nodes: [OutlineNode], replaceable: (Handle) -> Bool = { _ in false }
  ) throws(ListFault) {
    if nodes.count == 1 && nodes[0].children.isEmpty {
      // The common case, one new item: no set, no stack.
      if let h = itemIndex[nodes[0].id], !replaceable(h) { throw .duplicateItem(nodes[0].id) }
      return
    }
    if nodes.count <= 8 && nodes.allSatisfy({ $0.children.isEmpty }) {
      // A few flat items (what an app appends at a time): compare pairs, no set to hash.
      for (i, n) in nodes.enumerated() {
        for m in nodes[..<i] where sameIdentifier(m.id, n.id) { throw .repeatedItem(n.id) }
        if let h = itemIndex[n.id], !replaceable(h) { throw .duplicateItem(n.id) }
      }
      return
    }
    var seen = Set<IdentifierKey>()
    var stack: [OutlineNode] = nodes.reversed()
    while let n = stack.popLast() {
      guard seen.insert(IdentifierKey(n.id)).inserted else { throw .repeatedItem(n.id) }
      if let h = itemIndex[n.id], !replaceable(h) { throw .duplicateItem(n.id) }
      stack.append(contentsOf: n.children.reversed())
    }
  }

  // MARK: Sections

  mutating func appendSections(_ ids: [String]) throws(ListFault) {
    try validateNewSections(ids)
    for id in ids {
      let s = allocateSection(id)
      editSectionOrder { $0.append(s) }
    }
  }

  mutating func insertSections(_ ids: [String], anchor: String, after: Bool) throws(ListFault) {
    try validateNewSections(ids)
    let a = try requireSection(anchor)
    guard let pos = sectionPosition(a) else { throw .missingSection(anchor) }
    var handles: [Handle] = []
    for id in ids { handles.append(allocateSection(id)) }
    editSectionOrder { $0.insert(contentsOf: handles, at: after ? pos + 1 : pos) }
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
      guard let s = sectionIndex[id] else { continue }
      releaseAll(list: sections[Int(s)].roots)
      editSectionOrder { order in
        if let i = order.firstIndex(of: s) { order.remove(at: i) }
      }
      releaseSection(s)
    }
  }

  mutating func moveSection(_ id: String, anchor: String, after: Bool) throws(ListFault) {
    let s = try requireSection(id)
    let a = try requireSection(anchor)
    guard s != a else { throw .moveNextToItself(id) }
    editSectionOrder { order in
      if let i = order.firstIndex(of: s) { order.remove(at: i) }
      let pos = order.firstIndex(of: a) ?? order.count
      order.insert(s, at: after ? pos + 1 : pos)
    }
  }

  func requireSections(_ ids: [String]) throws(ListFault) {
    for id in ids where sectionIndex[id] == nil { throw .missingSection(id) }
  }

  // MARK: Items

  /// Creates detached nodes (with their subtrees attached) for `nodes`.
  mutating func make(_ nodes: [OutlineNode]) -> [Handle] {
    var out: [Handle] = []
    out.reserveCapacity(nodes.count)
    for n in nodes {
      let x = allocate(n.id)
      if n.expanded { edit(x) { $0.expanded = true } }
      if n.title != nil || n.fields != nil {
        editContent(x) {
          $0.title = n.title
          $0.fields = n.fields
        }
      }
      if !n.children.isEmpty {
        let kids = make(n.children)
        insertList(kids, parent: x, section: -1, at: nil)
      }
      out.append(x)
    }
    return out
  }

  /// `appendItems`: as last children of `parent`, else as last roots of `section` (the
  /// last section when both are nil).
  mutating func appendItems(
    _ nodes: [OutlineNode], section: String?, parent: String?
  ) throws(ListFault) {
    if let parent {
      guard let p = itemIndex[parent] else { throw .missingParent(parent) }
      if let section {
        let s = try requireSection(section)
        guard self.section(of: p) == s else {
          throw .parentNotInSection(parent: parent, section: section)
        }
      }
      try validateNew(nodes)
      insertList(make(nodes), parent: p, section: -1, at: nil)
    } else {
      let s: Handle
      if let section {
        s = try requireSection(section)
      } else {
        guard let last = sectionOrder.last else { throw .noSections }
        s = last
      }
      try validateNew(nodes)
      insertList(make(nodes), parent: -1, section: s, at: nil)
    }
  }

  /// `insertItems`: siblings of the anchor; `after` lands after the anchor's subtree.
  mutating func insertItems(
    _ nodes: [OutlineNode], anchor: String, after: Bool
  ) throws(ListFault) {
    let a = try requireAnchor(anchor)
    try validateNew(nodes)
    if nodes.count == 1 {
      insert(make(nodes)[0], nextTo: a, after: after)
      return
    }
    let p = self.nodes[Int(a)].parent
    let s = p >= 0 ? -1 : self.nodes[Int(a)].section
    let pos = rank(a) + (after ? 1 : 0)
    insertList(make(nodes), parent: p, section: s, at: pos)
  }

  /// Removes items with their descendants; absent ids are ignored.
  mutating func deleteItems(_ ids: [String]) {
    for id in ids {
      guard let x = itemIndex[id] else { continue }
      detach(x)
      releaseSubtree(x)
    }
  }

  mutating func deleteAllItems() {
    for s in sectionOrder {
      releaseAll(list: sections[Int(s)].roots)
      setListRoot(parent: -1, section: s, -1)
    }
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
    let x = try requireItem(id)
    let a = try requireAnchor(anchor)
    guard x != a else { throw .moveNextToItself(id) }
    guard !isSelfOrAncestor(x, of: a) else { throw .moveIntoOwnSubtree(item: id, anchor: anchor) }
    detach(x)
    insert(x, nextTo: a, after: after)
    if nodes[Int(x)].sel > 0 && !isVisible(x) { deselectSubtree(of: x, includingSelf: true) }
  }

  /// Drops every descendant of `parent`, then attaches `nodes` as its children; ids that
  /// were dropped and come back keep their selection when visible.
  mutating func replaceChildren(of parent: String, with nodes: [OutlineNode]) throws(ListFault) {
    guard let p = itemIndex[parent] else { throw .missingParent(parent) }
    try validateNew(nodes) { h in h != p && self.isSelfOrAncestor(p, of: h) }
    let kept = selectedIDs(inList: self.nodes[Int(p)].children)
    releaseAll(list: self.nodes[Int(p)].children)
    setListRoot(parent: p, section: -1, -1)
    propagate(from: p, refreshTotals(p))
    insertList(make(nodes), parent: p, section: -1, at: nil)
    reselect(kept)
  }

  /// Replaces the whole content of a section (Apple's `apply(_:to:)`).
  mutating func replaceSection(_ section: String, with nodes: [OutlineNode]) throws(ListFault) {
    let s = try requireSection(section)
    try validateNew(nodes) { h in self.section(of: h) == s }
    let kept = selectedIDs(inList: sections[Int(s)].roots)
    releaseAll(list: sections[Int(s)].roots)
    setListRoot(parent: -1, section: s, -1)
    insertList(make(nodes), parent: -1, section: s, at: nil)
    reselect(kept)
  }

  /// Ids of the selected items in a sibling list and below it.
  private func selectedIDs(inList root: Handle) -> [String] {
    selectedItems(inList: root).map { content[Int($0)].id }
  }

  private mutating func reselect(_ ids: [String]) {
    for id in ids {
      if let x = itemIndex[id], isVisible(x) { setSelected(x, true) }
    }
  }

  func requireItems(_ ids: [String]) throws(ListFault) {
    for id in ids where itemIndex[id] == nil { throw .missingItem(id) }
  }

  /// Replaces the title and merges `fields` key by key; never touches structure.
  mutating func update(_ id: String, title: String?, fields: [String: String]?) throws(ListFault) {
    let x = try requireItem(id)
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
      let x = try requireItem(ids[0])
      setExpanded(x, value)
      if !value { deselectSubtree(of: x, includingSelf: false) }
      return
    }
    var handles: [Handle] = []
    handles.reserveCapacity(ids.count)
    for id in ids { handles.append(try requireItem(id)) }
    for x in handles {
      setExpanded(x, value)
      if !value { deselectSubtree(of: x, includingSelf: false) }
    }
  }
}
