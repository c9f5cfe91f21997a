import ListTapeModel

/// How a generated session spells its item identifiers. The events are the same for every
/// shape (the generator's choices never look at the spelling); only the ids differ.
package enum IdShape: String, CaseIterable, Sendable {
  /// `i123`: short ids, what the first benches used (inline small strings in the model).
  case short
  /// `lib/g12/sub3/i-12345`: path-like keys of 20-40 bytes, as apps derive from folders.
  case path
  /// `0F3A9C2E-…`: 36-character UUID strings, as `UUID().uuidString` makes them.
  case uuid

  /// The id of the `n`th fresh item whose short spelling starts with `prefix`.
  package func name(_ prefix: String, _ n: Int) -> String {
    switch self {
    case .short:
      return "\(prefix)\(n)"
    case .path:
      return "lib/g\(n / 100 % 1000)/sub\(n / 10 % 10)/\(prefix)-\(n)"
    case .uuid:
      var rng = SplitMix64(seed: UInt64(n) &* 0x9E37_79B9 ^ UInt64(prefix.utf8.first ?? 0))
      let a = rng.next()
      let b = rng.next()
      func hex(_ v: UInt64, _ digits: Int) -> String {
        let s = String(v, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, digits - s.count)) + s.suffix(digits)
      }
      return "\(hex(a >> 32, 8))-\(hex(a >> 16 & 0xFFFF, 4))-4\(hex(a & 0xFFF, 3))-"
        + "\(hex(8 | (b >> 60 & 3), 1))\(hex(b >> 48 & 0xFFF, 3))-\(hex(b & 0xFFFF_FFFF_FFFF, 12))"
    }
  }
}

/// A deterministic, realistic large session: the four seed apps scaled up (symbols grouped
/// under expandable categories, collapsible language sections, an expandable form, a
/// contacts list with favorites), then random valid edits, a few faults, marks and batches,
/// with wall-clock times. Equal seeds give equal sessions on every platform.
package enum SampleSession {
  /// Calls `emit` with `events` events; the list grows to about `maxItems` items.
  package static func generate(
    events: Int, seed: UInt64, maxItems: Int = 100_000, _ emit: (Event) throws -> Void
  ) rethrows {
    try generate(events: events, seed: seed, maxItems: maxItems, opening: .seedApps, emit)
  }

  /// How a session opens.
  package enum Opening: Sendable {
    /// The four seed apps' screens, a few dozen items.
    case seedApps
    /// A big outline of groups built by `appendItems` (the users' sessions of issue 14):
    /// half of `items` in one event (groups of 100 in section "library"), the other half
    /// one group of 100 per event (section "archive"), then the seed apps' sections.
    case outline(items: Int, shape: IdShape)
  }

  /// Calls `emit` with `events` events opening as `opening` says; the list grows to about
  /// `maxItems` items. With `sites`, every event (a batch's inner ones too) carries a site
  /// drawn from that many; the events are otherwise the same as without.
  package static func generate(
    events: Int, seed: UInt64, maxItems: Int, opening: Opening, sites: Sites? = nil,
    _ emit: (Event) throws -> Void
  ) rethrows {
    var g = Generator(seed: seed, maxItems: maxItems)
    var siteMaker = sites.map { SiteMaker($0, seed: seed) }
    var produced = 0
    let ops: [ListOperation]
    switch opening {
    case .seedApps:
      ops = g.opening()
    case .outline(let items, let shape):
      g.shape = shape
      ops = g.outlineOpening(items: items) + g.opening()
    }
    func send(_ e: Event, path: Int) throws {
      guard var maker = siteMaker else { return try emit(e) }
      let site = maker.next(path: path)
      siteMaker = maker
      try emit(e.withSite(site))
    }
    for e in ops where produced < events {
      try send(g.stamp(e), path: Generator.openingPath)
      produced += 1
    }
    while produced < events {
      let op = g.next()
      try send(g.stamp(op), path: g.path)
      produced += 1
    }
  }

  /// How a generated session's events get their sites.
  package struct Sites: Sendable {
    /// Distinct sites.
    package var count: Int
    /// How each event's site is drawn.
    package var model: Model

    package init(count: Int, model: Model = .screens) {
      self.count = max(count, 1)
      self.model = model
    }

    /// How sites are drawn.
    package enum Model: String, Sendable, CaseIterable {
      /// As an app makes them: the sites are the generator's code paths (one per kind of
      /// edit) on each of `count / paths` screens; the person stays on a screen for about
      /// 150 events, then moves to another.
      case screens
      /// Each event's site uniformly from all `count`, independent of everything else:
      /// the worst case, about log2(count) bits per event whatever the encoding.
      case uniform
    }
  }
}

extension Event {
  /// This event with `site` on it and on every event inside it.
  fileprivate func withSite(_ site: String) -> Event {
    var e = self
    e.site = site
    if case .batch(let inner) = operation { e.operation = .batch(inner.map { $0.withSite(site) }) }
    return e
  }
}

/// Draws sites for a generated session from its own random stream, so that the events are
/// those of the same seed without sites.
private struct SiteMaker {
  let sites: SampleSession.Sites
  var rng: SplitMix64
  var screen = 0

  init(_ sites: SampleSession.Sites, seed: UInt64) {
    self.sites = sites
    rng = SplitMix64(seed: seed ^ 0x5173_5173_5173_5173)
  }

  mutating func next(path: Int) -> String {
    let n: Int
    switch sites.model {
    case .uniform:
      n = rng.below(sites.count)
    case .screens:
      let screens = max(1, (sites.count + Generator.paths - 1) / Generator.paths)
      if rng.below(150) == 0 { screen = rng.below(screens) }
      n = (screen * Generator.paths + path) % sites.count
    }
    return "Screen\(n / Generator.paths)ViewController.swift:\(100 + 7 * (n % Generator.paths)) "
      + "handle\(n % Generator.paths)(_:)"
  }
}

/// Folds what it emits into a shadow state so every edit it makes is valid (except the
/// deliberate faults), and keeps the live ids in an array for O(1) random picks.
private struct Generator {
  var rng: SplitMix64
  let maxItems: Int
  var state = ListState()
  var time: Int64 = 1_764_400_000_000
  var live: [String] = []
  /// The working set: ids picked lately.
  var recent: [String] = []
  var recentNext = 0
  let recentSize = 24
  var nextID = 0
  var marks = 0
  var shape = IdShape.short
  static let seedSections = ["symbols", "languages", "form", "favorites", "contacts"]
  /// Sections edits may land in: the seed apps', and the outline's when there is one.
  var sections = seedSections

  init(seed: UInt64, maxItems: Int) {
    rng = SplitMix64(seed: seed)
    self.maxItems = max(maxItems, 50)
  }

  mutating func stamp(_ op: ListOperation) -> Event {
    // Human pacing: quick bursts (drags, repeated taps), ordinary gaps, rare long pauses.
    switch rng.below(100) {
    case 0..<30: time += Int64(16 + rng.below(60))
    case 30..<95: time += Int64(150 + rng.below(1_200))
    default: time += Int64(2_000 + rng.below(60_000))
    }
    let e = Event(op, time: time)
    if (try? state.apply(e)) != nil { track(op) }
    return e
  }

  mutating func fresh(_ prefix: String) -> String {
    nextID += 1
    return shape.name(prefix, nextID)
  }

  /// A big outline of groups of 100 (a group and 99 children): half of `items` in one
  /// `appendItems`, the rest one group per event; a third of the groups start expanded.
  mutating func outlineOpening(items: Int) -> [ListOperation] {
    func group() -> OutlineNode {
      let id = fresh("g")
      let expanded = rng.chance(33)
      return OutlineNode(
        id, title: "Group \(nextID)", expanded: expanded,
        children: (0..<99).map { _ in OutlineNode(fresh("i")) })
    }
    let groups = max(2, items / 100)
    var ops: [ListOperation] = [.appendSections(["library", "archive"])]
    ops.append(.appendItems((0..<groups / 2).map { _ in group() }, section: "library", parent: nil))
    for _ in groups / 2..<groups {
      ops.append(.appendItems([group()], section: "archive", parent: nil))
    }
    sections += ["library", "archive"]
    return ops
  }

  /// The seed apps' opening screens, each a few events.
  mutating func opening() -> [ListOperation] {
    var ops: [ListOperation] = [
      .configure(multipleSelection: true), .appendSections(Self.seedSections),
    ]
    // The opening's items are tracked through `stamp` like every later insertion.
    let categories = ["Communication", "Weather", "Objects", "Devices", "Gaming", "Nature"]
    ops.append(
      .appendItems(
        categories.map { c in
          OutlineNode(
            c, title: c, expanded: true,
            children: (0..<8).map { i in OutlineNode("\(c.lowercased()).\(i)", title: "\(c) \(i)") }
          )
        }, section: "symbols", parent: nil))
    ops.append(
      .appendItems(
        [
          OutlineNode(
            "Programming Languages", expanded: false,
            children: ["Swift", "Objective-C", "Kotlin", "Rust", "Go"].map { OutlineNode($0) })
        ], section: "languages", parent: nil))
    ops.append(
      .appendItems(
        ["Personal", "Preferences", "Work Experience"].map { g in
          OutlineNode(
            g, title: g,
            children: (0..<3).map { OutlineNode("\(g).option\($0)", title: "Option \($0)") })
        }, section: "form", parent: nil))
    ops.append(
      .appendItems((0..<20).map { OutlineNode("contact\($0)") }, section: "contacts", parent: nil))
    ops.append(.mark("opened"))
    return ops
  }

  /// Remembers the ids an applied event inserted (they are fresh, so never repeated).
  mutating func track(_ op: ListOperation) {
    switch op {
    case .batch(let events):
      for e in events { track(e.operation) }
    case .appendItems(let nodes, _, _), .insertItems(let nodes, _),
      .replaceChildren(_, let nodes), .applySectionSnapshot(_, let nodes):
      for n in nodes { n.forEachID { live.append($0) } }
    default:
      break
    }
  }

  /// A random live id; ids deleted since they were inserted are dropped as they are met.
  /// A random live id with a person's locality: mostly one of the items recently worked
  /// on (people act on the rows in front of them), sometimes anywhere in the list.
  mutating func pick() -> String? {
    if !recent.isEmpty && rng.chance(80) {
      let id = recent[rng.below(recent.count)]
      if state.contains(id) { return id }
    }
    guard let id = pickAnywhere() else { return nil }
    if recent.count < recentSize {
      recent.append(id)
    } else {
      recent[recentNext % recentSize] = id
    }
    recentNext += 1
    return id
  }

  mutating func pickAnywhere() -> String? {
    while !live.isEmpty {
      let i = rng.below(live.count)
      if state.contains(live[i]) { return live[i] }
      live.swapAt(i, live.count - 1)
      live.removeLast()
    }
    return nil
  }

  mutating func pickVisible() -> String? {
    for _ in 0..<8 {
      if let id = pick(), state.isVisible(id) { return id }
    }
    return nil
  }

  /// The code paths of `next()` (its ranges of rolls, then its fallback) and the
  /// opening's, for sites.
  static let paths = 17
  static let fallbackPath = 15
  static let openingPath = 16
  static let pathEnds = [150, 260, 380, 430, 600, 660, 740, 790, 870, 900, 915, 935, 945, 952, 960]
  /// The code path of the last `next()`.
  var path = 0

  mutating func next() -> ListOperation {
    let full = state.numberOfAllItems >= maxItems
    let roll = rng.below(1000)
    path = Self.pathEnds.firstIndex { roll < $0 } ?? Self.pathEnds.count
    switch roll {
    case 0..<150:
      if let id = pick() { return .expand([id]) }
    case 150..<260:
      if let id = pick() { return .collapse([id]) }
    case 260..<380:
      if let id = pickVisible() { return .select([id]) }
    case 380..<430:
      if let id = pick() { return .deselect([id]) }
    case 430..<600 where !full:
      let n = 1 + rng.below(3)
      let nodes = (0..<n).map { _ in OutlineNode(fresh("i")) }
      if let parent = pick(), rng.chance(70) {
        return .appendItems(nodes, section: nil, parent: parent)
      }
      return .appendItems(nodes, section: sections[rng.below(sections.count)], parent: nil)
    case 600..<660 where !full:
      if let anchor = pick() {
        let node = OutlineNode(fresh("i"), title: rng.chance(30) ? "New item" : nil)
        return .insertItems([node], rng.chance(50) ? .after(anchor) : .before(anchor))
      }
    case 660..<740:
      if let id = pick(), (state.children(of: id)?.count ?? 0) < 4 || full {
        return .deleteItems([id])
      }
    case 740..<790:
      if let id = pick(), let anchor = pick(), !isAncestor(id, of: anchor) {
        return .moveItem(id, rng.chance(50) ? .after(anchor) : .before(anchor))
      }
    case 790..<870:
      if let id = pick() {
        return .update(
          item: id, title: "Title \(rng.below(1000))",
          fields: rng.chance(30) ? ["badge": "\(rng.below(9))"] : nil)
      }
    case 870..<900:
      if let id = pick() { return rng.chance(50) ? .reloadItems([id]) : .reconfigureItems([id]) }
    case 900..<915:
      if let id = pick(), let kids = state.children(of: id), kids.count < 6, !full {
        let nodes = (0..<(1 + rng.below(3))).map { _ in OutlineNode(fresh("r")) }
        return .replaceChildren(parent: id, items: nodes)
      }
    case 915..<935:
      var inner: [Event] = []
      if let a = pick() { inner.append(Event(.expand([a]))) }
      if !full {
        inner.append(
          Event(.appendItems([OutlineNode(fresh("b"))], section: "contacts", parent: nil)))
      }
      return .batch(inner)
    case 935..<945:
      marks += 1
      return .mark("checkpoint \(marks)")
    case 945..<952:
      // A deliberate fault: what would crash UIKit, recorded as evidence.
      if let id = pick() {
        return .appendItems([OutlineNode(id)], section: "contacts", parent: nil)
      }
    case 952..<960:
      if let id = pick(), !state.isVisible(id) { return .select([id]) }
    default:
      break
    }
    path = Self.fallbackPath
    if let id = pick() { return rng.chance(50) ? .expand([id]) : .collapse([id]) }
    return .appendItems([OutlineNode(fresh("i"))], section: "contacts", parent: nil)
  }

  func isAncestor(_ a: String, of x: String) -> Bool {
    var cur: String? = x
    while let c = cur {
      if c == a { return true }
      cur = state.parent(of: c)
    }
    return false
  }
}
