import Testing

@testable import ListTapeModel

/// Fold hints name the ids the fold looks up first, find their items through the tag
/// probe, and never change what a fold computes, however stale or wrong they are.
@Suite struct FoldHintTests {
  static func hash(_ id: String) -> UInt32 { IdentifierIndex.hash(of: id) }

  @Test func hintsHashTheIdsTheFoldLooksUpFirst() {
    let cases: [(ListOperation, String?, String?)] = [
      (.expand(["a", "b"]), "a", "a"),
      (.collapse(["c"]), "c", "c"),
      (.select(["d"]), "d", "d"),
      (.deselect(["e"]), "e", "e"),
      (.deleteItems(["f"]), "f", "f"),
      (.reloadItems(["g"]), "g", "g"),
      (.reconfigureItems(["h"]), "h", "h"),
      (.update(item: "i", title: "T", fields: nil), "i", "i"),
      (.moveItem("j", .before("k")), "j", "k"),
      (.insertItems([OutlineNode("new")], .after("anchor")), "anchor", "new"),
      (.appendItems([OutlineNode("child")], section: nil, parent: "p"), "p", "child"),
      (.appendItems([OutlineNode("root")], section: "s", parent: nil), "root", "root"),
      (.appendSections(["s"]), nil, nil),
      (.deselect(nil), nil, nil),
      (.mark("m"), nil, nil),
      (.batch([Event(.expand(["a"]))]), nil, nil),
    ]
    for (op, first, second) in cases {
      let hint = FoldHint(Event(op))
      #expect(hint.first == first.map(Self.hash) ?? 0, "\(op)")
      #expect(hint.second == second.map(Self.hash) ?? 0, "\(op)")
    }
  }

  @Test func theTagProbeFindsEveryLiveItem() {
    var index = IdentifierIndex()
    // Short keys inline, long ones in the arena (whose bytes the probe also prefetches).
    let keys = (0..<3_000).map {
      $0 % 2 == 0 ? "item-\($0)" : "library/group-\($0 / 100)/item-\($0)"
    }
    for (i, key) in keys.enumerated() { index[key] = Handle(i) }
    // Removals shift probe runs back; the probe must still find what stays.
    for key in keys where key.hasSuffix("7") { index[key] = nil }
    // The probe looks at most four slots from home, so an item deep in a long run is
    // missed (-1), never mistaken for another.
    var hits = 0
    for (i, key) in keys.enumerated() {
      let found = index.prefetchEntry(taggedWith: Self.hash(key))
      if key.hasSuffix("7") {
        #expect(found != Handle(i), "\(key) was removed")
      } else {
        #expect(found == Handle(i) || found == -1, "\(key): \(found)")
        if found == Handle(i) { hits += 1 }
      }
    }
    #expect(hits >= (keys.count - 300) * 9 / 10)
    #expect(IdentifierIndex().prefetchEntry(taggedWith: 12345) == -1)
  }

  /// Random sessions folded plainly, with their own hints and with another session's
  /// hints, prefetching even on these small lists: the same states and faults.
  @Test(arguments: [5, 6] as [UInt64])
  func prefetchingNeverChangesAFold(seed: UInt64) throws {
    let events = Self.session(seed: seed, count: 5_000)
    let foreign = Self.session(seed: seed + 100, count: 5_000).map(FoldHint.init)
    let own = events.map(FoldHint.init)
    let (plain, plainFaults) = Self.fold(events, hints: nil)
    for hints in [own, foreign, Array(foreign.prefix(10))] {
      let (hinted, faults) = Self.fold(events, hints: hints)
      #expect(hinted == plain)
      #expect(faults == plainFaults)
    }
    #expect(plainFaults > 0)
  }

  static func session(seed: UInt64, count: Int) -> [Event] {
    var gen = EventGenerator(seed: seed)
    var reference = Reference()
    return (0..<count).map { _ in
      let e = gen.event(reference)
      try? reference.apply(e)
      return e
    }
  }

  static func fold(_ events: [Event], hints: [FoldHint]?) -> (ListState, Int) {
    var state = ListState()
    var faults = 0
    (hints ?? []).withUnsafeBufferPointer { hints in
      for (i, e) in events.enumerated() {
        state.forest.prefetch(hints, before: i, minimumSlots: 0)
        do { try state.apply(e) } catch { faults += 1 }
      }
    }
    return (state, faults)
  }
}
