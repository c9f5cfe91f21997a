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
  /// Entries handed over by items the build replaces: the entry and its previous item.
  var handedOver: [(Int32, Handle)] = []

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
  /// the item (detached, its parent the open item above it) under the id of entry `e`. An
  /// entry that an item outside what `replacing` covers holds is taken (nothing changes);
  /// one that a replaced item holds is handed over. With `tracking`, the item is remembered
  /// so that `undoBuild` can take it back. - Complexity: O(1), no hashing.
  @inline(__always) mutating func buildItem(
    _ b: inout BuildScratch, level: Int, entry e: Int32, expanded: Bool, selected: Bool,
    content c: ContentRef, replacing: Replacing, tracking: Bool
  ) -> BuiltItem {
    let old = item(entry: e)
    if old >= 0 {
      guard isReplaced(old, by: replacing) else { return .taken(by: old) }
    }
    if level > b.open.count {
      b.open.append((b.last, b.pending.count))
    } else if level < b.open.count {
      close(&b, to: level)
    }
    let x = nextNodeHandle
    if old >= 0 { b.handedOver.append((e, old)) }
    var node = Node()
    node.parent = b.open.last?.item ?? -1
    node.expanded = expanded
    if selected {
      node.selected = true
      node.sel = 1
    }
    store(x, node, entry: e, c)
    mapItem(e, to: x)
    b.pending.append(x)
    b.last = x
    if tracking { b.created.append(x) }
    return .built(x)
  }

  /// `buildOne` of the id of entry `e`, with content already stored (reclaimed on a fault).
  mutating func buildOne(entry e: Int32, content c: ContentRef, expanded: Bool, base: Int)
    throws(ListFault) -> Handle
  {
    guard base <= Self.deepestLevel else {
      textGarbage &+= Int(c.length)
      throw .tooDeep(item: ids.text(Int(e)), level: base)
    }
    guard item(entry: e) < 0 else {
      textGarbage &+= Int(c.length)
      throw .duplicateItem(ids.text(Int(e)))
    }
    let x = nextNodeHandle
    var node = Node()
    node.expanded = expanded
    store(x, node, entry: e, c)
    mapItem(e, to: x)
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
      adopt(list: root, by: x)
    }
  }

  /// Makes the built list whose root block is `root` item `x`'s children: its totals and
  /// height then count the list's.
  @inline(__always) mutating func adopt(list root: Handle, by x: Handle) {
    let list = blocks[Int(root)]
    nodes.withUnsafeMutableBufferPointer { all in
      all[Int(x)].children = root
      all[Int(x)].cnt = 1 &+ list.cnt
      all[Int(x)].sel &+= list.sel
      if all[Int(x)].expanded { all[Int(x)].vis = 1 &+ list.vis }
      all[Int(x)].height = list.height == UInt8.max ? list.height : list.height &+ 1
    }
  }

  /// Takes back everything a faulted build made outside a batch: ids handed over go back to
  /// their items, new ids and nodes and their blocks are freed. Inside a batch the batch's
  /// rollback does this.
  mutating func undoBuild(_ b: inout BuildScratch) {
    guard !inBatch else { return }
    for x in b.created {
      let e = entryOf[Int(x)]
      if item(entry: e) == x { handleOf[Int(e)] = -1 }
      if nodes[Int(x)].children >= 0 { releaseBlocks(ofList: nodes[Int(x)].children) }
      if nodes[Int(x)].selected { selectedCount &-= 1 }
      itemCount &-= 1
      nodes[Int(x)].live = false
      nodes[Int(x)].children = -1
      textGarbage &+= Int(content[Int(x)].length)
      content[Int(x)] = .none
      freeNodes.append(x)
    }
    for (e, old) in b.handedOver { handleOf[Int(e)] = old }
  }

  /// Builds the node list at word `w` of `ops` (a count, then each node in pre-order:
  /// entry, level | expanded << 16, text) as detached items whose top level is `base`,
  /// checking as it goes the nesting limit and that the ids are new (or dropped by what the
  /// build replaces); a fault leaves nothing behind. Returns the top items in order.
  /// - Complexity: O(items), no hashing, without recursion.
  mutating func build(
    _ ops: FoldOps, atWord w: Int, base: Int, replacing: Replacing = .nothing
  ) throws(ListFault) -> [Handle] {
    let n = Int(ops.words[w])
    if n == 0 { return [] }
    @inline(__always) func content(_ k: Int32) -> ContentRef {
      k < 0 ? .none : ops.withText(k) { storeText($0) }
    }
    if n == 1, case .nothing = replacing {
      let e = ops.words[w &+ 1]
      let l = ops.words[w &+ 2]
      return [
        try buildOne(
          entry: e, content: content(ops.words[w &+ 3]), expanded: l >> 16 != 0, base: base)
      ]
    }
    makeRoom(forNodes: n)
    var b = BuildScratch()
    swap(&b, &scratch)
    defer {
      b.reset()
      swap(&b, &scratch)
    }
    var at = w &+ 1
    for _ in 0..<n {
      let e = ops.words[at]
      let l = ops.words[at &+ 1]
      let level = Int(l & 0xFFFF)
      let k = ops.words[at &+ 2]
      at &+= 3
      if base &+ level > Self.deepestLevel {
        undoBuild(&b)
        throw .tooDeep(item: ids.text(Int(e)), level: base &+ level)
      }
      let c = content(k)
      let built = buildItem(
        &b, level: level, entry: e, expanded: l >> 16 != 0, selected: false, content: c,
        replacing: replacing, tracking: true)
      if case .taken(let old) = built {
        textGarbage &+= Int(c.length)
        undoBuild(&b)
        let id = ids.text(Int(e))
        throw b.created.contains(old) ? .repeatedItem(id) : .duplicateItem(id)
      }
    }
    close(&b, to: 0)
    return b.pending
  }
}
