import Testing

@testable import ListTapeModel

/// Outlines far deeper than any screen: folding, queries, equality and the state codec must
/// not recurse or rescan once per level. (`sectionSnapshot(for:)` still converts through
/// nested `OutlineNode` values and is not covered here.)
@Suite struct DeepOutlineTests {
  static let depth = 30_000

  /// A chain `d0 > d1 > …` of `depth` items, built through the state codec in O(depth).
  static func chain(expanded: Bool) throws -> ListState {
    var bytes: [UInt8] = [1, 0, 1]
    func varint(_ v: Int) {
      var v = UInt64(v)
      while v >= 0x80 {
        bytes.append(UInt8(truncatingIfNeeded: v) | 0x80)
        v >>= 7
      }
      bytes.append(UInt8(v))
    }
    func string(_ s: String) {
      varint(s.utf8.count)
      bytes += Array(s.utf8)
    }
    string("S")
    varint(depth)
    for i in 0..<depth {
      varint(i)
      bytes.append(expanded ? 1 : 0)
      string("d\(i)")
    }
    return try ListState(encoded: bytes)
  }

  @Test func queriesAndCopiesOfAVeryDeepChain() throws {
    var s = try Self.chain(expanded: true)
    let last = "d\(Self.depth - 1)"
    #expect(s.level(of: last) == Self.depth - 1)
    #expect(s.indexPath(for: last)?.item == Self.depth - 1)
    #expect(s.numberOfItems(inSection: "S") == Self.depth)
    #expect(s.allItems(inSection: "S")?.count == Self.depth)
    #expect(s.json(event: 1).count > Self.depth)
    #expect(try ListState(encoded: s.encoded()) == s)
    try s.collapse(["d0"])
    #expect(s.numberOfItems == 1)
    s.deleteItems(["d0"])
    #expect(s.numberOfAllItems == 0)
  }
}
