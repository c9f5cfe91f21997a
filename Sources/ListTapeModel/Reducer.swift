/// The pure fold of events into list state, with Apple's semantics: one reducer, on
/// operation records whose ids are entry numbers (`FoldOps`). An `Event` is turned into
/// records through the state's ids first; a log's frames decode into records directly.
extension ListState {
  /// Folds one event into the state; a fault throws and leaves the state exactly as it was
  /// (a batch applies all of its events or none).
  package mutating func apply(_ event: Event) throws(ListFault) {
    var ops = FoldOps()
    swap(&ops, &forest.opScratch)
    defer {
      ops.removeAll()
      swap(&ops, &forest.opScratch)
    }
    ops.append(event, ids: &forest.ids)
    // Records made from an `Event` define nothing through the dictionary: no codec error.
    if let fault = (try? apply(ops, 0)) ?? nil { throw fault }
  }

  /// Folds top-level record `i` of `ops` (an event, or a restart, skipped event or frame's
  /// end, which only move the state's ids on); returns its fault, nil when it applied.
  /// Throws when the record's definitions do not follow the state's ids (a record from
  /// another dictionary, a damaged log) or a restart does not list the state's ids.
  package mutating func apply(_ ops: FoldOps, _ i: Int) throws(CodecError) -> ListFault? {
    prefetchAhead(ops, i)
    let kind = ops.kind(i)
    if kind == FoldOps.Kind.restart {
      let r = ops.restarts[Int(ops.word(i, FoldOps.header))]
      if ops.flags(i) & FoldOps.lostRestart != 0 {
        // The log lost the restart: nothing of the state can be named in the new segment.
        let mode = allowsMultipleSelection
        self = ListState()
        allowsMultipleSelection = mode
        forest.ids = r.dictionary.withoutStringTable()
        forest.idsFollowLog = true
        return nil
      }
      try forest.renumber(
        to: r.dictionary, aliases: r.aliases, before: ops.seqs[i],
        dropping: ops.flags(i) & FoldOps.afterGaps != 0, from: r.from)
      return nil
    }
    if kind == FoldOps.Kind.frameEnd { return nil }
    try forest.follow(ops, i)
    if kind == FoldOps.Kind.skip { return nil }
    defer { checkInvariants() }
    let w = Int(ops.starts[i])
    if kind != Int32(EventCodes.batch) {
      do throws(ListFault) {
        try applyOne(ops, atWord: w)
      } catch {
        return error
      }
      return nil
    }
    if forest.inBatch {
      // A batch inside a batch folds in the outer batch's journal.
      do throws(ListFault) { try applyBatch(ops, atWord: w) } catch { return error }
      return nil
    }
    let mode = allowsMultipleSelection
    forest.begin()
    do throws(ListFault) {
      try applyBatch(ops, atWord: w)
    } catch {
      forest.rollback()
      allowsMultipleSelection = mode
      return error
    }
    forest.commit()
    return nil
  }

  /// Folds a batch's records in order, nested batches included, with an explicit stack of
  /// open batches. A fault names its place: the index and op at every level, outermost
  /// first (`.inBatch(index:op:fault:)` nested as the batches are).
  private mutating func applyBatch(_ ops: FoldOps, atWord start: Int) throws(ListFault) {
    // Open batches: the next record, the end, the index of the next event.
    var open: [(next: Int, end: Int, index: Int)] = [
      (start &+ FoldOps.header &+ 1, ops.batchEnd(atWord: start), 0)
    ]
    while let top = open.last {
      if top.next >= top.end {
        open.removeLast()
        continue
      }
      let w = top.next
      open[open.count &- 1].next &+= ops.length(atWord: w)
      open[open.count &- 1].index &+= 1
      if ops.kind(atWord: w) == Int32(EventCodes.batch) {
        open.append((w &+ FoldOps.header &+ 1, ops.batchEnd(atWord: w), 0))
        continue
      }
      do throws(ListFault) {
        try applyOne(ops, atWord: w)
      } catch {
        var fault = ListFault.inBatch(
          index: top.index, op: Self.opName(ops, atWord: w), fault: error)
        for level in open.dropLast().reversed() {
          fault = .inBatch(index: level.index &- 1, op: "batch", fault: fault)
        }
        throw fault
      }
    }
  }

  /// The protocol's op name of the record at word `w`.
  static func opName(_ ops: FoldOps, atWord w: Int) -> String {
    let kind = ops.kind(atWord: w)
    if kind == FoldOps.Kind.deselectAll { return "deselect" }
    let k = Int(kind) &- 1
    return k >= 0 && k < ListOperation.allNames.count ? ListOperation.allNames[k] : "?"
  }

  /// Folds one record that is not a batch.
  private mutating func applyOne(_ ops: FoldOps, atWord start: Int) throws(ListFault) {
    let kind = ops.kind(atWord: start)
    let after = ops.flags(atWord: start) & 1 != 0
    let w = start &+ FoldOps.header
    // Error paths only: an entry's text for a fault.
    func name(_ e: Int32) -> String { ops.name(e, forest.ids) }
    func item(_ e: Int32) -> Handle? {
      let x = forest.item(entry: e)
      return x >= 0 ? x : nil
    }
    func section(_ e: Int32) -> Handle? {
      let s = forest.section(entry: e)
      return s >= 0 ? s : nil
    }
    func requireItem(_ e: Int32) throws(ListFault) -> Handle {
      let x = forest.item(entry: e)
      if x < 0 { throw .missingItem(name(e)) }
      return x
    }
    func requireSection(_ e: Int32) throws(ListFault) -> Handle {
      guard let s = section(e) else { throw .missingSection(name(e)) }
      return s
    }
    /// The words holding the entries of the list at word `w`: indices, not a slice, as a
    /// slice retains the words once per event.
    func list() -> Range<Int> {
      let n = Int(ops.words[w])
      return (w &+ 1)..<(w &+ 1 &+ n)
    }
    func newSections(_ l: ArraySlice<Int32>) throws(ListFault) {
      var seen = Set<Int32>()
      for e in l {
        if l.count > 1 {
          guard seen.insert(e).inserted else { throw .repeatedSection(name(e)) }
        }
        if section(e) != nil { throw .duplicateSection(name(e)) }
      }
    }
    switch kind {
    case Int32(EventCodes.appendSections):
      let l = ops.words[list()]
      try newSections(l)
      for e in l { forest.addSection(entry: e, at: nil) }
    case Int32(EventCodes.insertSections):
      let l = ops.words[list()]
      try newSections(l)
      let anchor = ops.words[w &+ 1 &+ l.count]
      let a = try requireSection(anchor)
      guard let pos = forest.sectionPosition(a) else { throw .missingSection(name(anchor)) }
      var at = after ? pos &+ 1 : pos
      for e in l {
        forest.addSection(entry: e, at: at)
        at &+= 1
      }
    case Int32(EventCodes.deleteSections):
      for k in list() {
        if let s = section(ops.words[k]) { forest.deleteSection(s) }
      }
      forest.compactIfNeeded()
    case Int32(EventCodes.moveSection):
      let s = try requireSection(ops.words[w])
      let a = try requireSection(ops.words[w &+ 1])
      guard s != a else { throw .moveNextToItself(name(ops.words[w])) }
      forest.moveSection(s, anchor: a, after: after)
    case Int32(EventCodes.reloadSections):
      for k in list() where section(ops.words[k]) == nil {
        throw .missingSection(name(ops.words[k]))
      }
    case Int32(EventCodes.appendItems):
      let flags = ops.flags(atWord: start)
      let se = ops.words[w]
      let pe = ops.words[w &+ 1]
      if flags & 2 != 0 {
        guard let p = item(pe) else { throw .missingParent(name(pe)) }
        if flags & 1 != 0 {
          let s = try requireSection(se)
          guard forest.section(of: p) == s else {
            throw .parentNotInSection(parent: name(pe), section: name(se))
          }
        }
        let xs = try forest.build(ops, atWord: w &+ 2, base: forest.level(of: p) &+ 1)
        forest.insertList(xs, parent: p, section: -1, at: nil)
      } else {
        let s: Handle
        if flags & 1 != 0 {
          s = try requireSection(se)
        } else {
          guard let last = forest.sectionOrder.last else { throw .noSections }
          s = last
        }
        let xs = try forest.build(ops, atWord: w &+ 2, base: 0)
        forest.insertList(xs, parent: -1, section: s, at: nil)
      }
    case Int32(EventCodes.insertItems):
      guard let a = item(ops.words[w]) else { throw .missingAnchor(name(ops.words[w])) }
      let xs = try forest.build(ops, atWord: w &+ 1, base: forest.level(of: a))
      forest.insert(xs, nextTo: a, after: after)
    case Int32(EventCodes.deleteItems):
      for k in list() {
        if let x = item(ops.words[k]) { forest.delete(x) }
      }
      forest.compactIfNeeded()
    case Int32(EventCodes.deleteAllItems):
      forest.deleteAllItems()
    case Int32(EventCodes.moveItem):
      let x = try requireItem(ops.words[w])
      guard let a = item(ops.words[w &+ 1]) else { throw .missingAnchor(name(ops.words[w &+ 1])) }
      try forest.moveItem(x, anchor: a, after: after)
    case Int32(EventCodes.replaceChildren):
      guard let p = item(ops.words[w]) else { throw .missingParent(name(ops.words[w])) }
      try forest.replaceChildren(of: p, with: ops, atWord: w &+ 1)
    case Int32(EventCodes.applySectionSnapshot):
      let s = try requireSection(ops.words[w])
      try forest.replaceSection(s, with: ops, atWord: w &+ 1)
    case Int32(EventCodes.reloadItems), Int32(EventCodes.reconfigureItems):
      for k in list() where item(ops.words[k]) == nil { throw .missingItem(name(ops.words[k])) }
    case Int32(EventCodes.update):
      let x = try requireItem(ops.words[w])
      let k = ops.words[w &+ 1]
      if k >= 0 { ops.withText(k) { forest.update(x, with: $0) } }
    case Int32(EventCodes.expand), Int32(EventCodes.collapse):
      let l = list()
      let value = kind == Int32(EventCodes.expand)
      if l.count == 1 {
        forest.expandOrCollapse(try requireItem(ops.words[l.lowerBound]), value)
        return
      }
      var handles: [Handle] = []
      handles.reserveCapacity(l.count)
      for k in l { handles.append(try requireItem(ops.words[k])) }
      for x in handles { forest.expandOrCollapse(x, value) }
    case Int32(EventCodes.select):
      try select(list(), ops)
    case Int32(EventCodes.deselect):
      for k in list() {
        if let x = item(ops.words[k]) { forest.setSelected(x, false) }
      }
    case FoldOps.Kind.deselectAll:
      deselect(nil)
    case Int32(EventCodes.configure):
      setAllowsMultipleSelection(after)
    default:
      // Marks change nothing.
      break
    }
  }

  /// `select` of the items of the entries at words `l` of `ops` (which names them in a
  /// fault): visible ones only; in single-selection mode the selection becomes the one item
  /// given (none clears it).
  private mutating func select(_ l: Range<Int>, _ ops: borrowing FoldOps)
    throws(ListFault)
  {
    func require(_ e: Int32) throws(ListFault) -> Handle {
      let x = forest.item(entry: e)
      if x < 0 { throw .missingItem(ops.name(e, forest.ids)) }
      return x
    }
    if l.count == 1 {
      // One row tapped (the usual event): no list to build.
      try select(try require(ops.words[l.lowerBound]))
      return
    }
    var handles: [Handle] = []
    for k in l {
      let e = ops.words[k]
      let x = try require(e)
      guard forest.isVisible(x) else { throw .hiddenItem(ops.name(e, forest.ids)) }
      if !handles.contains(x) { handles.append(x) }
    }
    if allowsMultipleSelection {
      for x in handles { forest.setSelected(x, true) }
    } else {
      guard handles.count <= 1 else { throw .tooManySelected(handles.count) }
      for x in forest.selectedItems() where x != handles.first { forest.setSelected(x, false) }
      if let x = handles.first { forest.setSelected(x, true) }
    }
  }
}

extension Forest {
  /// Brings the ids up to where record `i` of `ops` expects them (a fold on a log's
  /// records): appends the definitions it makes that the ids lack. Ids may run ahead of the
  /// records (loaded whole from an index, or read past a frame's stop): an entry of one
  /// lineage always names the same id, so those are not written again.
  mutating func follow(_ ops: FoldOps, _ i: Int) throws(CodecError) {
    let head = ops.heads[i]
    let before = Int(head.dictBefore)
    guard before >= 0 else { return }
    guard ids.count >= before else {
      throw CodecError(
        "event needs \(before) dictionary entries, the state knows \(ids.count)", offset: 0)
    }
    let first = Int(head.defFirst)
    let n = Int(head.defCount)
    let known = ids.count &- before
    if n > known { ids.append(from: ops.definitions, (first &+ known)..<(first &+ n)) }
  }

  /// Renumbers every live item and section into `dictionary`, a restart's (which lists the
  /// live ids, sections first, then each section's items in pre-order): entry by entry in
  /// that order when the ids agree byte for byte, else by looking each id up in it. Throws
  /// when the restart lacks an id the state holds. - Complexity: O(live ids), no hashing
  /// when the restart lists the state's ids.
  mutating func renumber(
    to dictionary: IdSpace, aliases: DefinitionAliases, before seq: Int, dropping: Bool = false,
    from previous: Renumbering? = nil
  ) throws(CodecError) {
    if dropping { dropUnlisted(in: dictionary) }
    var newEntryOf = entryOf
    var newSectionEntry = sections.map { $0.entry }
    if let previous, !dropping, mapEntries(&newSectionEntry, &newEntryOf, by: previous) {
      takeIDs(dictionary, newSectionEntry, newEntryOf)
      return
    }
    var p = 0
    var agree = true
    func next(_ old: Int32) -> Int32? {
      guard p < dictionary.count, ids.same(Int(old), as: p, in: dictionary) else { return nil }
      defer { p &+= 1 }
      return aliases.canonical(Int32(truncatingIfNeeded: p))
    }
    for s in sectionOrder {
      guard let e = next(sections[Int(s)].entry) else {
        agree = false
        break
      }
      newSectionEntry[Int(s)] = e
    }
    if agree {
      outer: for s in sectionOrder {
        for x in items(inSection: s, visibleOnly: false) {
          guard let e = next(entryOf[Int(x)]) else {
            agree = false
            break outer
          }
          newEntryOf[Int(x)] = e
        }
      }
    }
    if !agree {
      var lookup = dictionary
      func find(_ old: Int32) throws(CodecError) -> Int32 {
        let e = ids.withStored(Int(old)) { form in
          IdText.withText(form) { lookup.entry(ofText: $0) }
        }
        guard let e else {
          throw CodecError(
            "the dictionary restart before event \(seq) does not list \"\(ids.text(Int(old)))\"",
            offset: 0)
        }
        return aliases.canonical(e)
      }
      for s in sectionOrder { newSectionEntry[Int(s)] = try find(sections[Int(s)].entry) }
      for x in nodes.indices where nodes[x].live { newEntryOf[x] = try find(entryOf[x]) }
    }
    takeIDs(dictionary, newSectionEntry, newEntryOf)
  }

  /// Maps every live section's and item's entry through `previous` (the decoder's table
  /// from the dictionary before the restart into the restart's) when the ids are numbered
  /// by that dictionary; false, with nothing changed that matters, when they are not or
  /// the restart does not list one of them (the caller then compares or looks up each).
  /// - Complexity: O(sections + item slots), no id read.
  private func mapEntries(
    _ newSectionEntry: inout [Int32], _ newEntryOf: inout [Int32], by previous: Renumbering
  ) -> Bool {
    guard idsFollowLog && ids.lineage == previous.lineage else { return false }
    let map = previous.entries
    @inline(__always) func mapped(_ e: Int32) -> Int32 {
      Int(e) < map.count && e >= 0 ? map[Int(e)] : -1
    }
    for s in sectionOrder {
      let e = mapped(sections[Int(s)].entry)
      guard e >= 0 else { return false }
      newSectionEntry[Int(s)] = e
    }
    for x in nodes.indices where nodes[x].live {
      let e = mapped(entryOf[x])
      guard e >= 0 else { return false }
      newEntryOf[x] = e
    }
    return true
  }

  /// Takes `dictionary` as the ids, each live section and item at its new entry.
  private mutating func takeIDs(
    _ dictionary: IdSpace, _ newSectionEntry: [Int32], _ newEntryOf: [Int32]
  ) {
    var newHandleOf = [Handle](repeating: -1, count: dictionary.count)
    var newSectionOf = [Handle](repeating: -1, count: dictionary.count)
    for x in nodes.indices where nodes[x].live {
      newHandleOf[Int(newEntryOf[x])] = Handle(truncatingIfNeeded: x)
    }
    for s in sectionOrder {
      newSectionOf[Int(newSectionEntry[Int(s)])] = s
      sections[Int(s)].entry = newSectionEntry[Int(s)]
    }
    entryOf = newEntryOf
    handleOf = newHandleOf
    sectionOf = newSectionOf
    ids = dictionary.withoutStringTable()
    idsFollowLog = true
  }

  /// Deletes the sections and items whose ids `dictionary` does not list (a restart met in
  /// a salvaged log's stretch of states that are not the recorded ones, which need not hold
  /// what the recorder held). - Complexity: O(live ids), hashing each.
  mutating func dropUnlisted(in dictionary: IdSpace) {
    var lookup = dictionary
    func listed(_ e: Int32) -> Bool {
      ids.withStored(Int(e)) { form in IdText.withText(form) { lookup.entry(ofText: $0) } } != nil
    }
    for s in Array(sectionOrder) where !listed(sections[Int(s)].entry) { deleteSection(s) }
    for x in nodes.indices where nodes[x].live && !listed(entryOf[x]) {
      // A deleted ancestor took it already when it is no longer live.
      if nodes[x].live { delete(Handle(truncatingIfNeeded: x)) }
    }
    compactIfNeeded()
  }
}
