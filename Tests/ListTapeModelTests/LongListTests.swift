import ListTapeSamples
import Testing

@testable import ListTapeModel

/// Sibling lists long enough to need several B-tree levels (fan-out 16): random inserts,
/// deletes and moves against a plain array, positions and rows checked, and batches that
/// fault after splitting blocks roll back to exactly the state before.
@Suite struct LongListTests {
  @Test(arguments: [21, 22] as [UInt64])
  func longFlatListAgreesWithAnArray(seed: UInt64) throws {
    var rng = SplitMix64(seed: seed)
    var state = ListState()
    try state.appendSections(["s"])
    var reference: [String] = []
    var next = 0
    func fresh() -> String {
      next += 1
      return "x\(next)"
    }
    // Grow to a few thousand siblings (three levels), then churn.
    let first = (0..<3_000).map { _ in fresh() }
    try state.appendItems(first.map { OutlineNode($0) }, toSection: "s")
    reference = first
    for step in 0..<6_000 {
      switch rng.below(10) {
      case 0..<4:
        let anchor = reference[rng.below(reference.count)]
        let id = fresh()
        let after = rng.below(2) == 0
        if after {
          try state.insertItems([OutlineNode(id)], afterItem: anchor)
        } else {
          try state.insertItems([OutlineNode(id)], beforeItem: anchor)
        }
        let i = reference.firstIndex(of: anchor)!
        reference.insert(id, at: after ? i + 1 : i)
      case 4..<6:
        guard reference.count > 1 else { continue }
        let id = reference.remove(at: rng.below(reference.count))
        state.deleteItems([id])
      case 6..<8:
        let a = reference[rng.below(reference.count)]
        let b = reference[rng.below(reference.count)]
        guard a != b else { continue }
        let after = rng.below(2) == 0
        if after {
          try state.moveItem(a, afterItem: b)
        } else {
          try state.moveItem(a, beforeItem: b)
        }
        reference.remove(at: reference.firstIndex(of: a)!)
        let j = reference.firstIndex(of: b)!
        reference.insert(a, at: after ? j + 1 : j)
      default:
        // Several appends at the end, then one at the front.
        let ids = (0..<rng.below(40)).map { _ in fresh() }
        try state.appendItems(ids.map { OutlineNode($0) }, toSection: "s")
        reference.append(contentsOf: ids)
      }
      if step % 500 == 0 {
        #expect(invariantViolations(state).isEmpty, "step \(step)")
        #expect(state.itemIdentifiers(inSection: "s") == reference, "step \(step)")
      }
      let probe = reference[rng.below(reference.count)]
      #expect(state.indexOfItem(probe) == reference.firstIndex(of: probe), "step \(step)")
      #expect(state.indexPath(for: probe)?.item == reference.firstIndex(of: probe), "step \(step)")
    }
    #expect(invariantViolations(state).isEmpty)
    #expect(state.itemIdentifiers(inSection: "s") == reference)
  }

  @Test func aBatchThatSplitsBlocksThenFaultsLeavesNothingBehind() throws {
    var state = ListState()
    try state.appendSections(["s"])
    try state.appendItems((0..<200).map { OutlineNode("a\($0)") }, toSection: "s")
    let before = state
    // Hundreds of single inserts (many leaf and inner splits), then a fault.
    var events = (0..<400).map { i in
      Event(.insertItems([OutlineNode("b\(i)")], .after("a\(i % 200)")))
    }
    events.append(Event(.select(["missing"])))
    #expect(throws: ListFault.self) { try state.apply(Event(.batch(events))) }
    #expect(state == before)
    #expect(invariantViolations(state).isEmpty)
    // And the same batch without the fault commits whole.
    events.removeLast()
    try state.apply(Event(.batch(events)))
    #expect(state.numberOfItems(inSection: "s") == 600)
    #expect(invariantViolations(state).isEmpty)
  }
}
