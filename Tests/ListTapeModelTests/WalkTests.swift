import ListTapeSamples
import Testing

@testable import ListTapeModel

/// `Forest.walk` visits a list's items in pre-order with their levels, into collapsed
/// items' children or not, over sibling lists of several B-tree levels whose handles
/// deletes and later appends have scattered: the same as a recursion over each children
/// list read whole (`Forest.list`).
@Suite struct WalkTests {
  /// Pre-order with levels by recursion, each sibling list read whole.
  static func reference(
    _ f: Forest, _ root: Handle, level: Int, visibleOnly: Bool, into out: inout [[Int]]
  ) {
    guard root >= 0 else { return }
    for x in f.list(root) {
      out.append([Int(x), level])
      let n = f.nodes[Int(x)]
      if n.children >= 0 && (!visibleOnly || n.expanded) {
        reference(f, n.children, level: level + 1, visibleOnly: visibleOnly, into: &out)
      }
    }
  }

  @Test(arguments: [1, 2, 3] as [UInt64])
  func walkIsPreorderWithLevels(seed: UInt64) throws {
    var rng = SplitMix64(seed: seed)
    var s = ListState()
    try s.appendSections(["S", "T", "U"])
    // A wide top list (inner blocks over many leaves) and deep subtrees.
    try s.appendItems(BulkBuildTests.tree(&rng, count: 3_000, prefix: "a"), toSection: "S")
    try s.appendItems(BulkBuildTests.tree(&rng, count: 400, prefix: "b"), toSection: "T")
    // Handles scattered: items deleted, then new ones appended under survivors (reusing
    // the freed handles), some with subtrees of their own.
    let all = s.allItems(inSection: "S") ?? []
    s.deleteItems(all.enumerated().filter { $0.offset % 7 == 3 }.map(\.element))
    let survivors = s.allItems(inSection: "S") ?? []
    for k in 0..<60 {
      let parent = survivors[rng.below(survivors.count)]
      let nodes = BulkBuildTests.tree(&rng, count: 1 + rng.below(40), prefix: "n\(k)-")
      try s.appendItems(nodes, toParent: parent)
    }
    let f = s.forest
    var checked = 0
    for section in f.sectionOrder {
      for visibleOnly in [false, true] {
        var walked: [[Int]] = []
        f.walk(list: f.sections[Int(section)].roots, visibleOnly: visibleOnly) { x, level in
          walked.append([Int(x), level])
        }
        var expected: [[Int]] = []
        Self.reference(
          f, f.sections[Int(section)].roots, level: 0, visibleOnly: visibleOnly, into: &expected)
        #expect(walked == expected, "section \(section), visibleOnly \(visibleOnly)")
        #expect(
          f.items(inSection: section, visibleOnly: visibleOnly).map { Int($0) }
            == expected.map { $0[0] })
        checked += expected.count
      }
    }
    // Deletes take subtrees with them: still over a thousand items walked.
    #expect(checked > 1_000)
    // A walk from inside the outline starts at the level given.
    let deep = try #require(
      f.nodes.indices.first { f.nodes[$0].live && f.nodes[$0].children >= 0 })
    var walked: [[Int]] = []
    f.walk(list: f.nodes[deep].children, level: 5, visibleOnly: false) { x, level in
      walked.append([Int(x), level])
    }
    var expected: [[Int]] = []
    Self.reference(f, f.nodes[deep].children, level: 5, visibleOnly: false, into: &expected)
    #expect(walked == expected)
  }
}
