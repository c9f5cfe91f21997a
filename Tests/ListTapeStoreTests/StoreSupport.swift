import Foundation
import ListTapeModel
import ListTapeSamples

@testable import ListTapeStore

/// Random list states over a shared pool of ids, so two of them overlap: the same item can
/// sit under another parent, in another section, with other flags, content or selection.
struct RandomLists {
  var rng: SplitMix64
  let itemPool: Int
  let sectionPool = ["s0", "s1", "s2", "s3", "s4"]

  init(seed: UInt64, itemPool: Int = 40) {
    rng = SplitMix64(seed: seed)
    self.itemPool = itemPool
  }

  mutating func title() -> String? {
    rng.chance(40) ? nil : "t\(rng.below(4))"
  }

  mutating func fields() -> [String: String]? {
    if rng.chance(50) { return nil }
    var f: [String: String] = [:]
    for k in ["a", "b", "c"] where rng.chance(50) { f[k] = "v\(rng.below(3))" }
    return f
  }

  mutating func shuffled<T>(_ xs: [T]) -> [T] {
    var xs = xs
    guard xs.count > 1 else { return xs }
    for i in stride(from: xs.count - 1, to: 0, by: -1) { xs.swapAt(i, rng.below(i + 1)) }
    return xs
  }

  /// A fresh random state: random sections, a random forest (often deep), flags, content,
  /// selection mode and a selection of visible items.
  mutating func state() -> ListState {
    var s = ListState()
    let sections = Array(shuffled(sectionPool).prefix(rng.below(sectionPool.count + 1)))
    guard !sections.isEmpty else { return s }
    try? s.appendSections(sections)
    let ids = Array(shuffled((0..<itemPool).map { "i\($0)" }).prefix(rng.below(itemPool + 1)))
    var placed: [String] = []
    for id in ids {
      let node = OutlineNode(id, title: title(), fields: fields(), expanded: rng.chance(60))
      if !placed.isEmpty && rng.chance(65) {
        // Bias towards recent items for deep subtrees.
        let pick =
          rng.chance(50)
          ? placed.count - 1 - rng.below(min(3, placed.count)) : rng.below(placed.count)
        try? s.appendItems([node], toParent: placed[pick])
      } else {
        try? s.appendItems([node], toSection: sections[rng.below(sections.count)])
      }
      placed.append(id)
    }
    s.setAllowsMultipleSelection(rng.chance(50))
    select(&s)
    return s
  }

  mutating func select(_ s: inout ListState) {
    s.deselect(nil)
    let visible = s.itemIdentifiers
    guard !visible.isEmpty else { return }
    if s.allowsMultipleSelection {
      try? s.select(visible.filter { _ in rng.chance(25) })
    } else if rng.chance(60) {
      try? s.select([visible[rng.below(visible.count)]])
    }
  }

  /// `s` after a few random edits: moves across parents and sections, inserts, deletes,
  /// section changes, flags, content (cleared titles and dropped field keys too), selection.
  mutating func edited(_ s: ListState, edits: Int) -> ListState {
    var s = s
    var fresh = 0
    for _ in 0..<edits {
      let all = s.sectionIdentifiers.flatMap { s.allItems(inSection: $0) ?? [] }
      let pick = all.isEmpty ? nil : all[rng.below(all.count)]
      let other = all.isEmpty ? nil : all[rng.below(all.count)]
      switch rng.below(12) {
      case 0, 1:
        if let pick, let other {
          try? s.apply(Event(.moveItem(pick, rng.chance(50) ? .before(other) : .after(other))))
        }
      case 2:
        fresh += 1
        let node = OutlineNode(
          "n\(fresh)", title: title(), fields: fields(), expanded: rng.chance(50),
          children: rng.chance(40) ? [OutlineNode("n\(fresh).c", title: title())] : [])
        if let pick, rng.chance(50) {
          try? s.appendItems([node], toParent: pick)
        } else if let pick {
          try? s.insertItems([node], afterItem: pick)
        } else if let sec = s.sectionIdentifiers.first {
          try? s.appendItems([node], toSection: sec)
        }
      case 3:
        if let pick { s.deleteItems([pick]) }
      case 4:
        if let pick { try? s.apply(Event(rng.chance(50) ? .expand([pick]) : .collapse([pick]))) }
      case 5:
        // Rebuild one item with other content: clears titles and drops field keys.
        if let pick { s = recontent(s, pick) }
      case 6:
        if let pick { try? s.updateItem(pick, title: title(), fields: fields()) }
      case 7:
        let secs = s.sectionIdentifiers
        if secs.count > 1 {
          try? s.moveSection(secs[rng.below(secs.count)], afterSection: secs[rng.below(secs.count)])
        }
      case 8:
        let missing = sectionPool.filter { !s.containsSection($0) }
        if let m = missing.first {
          if let anchor = s.sectionIdentifiers.first, rng.chance(50) {
            try? s.insertSections([m], beforeSection: anchor)
          } else {
            try? s.appendSections([m])
          }
        } else if let sec = s.sectionIdentifiers.last {
          s.deleteSections([sec])
        }
      case 9:
        select(&s)
      case 10:
        s.setAllowsMultipleSelection(!s.allowsMultipleSelection)
      default:
        if let pick, let sec = s.sectionIdentifiers.last,
          s.sectionIdentifier(containingItem: pick) != sec
        {
          // Move a subtree into another section, possibly an empty one (by rebuild).
          var copy = s
          if let whole = try? copy.sectionSnapshot(
            for: s.sectionIdentifier(containingItem: pick) ?? "")?.snapshot(
              of: pick, includingParent: true)
          {
            copy.deleteItems([pick])
            if (try? copy.appendItems(whole.nodes, toSection: sec)) != nil { s = copy }
          }
        }
      }
    }
    return s
  }

  /// `s` with one item's title and fields replaced outright (not merged).
  mutating func recontent(_ s: ListState, _ id: String) -> ListState {
    guard let sec = s.sectionIdentifier(containingItem: id), let snap = s.sectionSnapshot(for: sec)
    else { return s }
    let newTitle = title()
    let newFields = fields()
    func walk(_ nodes: [OutlineNode]) -> [OutlineNode] {
      nodes.map { n in
        var n = n
        if n.id == id {
          n.title = newTitle
          n.fields = newFields
        }
        n.children = walk(n.children)
        return n
      }
    }
    var out = s
    let selected = s.selectedItems
    do {
      try out.applyItems(walk(snap.nodes), to: sec)
      // applySectionSnapshot keeps the selection of re-attached visible ids.
      if out.selectedItems != selected { return s }
      return out
    } catch {
      return s
    }
  }
}

/// Folds operations one by one, failing with the index and op of the first fault.
func fold(_ ops: [ListOperation], onto state: ListState) throws -> ListState {
  var s = state
  for (i, op) in ops.enumerated() {
    do {
      try s.apply(Event(op))
    } catch {
      throw FoldFailure(index: i, op: op, fault: error)
    }
  }
  return s
}

struct FoldFailure: Error, CustomStringConvertible {
  var index: Int
  var op: ListOperation
  var fault: ListFault
  var description: String { "op \(index) \(op.name) faulted: \(fault) (\(op))" }
}

/// A fresh temporary directory for a store's log, and the log path inside it.
func temporaryStorePath() -> (dir: String, path: String) {
  let dir = FileManager.default.temporaryDirectory.appendingPathComponent(
    "listtape-store-\(UUID().uuidString)")
  try? FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
  return (dir.path, dir.appendingPathComponent("log.ltape").path)
}
