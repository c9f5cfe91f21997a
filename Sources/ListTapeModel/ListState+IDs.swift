/// The state's ids as the reading side sees them: the numbering a fold of a log's records
/// shares with the log's dictionary.
extension ListState {
  /// Every id the state knows, by entry (a log's dictionary, for a state folded from it).
  package var ids: IdSpace { forest.ids }

  /// The ids' numbering (`IdSpace.lineage`), read in place: a caller in another module
  /// that reads it per event would otherwise copy the ids (three arrays retained) each time.
  package var idsLineage: UInt64 { forest.ids.lineage }

  /// `idsLineage` of a state read in place: a caller holding the state `inout` in another
  /// module copies all of it (~600 bytes) to ask the property.
  package static func idsLineage(of state: inout ListState) -> UInt64 {
    state.forest.ids.lineage
  }

  /// Calls `body` with entry `e`'s text (`IdSpace.withText`), read in place.
  package func withIdText<R>(_ e: Int, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
    forest.ids.withText(e, body)
  }

  /// Builds the ids' string table now (O(entries)), for a caller about to ask this state,
  /// and states folded from it, many questions by string: the fold keeps it up to date.
  package mutating func indexIDs() { forest.ids.buildTable() }

  /// Takes `ids` and its string table, built once elsewhere, for the state's own ids when
  /// they are the same entries (the same lineage, count and bytes): a viewer that jumps
  /// within one segment then builds the table once, not on every jump. Returns false, and
  /// changes nothing, otherwise.
  package mutating func adoptIndexed(_ ids: IdSpace) -> Bool {
    guard ids.hasStringTable, ids.lineage != 0, ids.lineage == forest.ids.lineage,
      ids.count == forest.ids.count, ids.bytes.count == forest.ids.bytes.count
    else { return false }
    forest.ids = ids
    return true
  }

  /// The state's ids in a lineage of their own (drawn now if they had none), for records
  /// made from events (`FoldOps.append(_:seq:defining:)`) that this state will follow.
  package mutating func sharedIDs() -> IdSpace {
    _ = forest.ids.ensureLineage()
    forest.idsFollowLog = true
    return forest.ids
  }

  /// Gives a 1.0 decoder the state's ids, in a lineage of their own (drawn now if they had
  /// none), so that it numbers the ids it meets as the state does.
  package mutating func shareIDs(with decoder: inout EventDecoder) {
    _ = sharedIDs()
    decoder.adopt(&forest.ids)
  }

  /// Makes the state number its ids as `dictionary` does before a fold of its records: a
  /// state of the same lineage takes the entries it lacks; an empty one takes the
  /// dictionary; any other is renumbered into it (each id looked up, O(ids) with hashing).
  /// Throws when `dictionary` lacks an id the state holds.
  package mutating func adopt(_ dictionary: IdSpace, aliases: DefinitionAliases)
    throws(CodecError)
  {
    if forest.ids.lineage != 0 && forest.ids.lineage == dictionary.lineage {
      if forest.ids.count < dictionary.count {
        forest.ids.append(from: dictionary, forest.ids.count..<dictionary.count)
      }
      return
    }
    if forest.itemCount == 0 && forest.sectionOrder.isEmpty {
      forest.ids = dictionary.withoutStringTable()
      forest.idsFollowLog = true
      forest.handleOf.removeAll()
      forest.sectionOf.removeAll()
      return
    }
    try forest.renumber(to: dictionary, aliases: aliases, before: 0)
  }

  /// Follows record `i` of `ops` without applying it: the ids only (a listing of events).
  package mutating func follow(_ ops: FoldOps, _ i: Int) throws(CodecError) {
    let kind = ops.kind(i)
    if kind == FoldOps.Kind.restart {
      let r = ops.restarts[Int(ops.word(i, FoldOps.header))]
      if forest.itemCount == 0 && forest.sectionOrder.isEmpty
        || ops.flags(i) & FoldOps.lostRestart != 0
      {
        forest.ids = r.dictionary.withoutStringTable()
        forest.idsFollowLog = true
        forest.handleOf.removeAll()
        forest.sectionOf.removeAll()
      } else {
        try forest.renumber(
          to: r.dictionary, aliases: r.aliases, before: ops.seqs[i],
          dropping: ops.flags(i) & FoldOps.afterGaps != 0, from: r.from)
      }
      return
    }
    if kind == FoldOps.Kind.frameEnd { return }
    try forest.follow(ops, i)
  }
}
