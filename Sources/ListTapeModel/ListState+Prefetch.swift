#if canImport(CListTapePrefetch)
internal import CListTapePrefetch
#endif

/// Cache hints for the fold: a folded state's items are scattered over megabytes, so the
/// first read of an event's item waits on memory. A record a few ahead names its item in
/// its first words; asking for that item's lines early lets the misses of several events
/// overlap instead of following one another. Builds without the C module (the viewer's
/// wasm) fold the same, unhinted.
extension ListState {
  /// Records ahead whose entry slot, item, then leaf block and parent are asked for: each
  /// stage reads what the one before asked for.
  static let slotDistance = 16
  static let itemDistance = 8
  static let blockDistance = 4

  /// Hints the lines that records `i + slotDistance`, `i + itemDistance` and
  /// `i + blockDistance` of `ops` will read first. Only hints: a record that names nothing,
  /// or an entry without an item, asks for nothing, and nothing read here decides anything.
  @inline(__always) func prefetchAhead(_ ops: FoldOps, _ i: Int) {
    #if canImport(CListTapePrefetch)
    let count = ops.starts.count
    if i &+ Self.slotDistance < count {
      let e = ops.firstEntry(i &+ Self.slotDistance)
      if e >= 0 { Self.hint(forest.handleOf, Int(e), write: false) }
    }
    if i &+ Self.itemDistance < count {
      let x = forest.item(entry: ops.firstEntry(i &+ Self.itemDistance))
      if x >= 0 { Self.hint(forest.nodes, Int(x), write: true) }
    }
    if i &+ Self.blockDistance < count {
      let x = forest.item(entry: ops.firstEntry(i &+ Self.blockDistance))
      guard x >= 0 && Int(x) < forest.nodes.count else { return }
      let n = forest.nodes[Int(x)]
      if n.block >= 0 {
        Self.hint(forest.blocks, Int(n.block), write: true)
        Self.hint(forest.slots, forest.slot(n.block, 0), write: false)
      }
      if n.parent >= 0 { Self.hint(forest.nodes, Int(n.parent), write: true) }
    }
    #endif
  }

  /// Asks for the cache line of `array[i]` (nothing when `i` is out of bounds).
  @inline(__always) static func hint<T>(_ array: [T], _ i: Int, write: Bool) {
    #if canImport(CListTapePrefetch)
    array.withUnsafeBufferPointer { p in
      guard i < p.count, let base = p.baseAddress else { return }
      if write { listtape_prefetch_write(base + i) } else { listtape_prefetch(base + i) }
    }
    #endif
  }
}

/// Asks for the cache line of `p[i]` before a walk reads it (a hint: nothing when `i` is
/// out of bounds; nothing in builds without the C module).
@inline(__always) func prefetchLine<T>(_ p: UnsafeBufferPointer<T>, _ i: Int) {
  #if canImport(CListTapePrefetch)
  guard i >= 0 && i < p.count, let base = p.baseAddress else { return }
  listtape_prefetch(base + i)
  #endif
}
