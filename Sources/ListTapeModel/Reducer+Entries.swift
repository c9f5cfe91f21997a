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
    try entries.sync(ops, i)
    let kind = ops.kind(i)
    if kind == FoldOps.Kind.restart || kind == FoldOps.Kind.skip { return nil }
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
      // One new item without children (the usual insert).
      guard ops.words[w &+ 1] == 1, ops.words[w &+ 3] & 0xFFFF == 0 else { break }
      let f = ops.words[w]
      guard let a = try forest.item(entry: f, &entries) else {
        return .missingAnchor(try entries.text(f))
      }
      let id = try entries.text(ops.words[w &+ 2])
      do throws(ListFault) {
        let x = try buildNode(id, ops, at: w &+ 2, base: forest.level(of: a))
        forest.insert(x, nextTo: a, after: ops.flags(i) & 1 != 0)
      } catch {
        return error
      }
      return nil
    case Int32(EventCodes.appendItems):
      // One new item without children under a parent (the usual append).
      let flags = ops.flags(i)
      guard flags == 2, ops.words[w &+ 2] == 1, ops.words[w &+ 4] & 0xFFFF == 0 else { break }
      let f = ops.words[w &+ 1]
      guard let p = try forest.item(entry: f, &entries) else {
        return .missingParent(try entries.text(f))
      }
      let id = try entries.text(ops.words[w &+ 3])
      do throws(ListFault) {
        let x = try buildNode(id, ops, at: w &+ 3, base: forest.level(of: p) &+ 1)
        forest.insertList(x, parent: p, section: -1, at: nil)
      } catch {
        return error
      }
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

  /// Builds the one node at word `w` (entry, level | expanded, title, fields), whose id is
  /// `id`, as a detached item at level `base`, its handle known by its entry from now on.
  private mutating func buildNode(_ id: String, _ ops: FoldOps, at w: Int, base: Int)
    throws(ListFault) -> Handle
  {
    let e = ops.words[w]
    let x = try forest.buildOne(
      id, title: ops.string(ops.words[w &+ 2]), fields: ops.fields(ops.words[w &+ 3]),
      expanded: ops.words[w &+ 1] >> 16 != 0, base: base)
    forest.tag(x, e)
    return x
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
