/// Events of 2.0 frames decoded for the fold rather than for a person: operations whose
/// identifiers are dictionary entry numbers, in flat buffers reused from chunk to chunk, so
/// that decoding the usual event allocates nothing and retains nothing.
///
/// Each operation is a record of words: its kind and flags, the dictionary's size before it
/// and the definitions it made (so the fold's copy of the dictionary, `FoldEntries`, follows
/// the decoder's), then its arguments. Events the fold has no compact form for (batches,
/// section edits, nested or field-carrying nodes, ...) are kept whole in `events`; `event(_:_:)`
/// turns any record back into the `Event` the decoder would have made, for a person or a test.
package struct FoldOps: Sendable {
  /// Where each operation's record starts in `words`.
  var starts: [Int32] = []
  /// Each operation's event number.
  package var seqs: [Int] = []
  /// Each operation's time (`noTime` when untimed).
  var times: [Int64] = []
  var words: [Int32] = []
  /// Titles and mark labels, by index.
  var strings: [String] = []
  var fieldSets: [[String: String]] = []
  /// Entries defined by the operations, in entry order.
  var definitions: [String] = []
  /// Events kept whole.
  var events: [Event] = []
  /// Dictionaries that a restart began, by index.
  var restarts: [IdDictionary] = []

  static let noTime = Int64.min

  package init() {}

  /// Operations held.
  package var count: Int { starts.count }

  package var isEmpty: Bool { starts.isEmpty }

  /// Empties the buffers, keeping their capacity unless one event made them outgrow a
  /// usual chunk (a large subtree, a burst of definitions): chunks in flight stay small.
  package mutating func removeAll() {
    let keep = words.count <= Self.keptWords && definitions.count <= Self.keptWords / 8
    starts.removeAll(keepingCapacity: keep)
    seqs.removeAll(keepingCapacity: keep)
    times.removeAll(keepingCapacity: keep)
    words.removeAll(keepingCapacity: keep)
    strings.removeAll(keepingCapacity: keep)
    fieldSets.removeAll(keepingCapacity: keep)
    definitions.removeAll(keepingCapacity: keep)
    events.removeAll(keepingCapacity: keep)
    restarts.removeAll()
  }

  /// Words a chunk keeps room for between uses (about 16 per event of a 4,096-event chunk).
  static let keptWords = 1 << 16

  /// Drops operations from `n` on (a frame decoded past the last event wanted).
  mutating func truncate(to n: Int) {
    guard n < starts.count else { return }
    words.removeSubrange(Int(starts[n])...)
    starts.removeSubrange(n...)
    seqs.removeSubrange(n...)
    times.removeSubrange(n...)
  }

  // MARK: Records

  /// Record kinds: the 2.0 op codes for compact operations, and these (events below
  /// `restart`, records that only move the fold's dictionary on from it).
  enum Kind {
    /// An event kept whole: `events[word 4]`.
    static let whole: Int32 = 0x100
    /// A dictionary restart before the next event: `restarts[word 4]`.
    static let restart: Int32 = 0x200
    /// `deselect` of every selected item.
    static let deselectAll: Int32 = 0x101
    /// An event before the first one wanted: only its definitions count.
    static let skip: Int32 = 0x201
    /// Where a frame ended (`frameEnd(_:)`); flag 1: a dictionary frame.
    static let frameEnd: Int32 = 0x202
  }

  /// Whether operation `i` is an event (not a restart, a skipped event or a frame's end).
  @inline(__always) package func isEvent(_ i: Int) -> Bool {
    kind(i) < Kind.restart
  }

  /// Records that a frame ended after event `lastSeq`: the next one starts at `offset`, and
  /// the decoder stands in segment `segment` with `dictionary` entries.
  package mutating func endFrame(
    lastSeq: Int, offset: UInt64, segment: UInt64, dictionary: Int, restarted: Bool
  ) {
    begin(
      kind: Kind.frameEnd, flags: restarted ? 1 : 0, seq: lastSeq, time: nil,
      dictionary: dictionary)
    for v in [UInt64(max(lastSeq, 0)), offset, segment] {
      words.append(Int32(truncatingIfNeeded: v))
      words.append(Int32(truncatingIfNeeded: v >> 32))
    }
  }

  /// Where the frame of record `i` ended, if `i` is a frame's end: its last event, the
  /// next frame's offset, the segment and the dictionary's size then, whether it was a
  /// dictionary frame.
  package func frameEnd(_ i: Int) -> (
    lastSeq: Int, offset: UInt64, segment: UInt64, dictionaryCount: Int, restarted: Bool
  )? {
    guard kind(i) == Kind.frameEnd else { return nil }
    func wide(_ k: Int) -> UInt64 {
      UInt64(UInt32(bitPattern: word(i, k))) | UInt64(UInt32(bitPattern: word(i, k &+ 1))) << 32
    }
    return (
      Int(wide(Self.header)), wide(Self.header &+ 2), wide(Self.header &+ 4), Int(word(i, 1)),
      flags(i) & 1 != 0
    )
  }

  /// Words of a record before its arguments: kind | flags << 16, dictionary size before,
  /// first definition, definitions.
  static let header = 4

  @inline(__always) func kind(_ i: Int) -> Int32 { words[Int(starts[i])] & 0xFFFF }
  @inline(__always) func flags(_ i: Int) -> Int32 { words[Int(starts[i])] >> 16 }
  @inline(__always) func word(_ i: Int, _ k: Int) -> Int32 { words[Int(starts[i]) &+ k] }

  mutating func begin(kind: Int32, flags: Int32 = 0, seq: Int, time: Int64?, dictionary: Int) {
    starts.append(Int32(truncatingIfNeeded: words.count))
    seqs.append(seq)
    times.append(time ?? Self.noTime)
    words.append(kind | flags << 16)
    words.append(Int32(truncatingIfNeeded: dictionary))
    words.append(Int32(truncatingIfNeeded: definitions.count))
    words.append(0)
  }

  /// Records the definitions an operation made: the decoder's entries `from..<to`.
  mutating func defined(_ dictionary: inout IdDictionary, from: Int) throws(CodecError) {
    let n = dictionary.count &- from
    guard n > 0, let last = starts.last else { return }
    for e in from..<dictionary.count { definitions.append(try dictionary.entry(e)) }
    words[Int(last) &+ 3] = Int32(truncatingIfNeeded: n)
  }
}

// MARK: - Decoding into operations

extension EventDecoder {
  /// Decodes the events `from...through` of a 2.0 event frame numbered `firstSeq...` into
  /// `ops`, as `decodeFrame` decodes them into events (the frame's definitions are read to
  /// its end either way). A frame that needs entries this decoder lacks is `.gap`, and
  /// nothing is added.
  package mutating func decodeFrame(
    _ payload: UnsafeRawBufferPointer, firstSeq: Int, count: Int, from: Int, through: Int,
    into ops: inout FoldOps
  ) throws(CodecError) -> FrameOutcome {
    let head = try FrameHeaderFields(payload)
    guard head.segment == segment, head.dictBase <= dictionary.count else { return .gap }
    dictionary.truncate(to: head.dictBase)
    var source = FrameSource(head.columns)
    swap(&source.dictionary, &dictionary)
    defer { swap(&source.dictionary, &dictionary) }
    let mark = ops.count
    var stoppedAt: Int?
    for i in 0..<count {
      let seq = firstSeq + i
      if seq > through {
        stoppedAt = seq
        break
      }
      let before = source.dictionary.count
      do throws(CodecError) {
        try OpWalk.decode(&source, seq: seq, into: &ops)
        try ops.defined(&source.dictionary, from: before)
      } catch {
        ops.truncate(to: mark)
        var located = error
        located.event = seq
        throw located
      }
      // Events before `from` only define entries (the fold's dictionary needs those).
      if seq < from { ops.words[Int(ops.starts[ops.count &- 1])] = FoldOps.Kind.skip }
    }
    if let stoppedAt {
      while source.definitions.remaining > 0 {
        source.dictionary.append(try source.definition())
      }
      expected = firstSeq + count
      return .stopped(at: stoppedAt)
    }
    if var problem = source.leftover {
      ops.truncate(to: mark)
      problem.event = firstSeq + count - 1
      throw problem
    }
    expected = firstSeq + count
    return .done
  }

  /// Applies a dictionary restart as `restart(_:seq:)` does and records it in `ops`, so the
  /// fold's copy of the dictionary restarts there too.
  package mutating func restart(
    _ payload: UnsafeRawBufferPointer, seq: Int, into ops: inout FoldOps
  ) throws(CodecError) {
    try restart(payload, seq: seq)
    ops.begin(kind: FoldOps.Kind.restart, seq: seq, time: nil, dictionary: 0)
    ops.words.append(Int32(truncatingIfNeeded: ops.restarts.count))
    ops.restarts.append(dictionary)
  }
}

/// Reads one event from a frame's columns into a `FoldOps` record: the compact form for the
/// operations the fold applies on entries, the whole `Event` for the rest.
enum OpWalk {
  static func decode(_ s: inout FrameSource, seq: Int, into ops: inout FoldOps)
    throws(CodecError)
  {
    let tag = try s.tag()
    let time: Int64? = tag & 0x80 != 0 ? try s.time(nested: false) : nil
    let code = tag & 0x7F
    let base = s.dictionary.count
    switch code {
    case EventCodes.expand, EventCodes.collapse, EventCodes.select, EventCodes.deleteItems,
      EventCodes.reloadItems, EventCodes.reconfigureItems:
      ops.begin(kind: Int32(code), seq: seq, time: time, dictionary: base)
      try entries(&s, &ops)
    case EventCodes.deselect:
      let b = try s.flag()
      guard b <= 1 else { throw s.fail("bad deselect flag \(b)") }
      if b == 0 {
        ops.begin(kind: FoldOps.Kind.deselectAll, seq: seq, time: time, dictionary: base)
      } else {
        ops.begin(kind: Int32(code), seq: seq, time: time, dictionary: base)
        try entries(&s, &ops)
      }
    case EventCodes.moveItem:
      let id = try s.entry()
      let b = try s.flag()
      guard b <= 1 else { throw s.fail("bad anchor kind \(b)") }
      let anchor = try s.entry()
      ops.begin(kind: Int32(code), flags: Int32(b), seq: seq, time: time, dictionary: base)
      ops.words.append(Int32(truncatingIfNeeded: id))
      ops.words.append(Int32(truncatingIfNeeded: anchor))
    case EventCodes.insertItems:
      let b = try s.flag()
      guard b <= 1 else { throw s.fail("bad anchor kind \(b)") }
      let anchor = try s.entry()
      ops.begin(kind: Int32(code), flags: Int32(b), seq: seq, time: time, dictionary: base)
      ops.words.append(Int32(truncatingIfNeeded: anchor))
      try nodes(&s, &ops)
    case EventCodes.appendItems:
      let flags = try s.flag()
      guard flags <= 3 else { throw s.fail("bad appendItems flags \(flags)") }
      let section = flags & 1 != 0 ? try s.entry() : -1
      let parent = flags & 2 != 0 ? try s.entry() : -1
      ops.begin(kind: Int32(code), flags: Int32(flags), seq: seq, time: time, dictionary: base)
      ops.words.append(Int32(truncatingIfNeeded: section))
      ops.words.append(Int32(truncatingIfNeeded: parent))
      try nodes(&s, &ops)
    case EventCodes.update:
      let flags = try s.flag()
      guard flags <= 3 else { throw s.fail("bad update flags \(flags)") }
      let item = try s.entry()
      let title = flags & 1 != 0 ? try s.string() : nil
      let fields = flags & 2 != 0 ? try EventWalk.decodeFields(&s) : nil
      ops.begin(kind: Int32(code), seq: seq, time: time, dictionary: base)
      ops.words.append(Int32(truncatingIfNeeded: item))
      ops.words.append(ops.add(title))
      ops.words.append(ops.add(fields))
    case EventCodes.mark:
      let label = try s.string()
      ops.begin(kind: Int32(code), seq: seq, time: time, dictionary: base)
      ops.words.append(ops.add(label))
    default:
      let event = try EventWalk.decode(&s, tag: tag, time: time)
      ops.begin(kind: FoldOps.Kind.whole, seq: seq, time: time, dictionary: base)
      ops.words.append(Int32(truncatingIfNeeded: ops.events.count))
      ops.events.append(event)
    }
  }

  /// A count, then that many entries.
  private static func entries(_ s: inout FrameSource, _ ops: inout FoldOps) throws(CodecError) {
    let n = try s.count(.ids)
    ops.words.append(Int32(truncatingIfNeeded: n))
    for _ in 0..<n { ops.words.append(Int32(truncatingIfNeeded: try s.entry())) }
  }

  /// A node list with its subtrees as a count of nodes, then each node in pre-order: its
  /// entry, its level | expanded << 16, its title and fields (-1: none).
  private static func nodes(_ s: inout FrameSource, _ ops: inout FoldOps) throws(CodecError) {
    let countAt = ops.words.count
    ops.words.append(0)
    let n = try s.count(.nodes)
    // Nodes left in each open list, innermost last (its depth is the level).
    var remaining: [Int] = [n]
    var total = 0
    while let top = remaining.last {
      if top == 0 {
        remaining.removeLast()
        continue
      }
      remaining[remaining.count &- 1] = top &- 1
      let flags = try s.flag()
      guard flags <= 15 else { throw s.fail("bad item flags \(flags)") }
      let e = try s.entry()
      let title = flags & 1 != 0 ? try s.string() : nil
      let fields = flags & 2 != 0 ? try EventWalk.decodeFields(&s) : nil
      ops.words.append(Int32(truncatingIfNeeded: e))
      ops.words.append(Int32(remaining.count &- 1) | (flags & 4 != 0 ? 1 << 16 : 0))
      ops.words.append(ops.add(title))
      ops.words.append(ops.add(fields))
      total &+= 1
      if flags & 8 != 0 {
        guard remaining.count < CodecLimits.maxDepth else {
          throw s.fail("items nested too deeply")
        }
        remaining.append(try s.count(.nodes))
      }
    }
    ops.words[countAt] = Int32(truncatingIfNeeded: total)
  }
}

extension FoldOps {
  /// Index of a new string (-1 for nil).
  mutating func add(_ s: String?) -> Int32 {
    guard let s else { return -1 }
    strings.append(s)
    return Int32(truncatingIfNeeded: strings.count &- 1)
  }

  mutating func add(_ f: [String: String]?) -> Int32 {
    guard let f else { return -1 }
    fieldSets.append(f)
    return Int32(truncatingIfNeeded: fieldSets.count &- 1)
  }

  @inline(__always) func string(_ k: Int32) -> String? { k < 0 ? nil : strings[Int(k)] }
  @inline(__always) func fields(_ k: Int32) -> [String: String]? {
    k < 0 ? nil : fieldSets[Int(k)]
  }
}

// MARK: - The fold's copy of the dictionary

/// The dictionary as the fold sees it: the decoder's as it stood when the fold began, kept
/// in step through each operation's definitions and restarts. Gives an entry's text when
/// the fold meets an entry it has no handle for (once per entry and state).
///
/// Entry numbers mean the same ids only within one dictionary's history, so each fold (and
/// each restart) draws a random `lineage`: a state keeps its handles by entry only for the
/// lineage that made them (`Forest.entryHandles`).
package struct FoldEntries: Sendable {
  package internal(set) var dictionary: IdDictionary
  package internal(set) var lineage: UInt64

  /// The fold's copy of `dictionary`, in its lineage (states decoded from a checkpoint
  /// with it already know their entries).
  package init(_ dictionary: IdDictionary) {
    self.dictionary = dictionary
    lineage = self.dictionary.ensureLineage()
  }

  static func newLineage() -> UInt64 { UInt64.random(in: 1...UInt64.max) }

  /// Brings the dictionary to where it stood after operation `i`'s definitions.
  mutating func sync(_ ops: FoldOps, _ i: Int) throws(CodecError) {
    let kind = ops.kind(i)
    if kind == FoldOps.Kind.restart {
      dictionary = ops.restarts[Int(ops.word(i, FoldOps.header))]
      lineage = Self.newLineage()
      return
    }
    let before = Int(ops.word(i, 1))
    if dictionary.count > before { dictionary.truncate(to: before) }
    guard dictionary.count == before else {
      throw CodecError(
        "event needs \(before) dictionary entries, the fold has \(dictionary.count)", offset: 0)
    }
    let first = Int(ops.word(i, 2))
    let n = Int(ops.word(i, 3))
    for k in first..<first &+ n { dictionary.append(ops.definitions[k]) }
  }

  /// Entries `from..<count` (an index builder copies them).
  package mutating func entries(from start: Int) throws(CodecError) -> [String] {
    try dictionary.entries(from: start)
  }

  @inline(__always) mutating func text(_ e: Int32) throws(CodecError) -> String {
    guard e >= 0, Int(e) < dictionary.count else {
      throw CodecError("reference to entry \(e) of \(dictionary.count)", offset: 0)
    }
    return try dictionary.entry(Int(e))
  }
}

// MARK: - Back to events

extension FoldOps {
  /// The event operation `i` holds, its ids read from `entries` (synced past `i`).
  package func event(_ i: Int, _ entries: inout FoldEntries) throws(CodecError) -> Event {
    let kind = kind(i)
    let t = times[i]
    let time: Int64? = t == Self.noTime ? nil : t
    var w = Int(starts[i]) &+ Self.header
    func next() -> Int32 {
      w &+= 1
      return words[w &- 1]
    }
    func ids() throws(CodecError) -> [String] {
      let n = Int(next())
      var out: [String] = []
      out.reserveCapacity(n)
      for _ in 0..<n { out.append(try entries.text(next())) }
      return out
    }
    func anchor(_ e: Int32) throws(CodecError) -> Anchor {
      let id = try entries.text(e)
      return flags(i) & 1 != 0 ? .after(id) : .before(id)
    }
    let op: ListOperation
    switch kind {
    case FoldOps.Kind.whole: return events[Int(next())]
    case FoldOps.Kind.deselectAll: op = .deselect(nil)
    case Int32(EventCodes.expand): op = .expand(try ids())
    case Int32(EventCodes.collapse): op = .collapse(try ids())
    case Int32(EventCodes.select): op = .select(try ids())
    case Int32(EventCodes.deselect): op = .deselect(try ids())
    case Int32(EventCodes.deleteItems): op = .deleteItems(try ids())
    case Int32(EventCodes.reloadItems): op = .reloadItems(try ids())
    case Int32(EventCodes.reconfigureItems): op = .reconfigureItems(try ids())
    case Int32(EventCodes.moveItem):
      let id = try entries.text(next())
      op = .moveItem(id, try anchor(next()))
    case Int32(EventCodes.insertItems):
      let a = try anchor(next())
      op = .insertItems(try nodes(&w, &entries), a)
    case Int32(EventCodes.appendItems):
      let s = next()
      let p = next()
      op = .appendItems(
        try nodes(&w, &entries), section: s < 0 ? nil : try entries.text(s),
        parent: p < 0 ? nil : try entries.text(p))
    case Int32(EventCodes.update):
      let item = try entries.text(next())
      let title = string(next())
      op = .update(item: item, title: title, fields: fields(next()))
    case Int32(EventCodes.mark): op = .mark(string(next()) ?? "")
    default:
      throw CodecError("no event in a dictionary restart", offset: 0)
    }
    return Event(op, time: time)
  }

  /// The node list at word `w` as outline nodes, rebuilt bottom-up without recursion.
  func nodes(_ w: inout Int, _ entries: inout FoldEntries) throws(CodecError) -> [OutlineNode] {
    let n = Int(words[w])
    w &+= 1
    // Open lists, innermost last, with the node owning each list but the first.
    var lists: [[OutlineNode]] = [[]]
    var owners: [OutlineNode] = []
    func close(to level: Int) {
      while lists.count > level &+ 1 {
        let done = lists.removeLast()
        guard var owner = owners.popLast() else { return }
        owner.children = done
        lists[lists.count &- 1].append(owner)
      }
    }
    var pendingOwner = false
    for _ in 0..<n {
      let e = words[w]
      let level = Int(words[w &+ 1] & 0xFFFF)
      var node = OutlineNode(try entries.text(e))
      node.expanded = words[w &+ 1] >> 16 != 0
      node.title = string(words[w &+ 2])
      node.fields = fields(words[w &+ 3])
      w &+= 4
      if pendingOwner && level == lists.count {
        // The previous node owns this one: open its list.
        owners.append(lists[lists.count &- 1].removeLast())
        lists.append([])
      }
      close(to: level)
      lists[lists.count &- 1].append(node)
      pendingOwner = true
    }
    close(to: 0)
    return lists[0]
  }
}
