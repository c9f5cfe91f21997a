import ListTapeSamples
import Testing

@testable import ListTapeModel

/// The section order's B-tree against a plain array: inserts, removals and moves anywhere,
/// positions and lookups by position, walks, and batches that commit or roll back.
@Suite struct SectionOrderTests {
  /// Every broken invariant of the tree: sizes, parent and leaf links, the leaf chain, and
  /// the contents in order.
  static func violations(_ order: SectionOrder, _ model: [Handle]) -> [String] {
    var problems: [String] = []
    func fail(_ s: String) { if problems.count < 10 { problems.append(s) } }
    if Array(order) != model { fail("walk \(Array(order)) != model \(model)") }
    if order.count != model.count { fail("count \(order.count) != \(model.count)") }
    if order.last != model.last { fail("last \(String(describing: order.last))") }
    for (k, s) in model.enumerated() {
      if order.position(of: s) != k { fail("position of \(s) is not \(k)") }
      if order[k] != s { fail("order[\(k)] is not \(s)") }
    }
    let members = Set(model)
    for s in 0..<Handle(order.leafOf.count) where !members.contains(s) && order.contains(s) {
      fail("\(s) is listed but not in the model")
    }
    guard order.root >= 0 else {
      if order.head != -1 { fail("empty order has a head leaf") }
      return problems
    }
    if order.blocks[Int(order.root)].parent != -1 { fail("root has a parent") }
    // Sizes and links, top down; leaves in order must form the chain from `head`.
    var leaves: [Handle] = []
    var stack: [(Handle, Int)] = [(order.root, 0)]
    var leafDepth: Int?
    while let (b, depth) = stack.popLast() {
      let block = order.blocks[Int(b)]
      if block.count < 1 || Int(block.count) >= SectionOrder.fanout {
        fail("block \(b) holds \(block.count)")
      }
      let entries = (0..<Int(block.count)).map { order.slots[Int(b) * SectionOrder.fanout + $0] }
      if block.leaf {
        if leafDepth == nil { leafDepth = depth }
        if leafDepth != depth { fail("leaves at depths \(leafDepth ?? -1) and \(depth)") }
        leaves.append(b)
        if block.size != block.count { fail("leaf \(b) size \(block.size), count \(block.count)") }
        for s in entries where order.leafOf[Int(s)] != b { fail("\(s) not recorded in leaf \(b)") }
      } else {
        var size: Int32 = 0
        for c in entries {
          if order.blocks[Int(c)].parent != b { fail("block \(c)'s parent is not \(b)") }
          size += order.blocks[Int(c)].size
        }
        if size != block.size { fail("block \(b) size \(block.size), entries hold \(size)") }
        for c in entries.reversed() { stack.append((c, depth + 1)) }
      }
    }
    var chain: [Handle] = []
    var leaf = order.head
    var previous: Handle = -1
    while leaf >= 0 && chain.count <= leaves.count {
      if order.blocks[Int(leaf)].previous != previous { fail("leaf \(leaf)'s back link") }
      chain.append(leaf)
      previous = leaf
      leaf = order.blocks[Int(leaf)].next
    }
    if chain != leaves { fail("leaf chain \(chain) != leaves in order \(leaves)") }
    return problems
  }

  /// One random edit on both the order and the model: insert a new handle anywhere, remove
  /// one, or move one (remove, then insert next to another, as `moveSection` does).
  static func randomEdit(
    _ order: inout SectionOrder, _ model: inout [Handle], _ free: inout [Handle],
    _ rng: inout SplitMix64
  ) {
    switch rng.below(model.isEmpty ? 1 : 3) {
    case 0:
      guard let s = free.popLast() else { return }
      let k = rng.below(model.count + 1)
      order.insert(s, at: k)
      model.insert(s, at: k)
    case 1:
      let s = model.remove(at: rng.below(model.count))
      order.remove(s)
      free.insert(s, at: rng.below(free.count + 1))
    default:
      guard model.count > 1 else { return }
      let s = model[rng.below(model.count)]
      var a = s
      while a == s { a = model[rng.below(model.count)] }
      let after = rng.below(2) == 0
      model.removeAll { $0 == s }
      order.remove(s)
      let pos = (model.firstIndex(of: a) ?? model.count) + (after ? 1 : 0)
      model.insert(s, at: pos)
      order.insert(s, at: (order.position(of: a) ?? order.count) + (after ? 1 : 0))
    }
  }

  @Test(arguments: [1, 2, 3] as [UInt64])
  func agreesWithAnArray(seed: UInt64) {
    var rng = SplitMix64(seed: seed)
    var order = SectionOrder()
    var model: [Handle] = []
    var free = (0..<Handle(3_000)).reversed().map { $0 }
    for step in 0..<6_000 {
      // Grow, then shrink to empty, then grow again, so blocks split, empty and come back.
      let phase = step / 2_000
      if phase == 1 && !model.isEmpty {
        let s = model.remove(at: rng.below(model.count))
        order.remove(s)
        free.append(s)
      } else {
        Self.randomEdit(&order, &model, &free, &rng)
        if phase != 1, let s = free.popLast() {
          let k = rng.below(model.count + 1)
          order.insert(s, at: k)
          model.insert(s, at: k)
        }
      }
      if step % 97 == 0 {
        let problems = Self.violations(order, model)
        #expect(problems.isEmpty, "step \(step): \(problems)")
        if !problems.isEmpty { return }
      }
    }
    #expect(Self.violations(order, model).isEmpty)
  }

  @Test(arguments: [4, 5] as [UInt64])
  func batchesCommitOrRollBack(seed: UInt64) {
    var rng = SplitMix64(seed: seed)
    var order = SectionOrder()
    var model: [Handle] = []
    var free = (0..<Handle(2_000)).reversed().map { $0 }
    for _ in 0..<600 {
      let s = free.removeLast()
      let k = rng.below(model.count + 1)
      order.insert(s, at: k)
      model.insert(s, at: k)
    }
    for batch in 0..<60 {
      let (before, freeBefore) = (model, free)
      order.begin()
      for _ in 0..<(1 + rng.below(200)) { Self.randomEdit(&order, &model, &free, &rng) }
      if rng.below(2) == 0 {
        order.commit()
      } else {
        order.rollBack()
        (model, free) = (before, freeBefore)
      }
      let problems = Self.violations(order, model)
      #expect(problems.isEmpty, "batch \(batch): \(problems)")
      if !problems.isEmpty { return }
    }
  }

  /// Many sections, then edits at both ends and in the middle; the tree stays shallow.
  @Test func manySectionsStayShallow() {
    var order = SectionOrder()
    for s in 0..<Handle(200_000) { order.append(s) }
    #expect(order.count == 200_000)
    #expect(order.position(of: 199_999) == 199_999)
    #expect(order[100_000] == 100_000)
    var next = Handle(200_000)
    var expected = 200_000
    for i in 0..<20_000 {
      switch i % 3 {
      case 0:
        order.insert(next, at: 0)
        next += 1
        expected += 1
      case 1:
        let s = order.last ?? 0
        order.remove(s)
        order.insert(s, at: order.count / 2)
      default:
        order.remove(order[0])
        expected -= 1
      }
    }
    #expect(order.count == expected)
    #expect(order.position(of: order[order.count / 2]) == order.count / 2)
    // Appends fill leaves halfway and inserts at most fill the rest: 200,000 handles take
    // at most four levels of 16 to 31 entries.
    var depth = 1
    var b = order.root
    while !order.blocks[Int(b)].leaf {
      b = order.slots[Int(b) * SectionOrder.fanout]
      depth += 1
    }
    #expect(depth <= 5)
  }

  /// Through the state: random section edits in batches, some of which fault at the end and
  /// roll back, against an array of section ids.
  @Test(arguments: [11, 12] as [UInt64])
  func stateSectionEditsAgreeWithAnArray(seed: UInt64) throws {
    var rng = SplitMix64(seed: seed)
    var state = ListState()
    var model: [String] = []
    var fresh = 0
    for round in 0..<150 {
      var events: [Event] = []
      var next = model
      for _ in 0..<(1 + rng.below(8)) {
        switch next.isEmpty ? 0 : rng.below(4) {
        case 0:
          let id = "s\(fresh)"
          fresh += 1
          if next.isEmpty || rng.below(2) == 0 {
            events.append(Event(.appendSections([id])))
            next.append(id)
          } else {
            let k = rng.below(next.count)
            events.append(Event(.insertSections([id], .before(next[k]))))
            next.insert(id, at: k)
          }
        case 1:
          let id = next.remove(at: rng.below(next.count))
          events.append(Event(.deleteSections([id])))
        case 2:
          guard next.count > 1 else { continue }
          let id = next[rng.below(next.count)]
          var anchor = id
          while anchor == id { anchor = next[rng.below(next.count)] }
          next.removeAll { $0 == id }
          let k = next.firstIndex(of: anchor) ?? 0
          events.append(Event(.moveSection(id, .after(anchor))))
          next.insert(id, at: k + 1)
        default:
          let id = next[rng.below(next.count)]
          events.append(Event(.appendItems([OutlineNode("i\(fresh)")], section: id, parent: nil)))
          fresh += 1
        }
      }
      let faults = rng.below(3) == 0
      if faults { events.append(Event(.moveSection("missing", .after("missing")))) }
      do {
        try state.apply(Event(.batch(events)))
        #expect(!faults)
        model = next
      } catch {
        #expect(faults)
      }
      #expect(state.sectionIdentifiers == model, "round \(round)")
      for (k, id) in model.enumerated() where k % 7 == 0 {
        #expect(state.indexOfSection(id) == k)
      }
      let problems = invariantViolations(state)
      #expect(problems.isEmpty, "round \(round): \(problems)")
      if !problems.isEmpty { return }
    }
  }
}
