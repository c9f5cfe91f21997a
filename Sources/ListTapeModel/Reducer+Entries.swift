/// The fold of operations on dictionary entries (`FoldOps`): the same reducer as
/// `apply(_: Event)`, reached without making an `Event`.
///
/// An entry finds its item through `Forest.entryHandles` (one array read, confirmed by the
/// item's `entryTags`), so an id's bytes are hashed only when the state first meets its entry
/// (an item created, or the first reference since the state was loaded). Operations without
/// a path of their own here are turned back into their `Event` and applied as such, so every
/// fault and state is the one `apply(_: Event)` gives.
extension ListState {
  /// Folds operation `i` of `ops` (an event: `ops.isEvent(i)`, or a restart or skipped
  /// event, which only moves `entries` on); returns its fault, nil when it applied. Throws
  /// when the operation names an entry `entries` cannot read (a damaged dictionary).
  package mutating func apply(_ ops: FoldOps, _ i: Int, _ entries: inout FoldEntries)
    throws(CodecError) -> ListFault?
  {
    defer { checkInvariants() }
    try entries.sync(ops, i)
    let kind = ops.kind(i)
    if kind >= FoldOps.Kind.restart { return nil }
    if forest.entryLineage != entries.lineage {
      forest.entryHandles.removeAll(keepingCapacity: true)
      forest.entryLineage = entries.lineage
    }
    let w = Int(ops.starts[i]) &+ FoldOps.header
    switch kind {
    case Int32(EventCodes.expand), Int32(EventCodes.collapse):
      guard ops.words[w] == 1 else { break }
      let e = ops.words[w &+ 1]
      guard let x = try forest.item(entry: e, &entries) else {
        return .missingItem(try entries.text(e))
      }
      forest.expandOrCollapse(x, kind == Int32(EventCodes.expand))
      return nil
    case Int32(EventCodes.select):
      guard ops.words[w] == 1 else { break }
      let e = ops.words[w &+ 1]
      guard let x = try forest.item(entry: e, &entries) else {
        return .missingItem(try entries.text(e))
      }
      do throws(ListFault) { try select(x) } catch { return error }
      return nil
    case Int32(EventCodes.deselect):
      for k in 0..<Int(ops.words[w]) {
        if let x = try forest.item(entry: ops.words[w &+ 1 &+ k], &entries) {
          forest.setSelected(x, false)
        }
      }
      return nil
    case FoldOps.Kind.deselectAll:
      deselect(nil)
      return nil
    case Int32(EventCodes.deleteItems):
      for k in 0..<Int(ops.words[w]) {
        if let x = try forest.item(entry: ops.words[w &+ 1 &+ k], &entries) { forest.delete(x) }
      }
      forest.compactIfNeeded()
      return nil
    case Int32(EventCodes.reloadItems), Int32(EventCodes.reconfigureItems):
      for k in 0..<Int(ops.words[w]) {
        let e = ops.words[w &+ 1 &+ k]
        if try forest.item(entry: e, &entries) == nil { return .missingItem(try entries.text(e)) }
      }
      return nil
    case Int32(EventCodes.moveItem):
      let e = ops.words[w]
      guard let x = try forest.item(entry: e, &entries) else {
        return .missingItem(try entries.text(e))
      }
      let f = ops.words[w &+ 1]
      guard let a = try forest.item(entry: f, &entries) else {
        return .missingAnchor(try entries.text(f))
      }
      do throws(ListFault) {
        try forest.moveItem(x, anchor: a, after: ops.flags(i) & 1 != 0)
      } catch {
        return error
      }
      return nil
    case Int32(EventCodes.update):
      let e = ops.words[w]
      guard let x = try forest.item(entry: e, &entries) else {
        return .missingItem(try entries.text(e))
      }
      forest.update(x, title: ops.string(ops.words[w &+ 1]), fields: ops.fields(ops.words[w &+ 2]))
      return nil
    case Int32(EventCodes.insertItems):
      let f = ops.words[w]
      guard let a = try forest.item(entry: f, &entries) else {
        return .missingAnchor(try entries.text(f))
      }
      let after = ops.flags(i) & 1 != 0
      let built = try forest.build(ops, at: w &+ 1, base: forest.level(of: a), &entries)
      guard case .success(let xs) = built else { return built.fault }
      if xs.count == 1 {
        forest.insert(xs[0], nextTo: a, after: after)
      } else {
        let p = forest.nodes[Int(a)].parent
        let s = p >= 0 ? -1 : forest.nodes[Int(a)].section
        forest.insertList(xs, parent: p, section: s, at: forest.rank(a) &+ (after ? 1 : 0))
      }
      return nil
    case Int32(EventCodes.appendItems):
      let flags = ops.flags(i)
      let sectionEntry = ops.words[w]
      let parentEntry = ops.words[w &+ 1]
      var p: Handle = -1
      var s: Handle = -1
      if flags & 2 != 0 {
        guard let x = try forest.item(entry: parentEntry, &entries) else {
          return .missingParent(try entries.text(parentEntry))
        }
        p = x
        if flags & 1 != 0 {
          let name = try entries.text(sectionEntry)
          guard let t = forest.lookupSection(name) else { return .missingSection(name) }
          guard forest.section(of: p) == t else {
            return .parentNotInSection(parent: try entries.text(parentEntry), section: name)
          }
        }
      } else if flags & 1 != 0 {
        let name = try entries.text(sectionEntry)
        guard let t = forest.lookupSection(name) else { return .missingSection(name) }
        s = t
      } else {
        guard let last = forest.sectionOrder.last else { return .noSections }
        s = last
      }
      let base = p >= 0 ? forest.level(of: p) &+ 1 : 0
      let built = try forest.build(ops, at: w &+ 2, base: base, &entries)
      guard case .success(let xs) = built else { return built.fault }
      forest.insertList(xs, parent: p, section: s, at: nil)
      return nil
    case Int32(EventCodes.mark):
      return nil
    default:
      break
    }
    let event = try ops.event(i, &entries)
    do throws(ListFault) { try apply(event) } catch { return error }
    return nil
  }

}

extension Forest {
  /// The live item whose id is dictionary entry `e` of `entries`, or nil.
  /// - Complexity: O(1) once the state knows the entry; else one lookup of its id.
  @inline(__always) mutating func item(entry e: Int32, _ entries: inout FoldEntries)
    throws(CodecError) -> Handle?
  {
    let k = Int(e)
    if k >= 0 && k < entryHandles.count {
      let h = entryHandles[k]
      if h >= 0 && Int(h) < nodes.count && Int(h) < entryTags.count && entryTags[Int(h)] == e
        && nodes[Int(h)].live
      {
        return h
      }
    }
    let id = try entries.text(e)
    guard let h = itemIndex[id] else { return nil }
    tag(h, e)
    return h
  }

  /// The dictionary entry item `x` is known by in `entryLineage`, if any (a tag confirmed by
  /// the entry's handle: tags of an earlier lineage are not).
  func knownEntry(of x: Handle) -> Int? {
    guard Int(x) < entryTags.count else { return nil }
    let e = entryTags[Int(x)]
    guard e >= 0, Int(e) < entryHandles.count, entryHandles[Int(e)] == x, nodes[Int(x)].live
    else { return nil }
    return Int(e)
  }

  /// Records that item `x`'s id is dictionary entry `e` (of `entryLineage`).
  mutating func tag(_ x: Handle, _ e: Int32) {
    guard e >= 0 else { return }
    while entryTags.count <= Int(x) { entryTags.append(-1) }
    entryTags[Int(x)] = e
    if entryHandles.count <= Int(e) {
      entryHandles.append(contentsOf: repeatElement(-1, count: Int(e) &+ 1 &- entryHandles.count))
    }
    entryHandles[Int(e)] = x
  }
}

/// What building an event's nodes came to: the top items, or the fault that undid it.
enum BuiltNodes {
  case success([Handle])
  case failure(ListFault)

  var fault: ListFault? {
    if case .failure(let f) = self { return f }
    return nil
  }
}

extension Forest {
  /// `build` for the node list at word `w` of `ops` (a count, then each node in pre-order:
  /// entry, level | expanded << 16, title, fields), every item built known by its entry.
  /// A fault leaves nothing behind. - Complexity: O(items), without recursion.
  mutating func build(_ ops: FoldOps, at w: Int, base: Int, _ entries: inout FoldEntries)
    throws(CodecError) -> BuiltNodes
  {
    let n = Int(ops.words[w])
    if n == 0 { return .success([]) }
    func node(_ k: Int) -> (entry: Int32, level: Int, expanded: Bool, title: Int32, fields: Int32) {
      let at = w &+ 1 &+ k &* 4
      let l = ops.words[at &+ 1]
      return (ops.words[at], Int(l & 0xFFFF), l >> 16 != 0, ops.words[at &+ 2], ops.words[at &+ 3])
    }
    if n == 1 {
      let one = node(0)
      let id = try entries.text(one.entry)
      do throws(ListFault) {
        let x = try buildOne(
          id, title: ops.string(one.title), fields: ops.fields(one.fields),
          expanded: one.expanded, base: base)
        tag(x, one.entry)
        return .success([x])
      } catch {
        return .failure(error)
      }
    }
    var b = BuildScratch()
    swap(&b, &scratch)
    defer {
      b.reset()
      swap(&b, &scratch)
    }
    for k in 0..<n {
      let m = node(k)
      let id = try entries.text(m.entry)
      if base &+ m.level > Self.deepestLevel {
        undoBuild(&b)
        return .failure(.tooDeep(item: id, level: base &+ m.level))
      }
      let built = ProbeKey.with(id, seed: itemIndex.seed) { key in
        buildItem(
          &b, level: m.level, key: key, expanded: m.expanded, selected: false,
          title: ops.string(m.title), fields: ops.fields(m.fields), replacing: .nothing,
          tracking: true)
      }
      switch built {
      case .taken(let old):
        undoBuild(&b)
        return .failure(b.created.contains(old) ? .repeatedItem(id) : .duplicateItem(id))
      case .built(let x):
        tag(x, m.entry)
      }
    }
    close(&b, to: 0)
    return .success(b.pending)
  }
}
