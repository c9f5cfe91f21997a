import ListTapeSamples
import Testing

@testable import ListTapeModel

/// The writer's id table (`IdentifierIndex`) against a plain dictionary: growth, updates,
/// removals (backward shifts through runs of colliding slots), and keys that differ only in
/// how a character is spelled; and the state's own ids (`IdSpace`), kept as bytes and
/// bounded under churn.
@Suite struct IdentifierIndexTests {
  @Test(arguments: [7, 8, 9] as [UInt64])
  func agreesWithADictionaryUnderChurn(seed: UInt64) {
    var rng = SplitMix64(seed: seed)
    var index = IdentifierIndex()
    var reference: [IdentifierKey: Handle] = [:]
    // A small key space, so that the same ids come back and runs collide.
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
      case 5:
        index.remove(key)
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
    #expect(index.count == 2)
    var ids = IdSpace()
    let a = ids.define("\u{E9}")
    let b = ids.define("e\u{301}")
    #expect(a != b)
    #expect(ids.entry(of: "\u{E9}") == a && ids.entry(of: "e\u{301}") == b)
  }

  /// Ids are bytes, not strings: each once in the state's id space (a canonical UUID in 16
  /// bytes and its case), items keyed by entry, so the state's arrays hold no reference per
  /// item.
  @Test func idsAreKeptAsBytes() throws {
    #expect(_isPOD(StoredID.self))
    #expect(_isPOD(Node.self))
    #expect(_isPOD(ContentRef.self))
    var s = ListState()
    try s.appendSections(["S"])
    let uuids = (0..<1_000).map { IdShape.uuid.name("i", $0) }
    try s.appendItems(uuids.map { OutlineNode($0) } + ["short-15-bytes!"], toSection: "S")
    #expect(s.forest.ids.bytes.count == 2 + 17 * 1_000 + 16)
    #expect(s.allItems(inSection: "S") == uuids + ["short-15-bytes!"])
  }

  /// Ids of deleted items stay (an id that comes back finds its entry) until dead ones
  /// outnumber the live ones by `Forest.idSlack`: then the state renumbers its ids, so a
  /// long churn of new ids keeps them bounded while every lookup stays right, batches and
  /// rollbacks included.
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
          // A batch that adds and then faults: the state is as before.
          let before = s
          let batch = Event(
            .batch([
              Event(.appendItems(ids.map { OutlineNode($0) }, section: "S", parent: nil)),
              Event(.moveItem(ids[0], .after(ids[0]))),
            ]))
          #expect(throws: ListFault.self) { try s.apply(batch) }
          #expect(s == before)
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
      let alive = s.numberOfAllItems + s.numberOfSections
      #expect(s.forest.ids.count <= 2 * alive + Forest.idSlack + 20, "step \(step)")
    }
    for id in live { #expect(s.contains(id)) }
    #expect(s.numberOfAllItems == live.count)
    #expect(invariantViolations(s).isEmpty)
    // Deleting nearly everything shrinks the ids to what is left.
    s.deleteItems(Array(live.dropFirst(10)))
    #expect(s.forest.ids.count <= 11 + Forest.idSlack)
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
