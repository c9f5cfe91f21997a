/// Where nodes, blocks and sections come from and go: free lists (recycled only once a
/// batch commits) and the reclaiming of removed ids' arena bytes.
extension Forest {
  /// The handle the next new node gets: a free one outside batches (which recycle only once
  /// they commit), else a new one at the end.
  @inline(__always) var nextNodeHandle: Handle {
    if !inBatch, let free = freeNodes.last { return free }
    return Handle(nodes.count)
  }

  /// Stores new node `x` (which `nextNodeHandle` gave) with its content, taking it off the
  /// free list or appending it.
  @inline(__always) mutating func store(_ x: Handle, _ node: Node, _ c: ItemContent) {
    if Int(x) < entryTags.count { entryTags[Int(x)] = -1 }
    if Int(x) == nodes.count {
      nodes.append(node)
      content.append(c)
    } else {
      freeNodes.removeLast()
      nodes[Int(x)] = node
      content[Int(x)] = c
    }
  }

  /// Unregisters and frees a node already detached from every list.
  mutating func release(_ x: Handle) {
    unregisterItem(x)
    if nodes[Int(x)].selected { selection.remove(x) }
    edit(x) {
      $0.live = false
      $0.selected = false
      $0.children = -1
    }
    if content[Int(x)].title != nil || content[Int(x)].fields != nil {
      editContent(x) {
        $0.title = nil
        $0.fields = nil
      }
    }
    if inBatch {
      journal?.pendingFreeNodes.append(x)
    } else {
      freeNodes.append(x)
    }
  }

  /// A fresh, empty block.
  mutating func allocateBlock(leaf: Bool) -> Handle {
    if !inBatch, let free = freeBlocks.popLast() {
      blocks[Int(free)] = Block(leaf: leaf)
      return free
    }
    blocks.append(Block(leaf: leaf))
    slots.append(contentsOf: BlockLayout.emptyEntries)
    return Handle(blocks.count - 1)
  }

  mutating func releaseBlock(_ b: Handle) {
    editBlock(b) {
      $0.live = false
      $0.count = 0
    }
    if inBatch {
      journal?.pendingFreeBlocks.append(b)
    } else {
      freeBlocks.append(b)
    }
  }

  /// Frees every block of a list's B-tree (the items are the caller's business).
  mutating func releaseBlocks(ofList root: Handle) {
    var all: [Handle] = []
    forEachBlock(root) { all.append($0) }
    for b in all { releaseBlock(b) }
  }

  /// A new section registered under `id`, or nil when the id is taken.
  mutating func allocateSection(_ id: String) -> Handle? {
    let s = !inBatch ? freeSections.last ?? Handle(sections.count) : Handle(sections.count)
    let inserted = ProbeKey.with(id, seed: sectionIndex.seed) { sectionIndex.insert($0, s) }
    guard case .inserted(let key) = inserted else { return nil }
    if inBatch { journal?.sectionIndex.append((key, nil)) }
    let slot = SectionSlot(id: id, key: key)
    if Int(s) == sections.count {
      sections.append(slot)
    } else {
      freeSections.removeLast()
      sections[Int(s)] = slot
    }
    return s
  }

  mutating func releaseSection(_ s: Handle) {
    let key = sections[Int(s)].key
    if sectionIndex.remove(key, ifMapsTo: s), inBatch {
      journal?.sectionIndex.append((key, s))
    }
    editSection(s) {
      $0.live = false
      $0.roots = -1
    }
    if inBatch {
      journal?.pendingFreeSections.append(s)
    } else {
      freeSections.append(s)
    }
  }

  /// Reclaims the arena bytes of removed ids when they are worth it; never inside a batch,
  /// whose journal still refers to them.
  mutating func compactIfNeeded() {
    guard !inBatch else { return }
    if itemIndex.needsCompaction {
      // Take the contents out so the closure does not overlap the index's access.
      var c = content
      content = []
      itemIndex.compact { x, id in c[Int(x)].id = id }
      content = c
    }
    if sectionIndex.needsCompaction {
      var s = sections
      sections = []
      sectionIndex.compact { x, id in s[Int(x)].key = id }
      sections = s
    }
  }
}
