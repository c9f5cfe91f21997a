import ListTapeModel
import ListTapeSamples
import Testing

@testable import ListTapeInvestigate
@testable import ListTapeStore

/// Laws of the state diff, on the states of seeded random sessions.
@Suite struct DiffLawTests {
  static func ids(_ list: [(id: String, place: ItemPlace)]) -> [String] { list.map(\.id) }

  @Test(arguments: [41, 42, 43] as [UInt64])
  func lawsHoldOnRandomPairsOfStates(seed: UInt64) throws {
    let session = try LawSession(seed: seed, events: 300)
    var rng = SplitMix64(seed: seed)
    for _ in 0..<25 {
      let a = session.states[rng.below(session.states.count)]
      let b = session.states[rng.below(session.states.count)]
      let forward = Differ.diff(a, b)
      let backward = Differ.diff(b, a)
      // A state against itself: nothing changed, every item unchanged.
      let same = Differ.diff(a, a)
      #expect(same.isEmpty && same.changeCount == 0)
      #expect(same.unchanged == a.numberOfAllItems)
      #expect(same.rows.count == a.numberOfAllItems)
      // Empty exactly when the states are equal, and counted changes agree.
      #expect(forward.isEmpty == (a == b))
      #expect(forward.isEmpty == (forward.changeCount == 0))
      // Backwards, inserted and deleted swap, so do expanded and collapsed, and the
      // sections inserted and deleted.
      #expect(Set(Self.ids(forward.inserted)) == Set(Self.ids(backward.deleted)))
      #expect(Set(Self.ids(forward.deleted)) == Set(Self.ids(backward.inserted)))
      #expect(Set(forward.expanded) == Set(backward.collapsed))
      #expect(Set(forward.collapsed) == Set(backward.expanded))
      #expect(Set(forward.sectionsInserted) == Set(backward.sectionsDeleted))
      #expect(forward.selectionChanged == backward.selectionChanged)
      #expect(forward.selectionModeChanged == backward.selectionModeChanged)
      // Every item of the new state is inserted, changed or unchanged, once, in order.
      let changedKept = forward.rows.count { row in
        !row.changes.isEmpty
          && !row.changes.contains { if case .inserted = $0 { true } else { false } }
      }
      #expect(forward.unchanged + forward.inserted.count + changedKept == b.numberOfAllItems)
      let order = b.sectionIdentifiers.flatMap { b.allItems(inSection: $0) ?? [] }
      #expect(forward.rows.map(\.id) == order)
      // Where every item sits in the new state is where the diff says it went.
      for (id, to) in forward.inserted + forward.moved.map({ ($0.id, $0.to) }) {
        let p = try #require(b.placement(of: id))
        #expect(ItemPlace(section: p.section, parent: p.parent, after: p.after) == to)
      }
      // Folding runs of unchanged rows changes only the rows.
      let folded = forward.foldingUnchanged(longerThan: 2)
      #expect(folded.changeCount == forward.changeCount && folded.unchanged == forward.unchanged)
      #expect(
        folded.rows.filter { !$0.changes.isEmpty } == forward.rows.filter { !$0.changes.isEmpty })
    }
  }

  /// The diff of close points (what the events touched) is the whole diff, folded; the
  /// timeline's agrees with both, either way round, and a point against itself is empty.
  @Test(arguments: [44, 45] as [UInt64])
  func closePointsAgreeWithWholeStates(seed: UInt64) throws {
    let session = try LawSession(seed: seed, events: 300)
    var rng = SplitMix64(seed: seed)
    for _ in 0..<12 {
      let from = rng.below(session.events.count)
      let to = min(session.events.count, from + [1, 1, 2, 7, 40][rng.below(5)])
      let whole = Differ.diff(session.states[from], session.states[to])
        .foldingUnchanged(longerThan: 2)
      let applied = Differ.diff(
        session.states[from], applying: Array(session.events[from..<to]), context: 2)
      #expect(applied == whole, "seed \(seed), \(from)...\(to)")
      #expect(try Differ.diff(session.timeline, from: from, to: to) == whole)
      let reversed = Differ.diff(session.states[to], session.states[from])
        .foldingUnchanged(longerThan: 2)
      #expect(try Differ.diff(session.timeline, from: to, to: from) == reversed)
      #expect(try Differ.diff(session.timeline, from: to, to: to).isEmpty)
    }
  }
}
