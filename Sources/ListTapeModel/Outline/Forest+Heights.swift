/// Heights (the levels below an item, the greatest below a block), kept for the nesting
/// limit of `moveItem`.
extension Forest {
  /// The height an entry holds: an item's own, or a block's greatest.
  @inline(__always) func entryHeight(_ h: Handle, leaf: Bool) -> UInt8 {
    leaf ? nodes[Int(h)].height : blocks[Int(h)].height
  }

  /// The greatest height among block `b`'s entries. - Complexity: O(fan-out).
  func scannedHeight(_ b: Handle) -> UInt8 {
    let block = blocks[Int(b)]
    var height: UInt8 = 0
    for i in 0..<Int(block.count) {
      height = max(height, entryHeight(entry(b, i), leaf: block.leaf))
    }
    return height
  }

  /// The height item `x` has by its children: one more than its list's greatest, 0 without.
  @inline(__always) func heightByChildren(_ x: Handle) -> UInt8 {
    let c = nodes[Int(x)].children
    guard c >= 0 else { return 0 }
    let h = blocks[Int(c)].height
    return h == UInt8.max ? h : h &+ 1
  }

  /// Raises the heights of block `b` and the blocks above it to at least `height` (a new
  /// entry's): one header per level, and only while they grow.
  @inline(__always) mutating func raiseHeights(from b: Handle, to height: UInt8) {
    var b = b
    while b >= 0 && blocks[Int(b)].height < height {
      editBlock(b) { $0.height = height }
      b = blocks[Int(b)].parent
    }
  }

  /// After an entry of height `removed` left block `b`: rescans the blocks from `b` up while
  /// that entry may have been their tallest. Nothing to do for a removed height of 0.
  mutating func lowerHeights(from b: Handle, removed: UInt8) {
    var b = b
    while b >= 0 && removed > 0 && blocks[Int(b)].height == removed {
      let h = scannedHeight(b)
      if h == removed { return }
      editBlock(b) { $0.height = h }
      b = blocks[Int(b)].parent
    }
  }

  /// Recomputes item `x`'s height from its children and carries a change up through the
  /// blocks holding it and through its ancestors, stopping once nothing changes.
  /// - Complexity: O(depth × log siblings), times the fan-out where a height drops.
  mutating func refreshHeight(_ x: Handle) {
    var x = x
    while x >= 0 {
      let n = nodes[Int(x)]
      let h = heightByChildren(x)
      if h == n.height { return }
      edit(x) { $0.height = h }
      guard n.block >= 0 else { return }
      let root = listRoot(of: x)
      let before = blocks[Int(root)].height
      if h > n.height {
        raiseHeights(from: n.block, to: h)
      } else {
        lowerHeights(from: n.block, removed: n.height)
      }
      if blocks[Int(root)].height == before { return }
      x = n.parent
    }
  }
}
