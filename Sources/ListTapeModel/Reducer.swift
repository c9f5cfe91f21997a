/// The pure fold of events into list state, with Apple's semantics.
extension ListState {
  /// Folds one event into the state; a fault throws and leaves the state exactly as it was
  /// (a batch applies all of its events or none).
  package mutating func apply(_ event: Event) throws(ListFault) {
    defer { checkInvariants() }
    guard case .batch(let events) = event.operation else {
      try applyOne(event.operation)
      return
    }
    if forest.inBatch {
      // A batch inside a batch folds in the outer batch's journal.
      try applyBatch(events)
      return
    }
    let mode = allowsMultipleSelection
    forest.begin()
    do {
      try applyBatch(events)
    } catch {
      forest.rollback()
      allowsMultipleSelection = mode
      throw error
    }
    forest.commit()
  }

  /// Folds a batch's events in order, nested batches included, with an explicit stack of
  /// open batches. A fault names its place: the index and op at every level, outermost
  /// first (`.inBatch(index:op:fault:)` nested as the batches are).
  private mutating func applyBatch(_ events: [Event]) throws(ListFault) {
    var open: [(events: [Event], next: Int)] = [(events, 0)]
    while let top = open.last {
      if top.next == top.events.count {
        open.removeLast()
        continue
      }
      let e = top.events[top.next]
      open[open.count - 1].next += 1
      if case .batch(let inner) = e.operation {
        open.append((inner, 0))
        continue
      }
      do {
        try applyOne(e.operation)
      } catch {
        var fault = ListFault.inBatch(index: top.next, op: e.op, fault: error)
        for level in open.dropLast().reversed() {
          fault = .inBatch(index: level.next - 1, op: "batch", fault: fault)
        }
        throw fault
      }
    }
  }

  private mutating func applyOne(_ op: ListOperation) throws(ListFault) {
    switch op {
    case .appendSections(let ids): try appendSections(ids)
    case .insertSections(let ids, .before(let a)): try insertSections(ids, beforeSection: a)
    case .insertSections(let ids, .after(let a)): try insertSections(ids, afterSection: a)
    case .deleteSections(let ids): deleteSections(ids)
    case .moveSection(let id, .before(let a)): try moveSection(id, beforeSection: a)
    case .moveSection(let id, .after(let a)): try moveSection(id, afterSection: a)
    case .reloadSections(let ids): try forest.requireSections(ids)
    case .appendItems(let items, let section, let parent):
      try forest.appendItems(items, section: section, parent: parent)
    case .insertItems(let items, .before(let a)): try insertItems(items, beforeItem: a)
    case .insertItems(let items, .after(let a)): try insertItems(items, afterItem: a)
    case .deleteItems(let ids): deleteItems(ids)
    case .deleteAllItems: deleteAllItems()
    case .moveItem(let id, .before(let a)): try moveItem(id, beforeItem: a)
    case .moveItem(let id, .after(let a)): try moveItem(id, afterItem: a)
    case .replaceChildren(let parent, let items): try replaceChildren(of: parent, with: items)
    case .applySectionSnapshot(let section, let items): try applyItems(items, to: section)
    case .reloadItems(let ids), .reconfigureItems(let ids): try forest.requireItems(ids)
    case .update(let item, let title, let fields):
      try updateItem(item, title: title, fields: fields)
    case .expand(let ids): try expand(ids)
    case .collapse(let ids): try collapse(ids)
    case .select(let ids): try select(ids)
    case .deselect(let ids): deselect(ids)
    case .configure(let multiple): setAllowsMultipleSelection(multiple)
    case .mark: break
    case .batch(let events): try applyBatch(events)
    }
  }
}

extension ListState: Equatable {
  /// Logical equality: sections, outlines, flags, content, selection and mode; never the
  /// internal tree shape.
  package static func == (lhs: ListState, rhs: ListState) -> Bool {
    guard lhs.allowsMultipleSelection == rhs.allowsMultipleSelection,
      lhs.forest.itemIndex.count == rhs.forest.itemIndex.count,
      lhs.forest.selection.count == rhs.forest.selection.count,
      lhs.sectionIdentifiers.elementsEqual(rhs.sectionIdentifiers, by: sameIdentifier)
    else { return false }
    for (a, b) in zip(lhs.forest.sectionOrder, rhs.forest.sectionOrder) {
      let xs = lhs.forest.items(inSection: a, visibleOnly: false)
      let ys = rhs.forest.items(inSection: b, visibleOnly: false)
      guard xs.count == ys.count else { return false }
      // Pre-order plus every subtree size (`cnt`) fixes the shape, levels included, so
      // no per-item walk up the ancestors (quadratic on deep outlines) is needed.
      for (x, y) in zip(xs, ys) {
        let n = lhs.forest.nodes[Int(x)]
        let c = lhs.forest.content[Int(x)]
        let m = rhs.forest.nodes[Int(y)]
        let d = rhs.forest.content[Int(y)]
        let sameID = lhs.forest.withID(of: x) { a in
          rhs.forest.withID(of: y) { b in IdentifierIndex.equal(a, b) }
        }
        guard sameID, n.expanded == m.expanded, n.selected == m.selected,
          c.title == d.title, c.fields == d.fields, n.cnt == m.cnt
        else { return false }
      }
    }
    return true
  }
}
