import ListTapeSamples
import Testing

@testable import ListTapeModel

/// The model's own id table against a plain dictionary: growth, updates, removals that
/// shift probe runs back, and keys that differ only in how a character is spelled.
@Suite struct IdentifierIndexTests {
  @Test(arguments: [7, 8, 9] as [UInt64])
  func agreesWithADictionaryUnderChurn(seed: UInt64) {
    var rng = SplitMix64(seed: seed)
    var index = IdentifierIndex()
    var reference: [IdentifierKey: Handle] = [:]
    // A small key space, so that the same ids come back after removal and runs collide.
    let keys =
      (0..<3_000).map { $0 % 3 == 0 ? "k\($0)" : "library/group-\($0 % 17)/item-\($0)" }
      + [
        "", "é", "e\u{301}", "a much longer identifier \u{1F600}", "fifteen-bytes!!",
        "sixteen-bytes!!!",
      ]
    for step in 0..<100_000 {
      let key = keys[rng.below(keys.count)]
      switch rng.below(10) {
      case 0..<5:
        let h = Handle(rng.below(1 << 20))
        index[key] = h
        reference[IdentifierKey(key)] = h
      case 5..<8:
        index[key] = nil
        reference[IdentifierKey(key)] = nil
      default:
        #expect(index[key] == reference[IdentifierKey(key)], "step \(step): \(key)")
      }
      if step % 10_000 == 0 {
        #expect(index.count == reference.count)
        for k in keys { #expect(index[k] == reference[IdentifierKey(k)], "step \(step): \(k)") }
      }
    }
    #expect(index.count == reference.count)
    for k in keys { #expect(index[k] == reference[IdentifierKey(k)]) }
  }

  @Test func canonicallyEquivalentSpellingsAreDistinctKeys() {
    var index = IdentifierIndex()
    index["\u{E9}"] = 1
    #expect(index["e\u{301}"] == nil)
    index["e\u{301}"] = 2
    #expect(index["\u{E9}"] == 1)
    #expect(index["e\u{301}"] == 2)
    index["\u{E9}"] = nil
    #expect(index["e\u{301}"] == 2)
    #expect(index.count == 1)
  }

  /// Ids are bytes, not strings: short ones inside the slot, long ones in one arena, so the
  /// table and the items' contents hold no reference per id.
  @Test func idsAreKeptAsBytes() throws {
    #expect(_isPOD(StoredID.self))
    #expect(_isPOD(Node.self))
    var s = ListState()
    try s.appendSections(["S"])
    let uuids = (0..<1_000).map { IdShape.uuid.name("i", $0) }
    try s.appendItems(uuids.map { OutlineNode($0) } + ["short-15-bytes!"], toSection: "S")
    #expect(s.forest.itemIndex.arena.count == 36 * 1_000)
    #expect(s.forest.content.allSatisfy { $0.id.isInline == ($0.id.count <= 15) })
    #expect(s.allItems(inSection: "S") == uuids + ["short-15-bytes!"])
  }

  /// Deleting long ids leaves garbage in the arena; compaction keeps it below half of the
  /// arena (past a small floor) while every lookup stays right, batches and rollbacks
  /// included.
  @Test func churnOfLongIdsKeepsTheArenaBounded() throws {
    var rng = SplitMix64(seed: 12)
    var s = ListState()
    try s.appendSections(["S"])
    var live: [String] = []
    var next = 0
    for step in 0..<4_000 {
      if live.count < 500 || rng.chance(50) {
        let ids = (0..<(1 + rng.int(20))).map { _ -> String in
          next += 1
          return IdShape.uuid.name("i", next)
        }
        if rng.chance(10) {
          // A batch that adds and then faults: its arena bytes go with it.
          let arena = s.forest.itemIndex.arena.count
          let batch = Event(
            .batch([
              Event(.appendItems(ids.map { OutlineNode($0) }, section: "S", parent: nil)),
              Event(.moveItem(ids[0], .after(ids[0]))),
            ]))
          #expect(throws: ListFault.self) { try s.apply(batch) }
          #expect(s.forest.itemIndex.arena.count == arena)
          continue
        }
        try s.appendItems(ids.map { OutlineNode($0) }, toSection: "S")
        live += ids
      } else {
        let k = rng.int(live.count)
        s.deleteItems([live[k]])
        live.swapAt(k, live.count - 1)
        live.removeLast()
      }
      let index = s.forest.itemIndex
      #expect(index.arena.count - index.garbage == 36 * live.count, "step \(step)")
      #expect(!index.needsCompaction, "step \(step)")
    }
    for id in live { #expect(s.contains(id)) }
    #expect(s.numberOfAllItems == live.count)
    #expect(invariantViolations(s).isEmpty)
    // Deleting nearly everything shrinks the arena to what is left.
    s.deleteItems(Array(live.dropFirst(10)))
    #expect(s.forest.itemIndex.arena.count <= 36 * 10 + 4_096)
    #expect(invariantViolations(s).isEmpty)
  }

  @Test func reservingKeepsEveryEntry() {
    var index = IdentifierIndex()
    for i in 0..<1_000 { index["id\(i)"] = Handle(i) }
    index.reserveCapacity(100_000)
    #expect(index.capacity >= 100_000)
    for i in 0..<1_000 { #expect(index["id\(i)"] == Handle(i)) }
    #expect(index["id1000"] == nil)
  }
}
