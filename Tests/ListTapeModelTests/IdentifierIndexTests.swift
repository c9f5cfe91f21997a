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
      (0..<3_000).map { "k\($0)" } + ["", "é", "e\u{301}", "a much longer identifier \u{1F600}"]
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

  @Test func reservingKeepsEveryEntry() {
    var index = IdentifierIndex()
    for i in 0..<1_000 { index["id\(i)"] = Handle(i) }
    index.reserveCapacity(100_000)
    #expect(index.capacity >= 100_000)
    for i in 0..<1_000 { #expect(index["id\(i)"] == Handle(i)) }
    #expect(index["id1000"] == nil)
  }
}
