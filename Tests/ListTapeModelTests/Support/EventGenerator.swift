import ListTapeSamples

@testable import ListTapeModel

/// Random event sequences against the current state (read from the reference): mostly
/// valid events, deliberate faults, nested batches with marks, and reused ids.
struct EventGenerator {
  var rng: SplitMix64
  var nextItem = 0
  var nextSection = 0
  var everItems: [String] = []
  var clock: Int64 = 1_700_000_000_000
  /// Whether some events grow chains of nested items towards the nesting limit (level 255)
  /// and move deep subtrees around it.
  var deep = false

  init(seed: UInt64, deep: Bool = false) {
    rng = SplitMix64(seed: seed)
    self.deep = deep
  }

  // MARK: Identifiers

  /// A fresh id, or now and then one that existed before and was deleted.
  mutating func newItem(_ r: Reference, _ used: inout Set<String>) -> String {
    if rng.chance(25), let old = rng.pick(everItems), !r.contains(old), !used.contains(old) {
      used.insert(old)
      return old
    }
    nextItem += 1
    let id = "i\(nextItem)"
    everItems.append(id)
    used.insert(id)
    return id
  }

  mutating func newSection() -> String {
    nextSection += 1
    return "s\(nextSection)"
  }

  func allItems(_ r: Reference) -> [String] { r.sections.flatMap { $0.items.map(\.id) } }

  func visibleItems(_ r: Reference) -> [String] { r.sections.indices.flatMap { r.visible($0) } }

  func hiddenItems(_ r: Reference) -> [String] {
    let shown = Set(visibleItems(r))
    return allItems(r).filter { !shown.contains($0) }
  }

  /// Items that have children.
  func parents(_ r: Reference) -> [String] {
    r.sections.indices.flatMap { s in
      r.sections[s].items.indices.filter { r.end(s, $0) > $0 + 1 }.map {
        r.sections[s].items[$0].id
      }
    }
  }

  mutating func randomItem(_ r: Reference) -> String? { rng.pick(allItems(r)) }

  mutating func randomSection(_ r: Reference) -> String? { rng.pick(r.sections.map(\.id)) }

  /// Random nodes; ids come from `reusable` (consumed) or are new.
  mutating func nodes(
    _ r: Reference, count: Int, depth: Int, used: inout Set<String>,
    reusable: inout [String]
  ) -> [OutlineNode] {
    var out: [OutlineNode] = []
    for _ in 0..<count {
      let id: String
      if !reusable.isEmpty && rng.chance(60) {
        id = reusable.remove(at: rng.int(reusable.count))
        used.insert(id)
      } else {
        id = newItem(r, &used)
      }
      var n = OutlineNode(id)
      if rng.chance(30) { n.title = "T\(rng.int(50))" }
      if rng.chance(15) { n.fields = ["k\(rng.int(3))": "v\(rng.int(9))"] }
      n.expanded = rng.chance(45)
      if depth > 0 && rng.chance(35) {
        n.children = nodes(
          r, count: 1 + rng.int(3), depth: depth - 1, used: &used, reusable: &reusable)
      }
      out.append(n)
    }
    return out
  }

  mutating func freshNodes(_ r: Reference) -> [OutlineNode] {
    var used = Set<String>()
    var none: [String] = []
    return nodes(r, count: rng.int(4), depth: 2, used: &used, reusable: &none)
  }

  mutating func anchor(_ id: String) -> Anchor { rng.chance(50) ? .after(id) : .before(id) }

  // MARK: Events

  mutating func event(_ r: Reference) -> Event {
    var e: Event
    let roll = rng.int(100)
    if deep && roll >= 80, let d = deepEvent(r) {
      e = d
    } else if roll < 8 {
      e = faulty(r)
    } else if roll < 14 {
      e = batch(r, depth: 0)
    } else {
      e = valid(r)
    }
    if rng.chance(30) {
      clock += Int64(rng.int(5000)) - 500
      e.time = clock
    }
    return e
  }

  mutating func batch(_ r: Reference, depth: Int) -> Event {
    var scratch = r
    var events: [Event] = []
    for _ in 0..<(1 + rng.int(4)) {
      let e: Event
      let roll = rng.int(100)
      if roll < 10 {
        e = Event(.mark("m\(rng.int(5))"))
      } else if roll < 17 && depth < 2 {
        e = batch(scratch, depth: depth + 1)
      } else if roll < 22 {
        e = faulty(scratch)
      } else {
        e = valid(scratch)
      }
      try? scratch.apply(e)
      events.append(e)
    }
    return Event(.batch(events))
  }

  mutating func valid(_ r: Reference) -> Event {
    let items = allItems(r)
    let sectionIDs = r.sections.map(\.id)
    if sectionIDs.isEmpty || (sectionIDs.count < 2 && rng.chance(20)) {
      return Event(.appendSections([newSection()]))
    }
    let crowded = items.count > 120
    if crowded && rng.chance(40), let x = randomItem(r) {
      return Event(.deleteItems([x]))
    }
    if items.isEmpty || rng.chance(12) {
      var used = Set<String>()
      var none: [String] = []
      let ns = nodes(r, count: 1 + rng.int(4), depth: 3, used: &used, reusable: &none)
      return Event(.appendItems(ns, section: rng.pick(sectionIDs), parent: nil))
    }
    switch rng.int(30) {
    case 0:
      if sectionIDs.count > 4 {
        return Event(.deleteSections([sectionIDs[rng.int(sectionIDs.count)]]))
      }
      return Event(.appendSections((0..<(1 + rng.int(2))).map { _ in newSection() }))
    case 1:
      let a = sectionIDs[rng.int(sectionIDs.count)]
      return Event(.insertSections([newSection()], anchor(a)))
    case 2:
      if rng.chance(30) {
        return Event(.deleteSections([sectionIDs[rng.int(sectionIDs.count)], "gone"]))
      }
      guard sectionIDs.count >= 2 else { return Event(.reloadSections(sectionIDs)) }
      let x = sectionIDs[rng.int(sectionIDs.count)]
      let others = sectionIDs.filter { $0 != x }
      return Event(.moveSection(x, anchor(others[rng.int(others.count)])))
    case 3:
      return Event(.reloadSections([sectionIDs[rng.int(sectionIDs.count)]]))
    case 4, 5:
      let p = items[rng.int(items.count)]
      let section: String? =
        rng.chance(40) ? r.locate(p).map { r.sections[$0.s].id } : nil
      return Event(.appendItems(freshNodes(r), section: section, parent: p))
    case 6:
      return Event(.appendItems(freshNodes(r), section: nil, parent: nil))
    case 7, 8:
      return Event(.insertItems(freshNodes(r), anchor(items[rng.int(items.count)])))
    case 9, 10:
      var ids = [items[rng.int(items.count)]]
      if rng.chance(30) { ids.append(items[rng.int(items.count)]) }
      if rng.chance(20) { ids.append("absent\(rng.int(9))") }
      return Event(.deleteItems(ids))
    case 11:
      return rng.chance(15)
        ? Event(.deleteAllItems) : Event(.reloadItems([items[rng.int(items.count)]]))
    case 12, 13:
      for _ in 0..<6 {
        let x = items[rng.int(items.count)]
        let a = items[rng.int(items.count)]
        guard let (s, i) = r.locate(x) else { break }
        let block = r.sections[s].items[i..<r.end(s, i)].map(\.id)
        if !block.contains(a) { return Event(.moveItem(x, anchor(a))) }
      }
      return Event(.reconfigureItems([items[rng.int(items.count)]]))
    case 14:
      guard let (s, p) = r.locate(items[rng.int(items.count)]) else { break }
      var reusable = r.sections[s].items[(p + 1)..<r.end(s, p)].map(\.id)
      var used = Set<String>()
      let ns = nodes(r, count: rng.int(4), depth: 2, used: &used, reusable: &reusable)
      return Event(.replaceChildren(parent: r.sections[s].items[p].id, items: ns))
    case 15:
      let s = rng.int(sectionIDs.count)
      var reusable = r.sections[s].items.map(\.id)
      var used = Set<String>()
      let ns = nodes(r, count: rng.int(5), depth: 3, used: &used, reusable: &reusable)
      return Event(.applySectionSnapshot(section: sectionIDs[s], items: ns))
    case 16:
      let x = items[rng.int(items.count)]
      let title: String? = rng.chance(60) ? "U\(rng.int(20))" : nil
      let fields: [String: String]? = rng.chance(50) ? ["k\(rng.int(3))": "w\(rng.int(9))"] : nil
      return Event(.update(item: x, title: title, fields: fields))
    case 17, 18, 19:
      let ps = parents(r)
      let x = rng.pick(ps) ?? items[rng.int(items.count)]
      return Event(rng.chance(55) ? .expand([x, x]) : .collapse([x]))
    case 20, 21, 22, 23:
      let vis = visibleItems(r)
      guard let x = rng.pick(vis) else { break }
      if r.multiple {
        var ids = [x]
        if rng.chance(40), let y = rng.pick(vis) { ids.append(y) }
        return Event(.select(ids))
      }
      return Event(.select(rng.chance(10) ? [] : [x, x]))
    case 24, 25:
      if rng.chance(30) { return Event(.deselect(nil)) }
      let sel = Array(r.selectedInOrder)
      var ids = rng.pick(sel).map { [$0] } ?? []
      if rng.chance(30) { ids.append("nobody") }
      return Event(.deselect(ids))
    case 26:
      return Event(.configure(multipleSelection: rng.chance(60)))
    case 27:
      return Event(.mark(rng.chance(10) ? "" : "m\(rng.int(5))"))
    default:
      break
    }
    return Event(.expand([items[rng.int(items.count)]]))
  }

  /// A chain of `length` fresh nested items (each the only child of the one before).
  mutating func chain(_ r: Reference, length: Int) -> OutlineNode {
    var used = Set<String>()
    var ids: [String] = []
    for _ in 0..<length { ids.append(newItem(r, &used)) }
    var node = OutlineNode(ids[ids.count - 1], expanded: rng.chance(50))
    for id in ids.dropLast().reversed() {
      node = OutlineNode(id, expanded: rng.chance(70), children: [node])
    }
    return node
  }

  /// An event near the nesting limit: a chain appended under, inserted next to or replacing
  /// the children of one of the deepest items, or a move of a subtree next to a deep item.
  mutating func deepEvent(_ r: Reference) -> Event? {
    var deepest: [(id: String, level: Int)] = []
    for s in r.sections {
      for item in s.items { deepest.append((item.id, item.level)) }
    }
    guard !deepest.isEmpty else { return nil }
    deepest.sort { $0.level > $1.level }
    let (target, level) = deepest[rng.int(min(3, deepest.count))]
    // Grow towards the limit, then aim at it: one short of it, at it, or one past it.
    let length = min(90, max(1, 254 - level + rng.int(3)))
    switch rng.int(5) {
    case 0, 1: return Event(.appendItems([chain(r, length: length)], section: nil, parent: target))
    case 2: return Event(.insertItems([chain(r, length: length)], anchor(target)))
    case 3: return Event(.replaceChildren(parent: target, items: [chain(r, length: length)]))
    default:
      for _ in 0..<6 {
        guard let x = randomItem(r), let (s, i) = r.locate(x) else { break }
        let block = r.sections[s].items[i..<r.end(s, i)].map(\.id)
        if !block.contains(target) { return Event(.moveItem(x, anchor(target))) }
      }
      return nil
    }
  }

  /// An event built to fault (the reference says which way).
  mutating func faulty(_ r: Reference) -> Event {
    let items = allItems(r)
    let sectionIDs = r.sections.map(\.id)
    let x = rng.pick(items) ?? "nothing"
    let sec = rng.pick(sectionIDs) ?? "nowhere"
    switch rng.int(20) {
    case 0: return Event(.appendItems([OutlineNode(x)], section: sec, parent: nil))
    case 1:
      var used = Set<String>()
      let n = newItem(r, &used)
      return Event(
        .appendItems([OutlineNode(n, children: [OutlineNode(n)])], section: sec, parent: nil))
    case 2: return Event(.appendSections(rng.chance(50) ? [sec] : ["dup", "dup"]))
    case 3: return Event(.insertSections([newSection()], .after("missingSection")))
    case 4:
      return Event(.moveSection(sec, rng.chance(50) ? .before(sec) : .after("missingSection")))
    case 5: return Event(.reloadSections([sec, "missingSection"]))
    case 6: return Event(.appendItems(freshNodes(r), section: "missingSection", parent: nil))
    case 7: return Event(.appendItems(freshNodes(r), section: nil, parent: "missingParent"))
    case 8:
      let other = sectionIDs.first { r.locate(x)?.s != r.sectionIndex($0) } ?? "missingSection"
      return Event(.appendItems(freshNodes(r), section: other, parent: x))
    case 9: return Event(.insertItems(freshNodes(r), anchor("missingAnchor")))
    case 10: return Event(.moveItem(x, anchor(rng.chance(50) ? x : "missingAnchor")))
    case 11:
      if let p = rng.pick(parents(r)), let (s, i) = r.locate(p) {
        let inside = r.sections[s].items[(i + 1)..<r.end(s, i)].map(\.id)
        return Event(.moveItem(p, anchor(inside[rng.int(inside.count)])))
      }
      return Event(.moveItem("missingItem", .before(x)))
    case 12: return Event(.replaceChildren(parent: "missingParent", items: []))
    case 13:
      // Re-inserting an ancestor (or the parent itself) under a parent is a duplicate.
      return Event(.replaceChildren(parent: x, items: [OutlineNode(x)]))
    case 14: return Event(.applySectionSnapshot(section: "missingSection", items: freshNodes(r)))
    case 15: return Event(.update(item: "missingItem", title: "t", fields: nil))
    case 16:
      return Event(rng.chance(50) ? .expand([x, "missingItem"]) : .reloadItems(["missingItem"]))
    case 17:
      if let h = rng.pick(hiddenItems(r)) { return Event(.select([h])) }
      return Event(.select(["missingItem"]))
    case 18:
      let vis = visibleItems(r)
      if vis.count >= 2 && !r.multiple { return Event(.select([vis[0], vis[1]])) }
      return Event(.collapse(["missingItem"]))
    default:
      if sectionIDs.isEmpty { return Event(.appendItems(["orphan"], section: nil, parent: nil)) }
      return Event(.insertItems(["x"], .before(x)))
    }
  }
}
