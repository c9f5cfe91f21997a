/// Buffers of the bulk builder, kept by the forest between events so that building a
/// subtree allocates no arrays of its own once they have grown (empty between builds).
struct BuildScratch {
  /// Items whose sibling lists are still open, each list contiguous: the top items first,
  /// then the children of each open item from its `start`.
  var pending: [Handle] = []
  /// The open path: the ancestors of the item built last, and where their children start
  /// in `pending` (its count is that item's level).
  var open: [(item: Handle, start: Int)] = []
  /// The item built last (-1 before the first): the next one may be its child.
  var last: Handle = -1
  /// Every item built, in pre-order, so that a fault can undo the build.
  var created: [Handle] = []
  /// Ids handed over by items the build replaces: the id and its previous item.
  var handedOver: [(StoredID, Handle)] = []

  /// The deepest level the next item may have: one below the item built last.
  var deepestNext: Int { last < 0 ? 0 : open.count &+ 1 }

  mutating func reset() {
    last = -1
    pending.removeAll(keepingCapacity: true)
    open.removeAll(keepingCapacity: true)
    created.removeAll(keepingCapacity: true)
    handedOver.removeAll(keepingCapacity: true)
  }
}

/// Items that a build replaces: their ids may be reused by the new items.
enum Replacing {
  case nothing
  /// Every descendant of this item.
  case children(of: Handle)
  /// Every item of this section.
  case section(Handle)
}

/// What building one item did: built it, or found its id registered to another item.
enum BuiltItem {
  case built(Handle)
  case taken(by: Handle)
}

/// Bulk building: items arrive in pre-order with their level (0 for the top of what is
/// built), and every sibling list is linked bottom-up into B-tree blocks as soon as it is
/// complete, in O(items) with one probe of the id table per item. Checkpoints decode and
/// events insert their subtrees this way.
extension Forest {
  /// Adds one item in pre-order (`level` at most `b.deepestNext`): opens the item built
  /// last when this one is its child or closes the lists deeper than `level`, then stores
  /// the item (detached, its parent the open item above it) and registers its id. Ids of
  /// items that `replacing` covers are handed over to the new item. With `tracking`, the
  /// item is remembered so that `undoBuild` can take it back.
  @inline(__always) mutating func buildItem(
    _ b: inout BuildScratch, level: Int, key: ProbeKey, expanded: Bool, selected: Bool,
    title: String?, fields: [String: String]?, replacing: Replacing, tracking: Bool
  ) -> BuiltItem {
    if level > b.open.count {
      b.open.append((b.last, b.pending.count))
    } else if level < b.open.count {
      close(&b, to: level)
    }
    let x = nextNodeHandle
    let id: StoredID
    switch registerItem(key, x) {
    case .inserted(let stored):
      id = stored
    case .present(let slot, let stored, let old):
      guard isReplaced(old, by: replacing) else { return .taken(by: old) }
      reregisterItem(inSlot: slot, stored, from: old, to: x)
      b.handedOver.append((stored, old))
      id = stored
    }
    var node = Node()
    node.parent = b.open.last?.item ?? -1
    node.expanded = expanded
    if selected {
      node.selected = true
      node.sel = 1
      selection.insert(x)
    }
    store(x, node, ItemContent(id: id, title: title, fields: fields))
    b.pending.append(x)
    b.last = x
    if tracking { b.created.append(x) }
    return .built(x)
  }

  /// `build` for one new node without children (the usual event): no stack, no buffers.
  mutating func buildOne(_ n: OutlineNode, base: Int) throws(ListFault) -> Handle {
    try buildOne(n.id, title: n.title, fields: n.fields, expanded: n.expanded, base: base)
  }

  /// `buildOne` from the node's parts.
  mutating func buildOne(
    _ id: String, title: String?, fields: [String: String]?, expanded: Bool, base: Int
  ) throws(ListFault) -> Handle {
    guard base <= Self.deepestLevel else { throw .tooDeep(item: id, level: base) }
    let x = nextNodeHandle
    let inserted = ProbeKey.with(id, seed: itemIndex.seed) { registerItem($0, x) }
    guard case .inserted(let stored) = inserted else { throw .duplicateItem(id) }
    var node = Node()
    node.expanded = expanded
    store(x, node, ItemContent(id: stored, title: title, fields: fields))
    return x
  }

  private func isReplacing(_ replacing: Replacing) -> Bool {
    if case .nothing = replacing { return false }
    return true
  }

  /// Whether item `h` is one that the build drops (so its id may be reused).
  private func isReplaced(_ h: Handle, by replacing: Replacing) -> Bool {
    switch replacing {
    case .nothing: return false
    case .children(let p): return h != p && isSelfOrAncestor(p, of: h)
    case .section(let s): return section(of: h) == s
    }
  }

  /// Closes the sibling lists of the open items deeper than `depth`: each becomes a B-tree
  /// under its item, whose totals and height are then final.
  mutating func close(_ b: inout BuildScratch, to depth: Int) {
    while b.open.count > depth {
      let (x, start) = b.open.removeLast()
      let root = b.pending.withUnsafeBufferPointer {
        buildList(UnsafeBufferPointer(rebasing: $0[start...]))
      }
      b.pending.removeSubrange(start...)
      let list = blocks[Int(root)]
      nodes.withUnsafeMutableBufferPointer { all in
        all[Int(x)].children = root
        all[Int(x)].cnt = 1 &+ list.cnt
        all[Int(x)].sel &+= list.sel
        if all[Int(x)].expanded { all[Int(x)].vis = 1 &+ list.vis }
        all[Int(x)].height = list.height == UInt8.max ? list.height : list.height &+ 1
      }
    }
  }

  /// Takes back everything a faulted build made outside a batch: ids handed over go back to
  /// their items, new ids and nodes and their blocks are freed. Inside a batch the batch's
  /// rollback does this.
  mutating func undoBuild(_ b: inout BuildScratch) {
    guard !inBatch else { return }
    for (id, old) in b.handedOver { itemIndex.restore(id, to: old) }
    for x in b.created {
      itemIndex.remove(content[Int(x)].id, ifMapsTo: x)
      if nodes[Int(x)].children >= 0 { releaseBlocks(ofList: nodes[Int(x)].children) }
      nodes[Int(x)].live = false
      nodes[Int(x)].children = -1
      content[Int(x)].title = nil
      content[Int(x)].fields = nil
      freeNodes.append(x)
    }
  }

  /// Builds `list` (with their subtrees) as detached items whose top level is `base`,
  /// checking as it goes the nesting limit and that the ids are new (or dropped by what the
  /// build replaces); a fault leaves nothing behind. Returns the top items in order.
  /// - Complexity: O(items), without recursion.
  mutating func build(
    _ list: [OutlineNode], base: Int, replacing: Replacing = .nothing
  ) throws(ListFault) -> [Handle] {
    if list.isEmpty { return [] }
    if list.count == 1 && list[0].box == nil && !isReplacing(replacing) {
      return [try buildOne(list[0], base: base)]
    }
    var b = BuildScratch()
    swap(&b, &scratch)
    defer {
      b.reset()
      swap(&b, &scratch)
    }
    // Pre-order walk over the nodes with a stack of sibling cursors (its depth is the level).
    var stack: [(siblings: [OutlineNode], next: Int)] = [(list, 0)]
    while let top = stack.last {
      if top.next == top.siblings.count {
        stack.removeLast()
        continue
      }
      let n = top.siblings[top.next]
      stack[stack.count &- 1].next &+= 1
      let level = stack.count &- 1
      if base &+ level > Self.deepestLevel {
        undoBuild(&b)
        throw .tooDeep(item: n.id, level: base &+ level)
      }
      let built = ProbeKey.with(n.id, seed: itemIndex.seed) { k in
        buildItem(
          &b, level: level, key: k, expanded: n.expanded, selected: false, title: n.title,
          fields: n.fields, replacing: replacing, tracking: true)
      }
      if case .taken(let old) = built {
        undoBuild(&b)
        throw b.created.contains(old) ? .repeatedItem(n.id) : .duplicateItem(n.id)
      }
      if !n.children.isEmpty { stack.append((n.children, 0)) }
    }
    close(&b, to: 0)
    return b.pending
  }
}
