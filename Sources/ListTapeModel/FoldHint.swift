import CListTapeHints

/// Where folding one event will look first: the hashes of the first one or two
/// identifiers it looks up (its target, and the anchor or new item).
///
/// On a list far larger than the CPU's caches, each event's lookups are a chain of cache
/// misses (the id's table slot, then its node and content) that the fold waits for one
/// after another. A fold of many events that knows these hashes a few events early can
/// start those loads while it works on the events before (`ListState.prefetch`), the way a
/// hash join prefetches its probes. Replays compute hints on the decoding thread. A hint
/// is only valid in the process that made it (the hash is seeded per process) and never
/// changes a result: a stale or colliding hint only loads a line for nothing.
package struct FoldHint: Sendable {
  let first: UInt32
  let second: UInt32

  /// The hint for `event`: nothing to prefetch for section, batch and mark events.
  package init(_ event: Event) {
    // A long id is not hashed: that would cost its length per event, where the fold itself
    // finds an id it has just seen by the identity of its string.
    func hash(_ id: String) -> UInt32 {
      id.utf8.count >= IdentifierIndex.rememberedLength ? 0 : IdentifierIndex.hash(of: id)
    }
    switch event.operation {
    case .expand(let ids), .collapse(let ids), .select(let ids), .deselect(let ids?),
      .deleteItems(let ids), .reloadItems(let ids), .reconfigureItems(let ids):
      let h = ids.first.map(hash) ?? 0
      (first, second) = (h, h)
    case .update(let item, _, _):
      let h = hash(item)
      (first, second) = (h, h)
    case .moveItem(let id, let anchor):
      (first, second) = (hash(id), hash(anchor.id))
    case .insertItems(let items, let anchor):
      let anchor = hash(anchor.id)
      (first, second) = (anchor, items.first.map { hash($0.id) } ?? anchor)
    case .appendItems(let items, _, let parent?):
      let parent = hash(parent)
      (first, second) = (parent, items.first.map { hash($0.id) } ?? parent)
    case .appendItems(let items, _, nil):
      let h = items.first.map { hash($0.id) } ?? 0
      (first, second) = (h, h)
    default:
      (first, second) = (0, 0)
    }
  }
}

extension ListState {
  /// Events ahead of the fold whose table slots are prefetched.
  static let slotDistance = 8
  /// Events ahead of the fold whose nodes and contents are prefetched (their slots were
  /// prefetched `slotDistance - nodeDistance` events earlier, so the probe hits the cache).
  static let nodeDistance = 4
  /// Item-table slots below which the list fits in the CPU's caches and hints are ignored:
  /// there a prefetch only costs (docs/performance.md).
  static let prefetchMinimumSlots = 1 << 16

  /// Call before folding `hints`' event `i`: starts loading the table slots of event
  /// `i + 8` and the nodes and contents of event `i + 4`. Ignored on small lists.
  @inline(__always)
  package func prefetch(_ hints: UnsafeBufferPointer<FoldHint>, before i: Int) {
    forest.prefetch(hints, before: i)
  }
}

extension Forest {
  /// `ListState.prefetch`; tests lower `minimumSlots` to run it on small lists.
  @inline(__always) func prefetch(
    _ hints: UnsafeBufferPointer<FoldHint>, before i: Int,
    minimumSlots: Int = ListState.prefetchMinimumSlots
  ) {
    guard itemIndex.slotCount >= minimumSlots else { return }
    if i &+ ListState.slotDistance < hints.count {
      let hint = hints[i &+ ListState.slotDistance]
      itemIndex.prefetch(hash: hint.first)
      if hint.second != hint.first { itemIndex.prefetch(hash: hint.second) }
    }
    if i &+ ListState.nodeDistance < hints.count {
      let hint = hints[i &+ ListState.nodeDistance]
      prefetchItem(itemIndex.prefetchEntry(taggedWith: hint.first), content: true)
      if hint.second != hint.first {
        prefetchItem(itemIndex.prefetchEntry(taggedWith: hint.second), content: false)
      }
    }
  }

  /// Starts loading item `h`'s node (and its content); nothing for -1.
  @inline(__always) func prefetchItem(_ h: Handle, content withContent: Bool) {
    guard h >= 0 && Int(h) < nodes.count else { return }
    nodes.withUnsafeBufferPointer { listtape_prefetch($0.baseAddress.map { $0 + Int(h) }) }
    if withContent {
      content.withUnsafeBufferPointer { listtape_prefetch($0.baseAddress.map { $0 + Int(h) }) }
    }
  }
}
