/// What decoding a 2.0 event frame came to.
package enum FrameOutcome: Sendable, Equatable {
  /// Every event of the frame was handed over.
  case done
  /// Decoding stopped before this event (the frame's definitions were still read).
  case stopped(at: Int)
  /// The frame needs entries this decoder lacks (events were lost before it, or the
  /// decoder stands in another segment): nothing was decoded.
  case gap
}

/// Definitions that repeat an earlier entry's id (a restart that lists an id both as a
/// section and as an item, or a hostile log), and the entry each repeats. References to a
/// repeat are read as the earlier entry, so a state never holds two items of one id.
///
/// Entries below `vetted` were checked already (by whoever built the dictionary: a reader
/// from the log's start, or an index built that way); a definition past them is looked up
/// by its stored form in the dictionary's string table, built on the first such
/// definition. - Complexity: O(1) per definition once the table is built.
package struct DefinitionAliases: Sendable, Equatable {
  /// Entries known to be checked.
  package var vetted = 0
  /// Each repeat and the entry it repeats.
  package private(set) var map: [Int32: Int32] = [:]

  package init() {}

  /// Aliases already known for a dictionary checked through entry `vetted`.
  package init(vetted: Int, map: [Int32: Int32]) {
    self.vetted = vetted
    self.map = map
  }

  @inline(__always) func canonical(_ e: Int32) -> Int32 {
    map.isEmpty ? e : map[e] ?? e
  }

  /// Checks the entry just appended to `dictionary`; returns it, or the entry it repeats.
  mutating func check(last dictionary: inout IdSpace) -> Int32 {
    let n = Int32(truncatingIfNeeded: dictionary.count &- 1)
    if Int(n) < vetted { return canonical(n) }
    let first = dictionary.firstEntry(sameAs: Int(n))
    vetted = Int(n) &+ 1
    guard first != n else { return n }
    map[n] = first
    return first
  }

  /// Records that entry `e`, just entered, holds the id of entry `first` (itself unless it
  /// repeats an earlier one), as `check(last:)` does.
  mutating func note(_ e: Int32, _ first: Int32) {
    guard Int(e) >= vetted else { return }
    vetted = Int(e) &+ 1
    if first != e { map[e] = first }
  }

  /// Forgets everything (a restart).
  mutating func removeAll() {
    vetted = 0
    map.removeAll()
  }
}

extension EventDecoder {
  /// Makes room in the dictionary for `entries` entries of `bytes` stored bytes.
  package mutating func reserveDictionary(entries: Int, bytes: Int) {
    dictionary.reserve(entries: entries, bytes: bytes)
  }

  /// Applies a 2.0 dictionary restart (a DICT frame) that comes before event `seq`.
  package mutating func restart(_ payload: UnsafeRawBufferPointer, seq: Int) throws(CodecError) {
    var fresh = IdSpace()
    try DictionaryPayload.decode(payload, into: &fresh)
    fresh.setLineage(Self.lineage(log: logID, segment: UInt64(seq)))
    aliases.removeAll()
    // A restart lists each id once, but a section and an item may share one: every entry
    // is entered in the string table in one batch (sized once, lookups overlapping).
    dictionary = fresh
    dictionary.indexAppended(from: 0) { e, same in aliases.note(e, same) }
    segment = UInt64(seq)
    defined = dictionary.count
    expected = seq
  }

  /// Applies a restart as `restart(_:seq:)` does and records it in `ops`, so that the
  /// fold's state is renumbered there too (`afterGaps`: in a salvaged log).
  package mutating func restart(
    _ payload: UnsafeRawBufferPointer, seq: Int, afterGaps: Bool = false,
    into ops: inout FoldOps
  ) throws(CodecError) {
    let previous = dictionary
    try restart(payload, seq: seq)
    // Worked out here, on the reading thread, so that the fold renumbers by a table.
    var from: Renumbering?
    if !afterGaps, previous.lineage != 0, let entries = dictionary.renumbering(from: previous) {
      from = Renumbering(lineage: previous.lineage, entries: entries)
    }
    ops.restart(
      dictionary, aliases: aliases, seq: seq, flags: afterGaps ? FoldOps.afterGaps : 0,
      from: from)
  }

  /// Starts over with a dictionary loaded in bulk for segment `segment` (an index file's),
  /// checked through `aliases.vetted` entries, `defined` of them defined before event `seq`.
  package mutating func load(
    _ dictionary: IdSpace, aliases: DefinitionAliases, segment: UInt64, defined: Int,
    before seq: Int
  ) {
    self.defined = defined
    self.dictionary = dictionary
    self.dictionary.setLineage(Self.lineage(log: logID, segment: segment))
    self.aliases = aliases
    self.segment = segment
    // The frames before `seq` were not read: their sites' model is not known here.
    sites.forget()
    expected = seq
  }

  /// The lineage of the dictionary of segment `segment` of the log named `log`: every
  /// reader of that segment numbers its ids alike, so states loaded from the log's
  /// checkpoints, its index and its folds agree entry for entry.
  package static func lineage(log: UInt64, segment: UInt64) -> UInt64 {
    var h = log ^ 0x9E37_79B9_7F4A_7C15
    h = (h ^ (segment &+ 0x632B_E59B_D9B4_E019)) &* 0xBF58_476D_1CE4_E5B9
    h = (h ^ (h >> 31)) &* 0x94D0_49BB_1331_11EB
    h ^= h >> 29
    return h == 0 ? 1 : h
  }

  /// Decodes the events `from...through` of a 2.0 event frame numbered `firstSeq...` into
  /// records in `ops` (events before `from` as `skip` records that only carry their
  /// definitions; the frame's definitions are read to its end either way). A frame that
  /// needs entries this decoder lacks is `.gap`, and nothing is added. With `acrossGaps`
  /// (a salvaged log), a frame whose entries were partly lost is still decoded: its events
  /// that name a lost entry go to `lost` instead.
  package mutating func decodeFrame(
    _ payload: UnsafeRawBufferPointer, firstSeq: Int, count: Int, from: Int, through: Int,
    acrossGaps: Bool = false, lost: (Int) -> Void = { _ in }, into ops: inout FoldOps
  ) throws(CodecError) -> FrameOutcome {
    let head = try FrameHeaderFields(payload)
    var lostRestart = false
    if acrossGaps && head.segment > segment {
      // The restart that began this frame's segment was lost.
      dictionary.removeAll(lineage: Self.lineage(log: logID, segment: head.segment))
      aliases.removeAll()
      segment = head.segment
      defined = 0
      lostRestart = true
    }
    if acrossGaps, let known = makeHoles(before: head), !lostRestart {
      ops.holes(dictionary, known..<dictionary.count, seq: firstSeq)
    }
    if lostRestart {
      ops.restart(dictionary, aliases: aliases, seq: firstSeq, flags: FoldOps.lostRestart)
    }
    guard head.segment == segment, head.dictBase <= dictionary.count else { return .gap }
    // The frame's new definitions are entered in the string table after its events, in one
    // batch whose lookups overlap (an outline of 50,000 new ids in one event waited on a
    // cache miss per id). A repeat among them (a hostile log) or an error has the frame
    // decoded again checking each definition as it comes, as its references need.
    if !acrossGaps && dictionary.isHoleFree {
      let saved = (aliases: aliases, entries: dictionary.count, records: ops.count)
      if let outcome = try? decodeEvents(
        head, firstSeq: firstSeq, count: count, from: from, through: through,
        batched: true, lost: lost, into: &ops)
      {
        return outcome
      }
      ops.truncate(to: saved.records)
      dictionary.truncate(to: saved.entries)
      aliases = saved.aliases
      // The attempt moved the site model part way (a hostile log's repeated definition):
      // the frame's sites are read no further.
      sites.forget()
    }
    return try decodeEvents(
      head, firstSeq: firstSeq, count: count, from: from, through: through, batched: false,
      lost: lost, into: &ops)
  }

  /// `decodeFrame(_:firstSeq:count:from:through:acrossGaps:lost:into:)` after its header
  /// and gaps. `batched` throws also when a definition repeats an earlier id; either way
  /// the caller decodes the frame again unbatched (which throws what is wrong with it).
  private mutating func decodeEvents(
    _ head: FrameHeaderFields, firstSeq: Int, count: Int, from: Int, through: Int,
    batched: Bool, lost: (Int) -> Void, into ops: inout FoldOps
  ) throws(CodecError) -> FrameOutcome {
    var source = FrameSource(head.columns)
    source.defined = head.dictBase
    source.batched = batched
    let firstNew = dictionary.count
    swap(&source.dictionary, &dictionary)
    swap(&source.aliases, &aliases)
    swap(&source.sync, &sites)
    defer {
      swap(&source.dictionary, &dictionary)
      swap(&source.aliases, &aliases)
      swap(&source.sync, &sites)
    }
    // A frame read only in part is read again for the events after `through`.
    if try source.beginSites(head), firstSeq &+ count &- 1 > through {
      source.sync.keepBefore()
    }
    /// Enters the batch's definitions; whether none repeats an earlier id.
    func entered() -> Bool {
      guard batched else { return true }
      source.batched = false
      var repeats = false
      var aliases = source.aliases
      source.dictionary.indexAppended(from: firstNew) { e, same in
        if e != same { repeats = true }
        aliases.note(e, same)
      }
      source.aliases = aliases
      return !repeats
    }
    let mark = ops.count
    var stoppedAt: Int?
    for i in 0..<count {
      let seq = firstSeq &+ i
      if seq > through {
        stoppedAt = seq
        break
      }
      let outcome: OpOutcome
      do throws(CodecError) {
        outcome = try OpWalk.decode(&source, seq: seq, into: &ops)
      } catch {
        ops.truncate(to: mark)
        var located = error
        located.event = seq
        throw located
      }
      if outcome == .lost {
        if seq >= from { lost(seq) }
        continue
      }
      // Events before `from` only define entries (the fold's ids need those).
      if seq < from { ops.words[Int(ops.starts[ops.count &- 1])] = FoldOps.Kind.skip }
    }
    guard entered() else { throw CodecError("a definition repeats an earlier one", offset: 0) }
    if let stoppedAt {
      // The decoder reads on to the frame's end; the records stop at `through` (a fold
      // that wants more positions a decoder again).
      try source.remainingDefinitions()
      try source.skipSites()
      defined = source.defined
      expected = firstSeq &+ count
      return .stopped(at: stoppedAt)
    }
    if var problem = source.leftover {
      ops.truncate(to: mark)
      problem.event = firstSeq &+ count &- 1
      throw problem
    }
    defined = source.defined
    expected = firstSeq &+ count
    return .done
  }

  /// Decodes the events of a 2.0 event frame numbered `firstSeq...`, handing `body` those
  /// from `from` on as `Event`s until it returns false (for a person, a test, or a tool
  /// that lists events; folds take the records). The frame's definitions are read to its
  /// end either way, so the decoder can go on with the next frame.
  package mutating func decodeFrame(
    _ payload: UnsafeRawBufferPointer, firstSeq: Int, count: Int, from: Int = 1,
    acrossGaps: Bool = false, lost: (Int) -> Void = { _ in },
    _ body: (Int, Event) -> Bool
  ) throws(CodecError) -> FrameOutcome {
    var ops = FoldOps()
    let outcome = try decodeFrame(
      payload, firstSeq: firstSeq, count: count, from: from, through: .max,
      acrossGaps: acrossGaps, lost: lost, into: &ops)
    for i in 0..<ops.count where ops.isEvent(i) {
      if !body(ops.seqs[i], ops.event(i, dictionary)) { return .stopped(at: ops.seqs[i]) }
    }
    return outcome
  }

  /// The most entries a gap may have defined that a reader makes holes of: a frame claiming
  /// more (a hostile header) is a gap itself rather than gigabytes of holes.
  static let maxHoles = 1 << 24

  /// Makes holes of the entries of this segment that frames lost before the one `head`
  /// begins defined (a salvaged log), which events naming them are lost with; returns how
  /// many entries the dictionary held before, or nil when it made none.
  private mutating func makeHoles(before head: FrameHeaderFields) -> Int? {
    let known = dictionary.count
    guard head.segment == segment, known < head.dictBase, head.dictBase - known <= Self.maxHoles
    else { return nil }
    while dictionary.count < head.dictBase {
      dictionary.append(stored: UnsafeRawBufferPointer(start: nil, count: 0))
    }
    aliases.vetted = max(aliases.vetted, dictionary.count)
    return known
  }

  /// Reads only the definitions of a 2.0 event frame (rebuilding a dictionary without
  /// decoding events); `.gap` as for `decodeFrame`, and with `acrossGaps` entries defined in
  /// lost frames of the segment become holes as there, so that the frame's own definitions
  /// take the numbers a fold across the gap gives them. With `prefix`, `payload` is only the
  /// first `definitionsEnd(ofFrame:)` bytes of the frame's payload.
  package mutating func skipFrame(
    _ payload: UnsafeRawBufferPointer, firstSeq: Int, count: Int, prefix: Bool = false,
    acrossGaps: Bool = false
  ) throws(CodecError) -> FrameOutcome {
    let head = try FrameHeaderFields(payload, prefix: prefix)
    if acrossGaps && head.segment > segment {
      // The restart that began this frame's segment was lost (as `decodeFrame` reads it).
      dictionary.removeAll(lineage: Self.lineage(log: logID, segment: head.segment))
      aliases.removeAll()
      segment = head.segment
      defined = 0
    }
    if acrossGaps { _ = makeHoles(before: head) }
    guard head.segment == segment, head.dictBase <= dictionary.count else { return .gap }
    var source = FrameSource(head.columns)
    source.defined = head.dictBase
    swap(&source.dictionary, &dictionary)
    swap(&source.aliases, &aliases)
    swap(&source.sync, &sites)
    defer {
      swap(&source.dictionary, &dictionary)
      swap(&source.aliases, &aliases)
      swap(&source.sync, &sites)
    }
    if try source.beginSites(head) { source.sync.keepBefore() }
    try source.remainingDefinitions()
    try source.skipSites()
    defined = source.defined
    expected = firstSeq &+ count
    return .done
  }

  /// How many bytes at the start of an event frame's payload a reader of its definitions
  /// alone needs, read from the payload's first `definitionsHead` bytes; nil: all of it.
  package static func definitionsEnd(ofFrame head: UnsafeRawBufferPointer) -> Int? {
    FrameHeaderFields.definitionsEnd(head)
  }

  /// Moves the site model past the sites of a 2.0 event frame without reading its events or
  /// its definitions (a seek that has its dictionary from elsewhere, the index's, and needs
  /// the model of the segment's frames before it). Frames of other layouts, and frames of
  /// another segment, leave it as it is.
  package mutating func skipSites(ofFrame payload: UnsafeRawBufferPointer) throws(CodecError) {
    let head = try FrameHeaderFields(payload)
    guard sites.enabled else { return }
    var source = FrameSource(head.columns)
    source.defined = head.dictBase
    swap(&source.sync, &sites)
    defer { swap(&source.sync, &sites) }
    guard try source.beginSites(head) else { return }
    try source.skipSites()
  }

  /// Whether a decoder starting at the event frame whose payload begins with `head` needs
  /// the site model of the frames before it (layout 3, coded against a model begun
  /// earlier): false when `head` does not hold such a header.
  package static func needsSiteModel(ofFrame head: UnsafeRawBufferPointer) -> Bool {
    var h = ByteSource(head)
    guard let start = try? FrameHeaderFields.start(&h) else { return false }
    return start.layout == FrameLayout.modelVersion && start.siteRun > 0
  }

  /// Bytes of an event frame's payload that always hold its header.
  package static let definitionsHead = 192

  /// Decodes a 2.0 checkpoint (a compact state) with this decoder's dictionary, which must
  /// be that of the checkpoint's segment.
  package mutating func decodeCheckpoint(_ payload: UnsafeRawBufferPointer) throws(CodecError)
    -> ListState
  {
    let head = try ListState.compactHeader(payload)
    guard head.segment == segment else {
      throw CodecError(
        "checkpoint of the segment before event \(head.segment) read with the dictionary of "
          + "the segment before event \(segment)", offset: 0)
    }
    return try ListState(compact: payload, ids: dictionary, aliases: aliases)
  }

  /// The segment and dictionary size a 2.0 event frame was written with.
  package static func frameSegment(_ payload: UnsafeRawBufferPointer) throws(CodecError) -> (
    segment: UInt64, dictBase: Int
  ) {
    let head = try FrameHeaderFields(payload)
    return (head.segment, head.dictBase)
  }
}

extension EventDecoder {
  /// A 1.0 decoder numbers the ids it meets from `ids` on (the ids of the state the fold
  /// starts from): its ring's ids are found (or defined) there first, unless `ids`
  /// continues its own numbering.
  package mutating func adopt(_ ids: inout IdSpace) {
    if !(dictionary.lineage != 0 && dictionary.lineage == ids.lineage
      && dictionary.count <= ids.count)
    {
      for k in ring.indices {
        ring[k] = dictionary.withText(Int(ring[k])) { ids.define(text: $0) }
      }
    }
    dictionary = ids
  }

}
