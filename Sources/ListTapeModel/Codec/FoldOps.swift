/// Events as the fold reads them: operation records whose identifiers are entry numbers,
/// in flat buffers reused from chunk to chunk, so that decoding and folding the usual event
/// allocates nothing, retains nothing and hashes no id.
///
/// A 2.0 frame decodes straight into records (`EventDecoder.decodeFrame(_:…into:)`); an
/// `Event` becomes records through a state's ids (`FoldOps.append(_:ids:)`), so the one
/// reducer (`ListState.apply(_:_:)`) folds both. `event(_:_:)` turns a record back into its
/// `Event` only where a person or a test reads it.
///
/// Every record is `[kind | flags << 16, length in words, arguments…]`; a batch's arguments
/// are its count and then its events' records. Top-level records also carry their event
/// number and time, the dictionary's size before them and the definitions they made (in
/// stored form), so the state's ids follow the decoder's dictionary entry for entry.
package struct FoldOps: Sendable {
  /// Where each top-level record starts in `words`.
  var starts: [Int32] = []
  /// Each top-level record's event number.
  package var seqs: [Int] = []
  /// Each top-level record's time, dictionary and definitions: one append per record.
  var heads: [Head] = []

  /// What a top-level record carries besides its words.
  struct Head {
    /// The record's time (`noTime` when untimed).
    var time: Int64
    /// The dictionary's size before the record (-1: the record came from an `Event` and
    /// defines through the state's ids instead).
    var dictBefore: Int32
    /// The record's definitions: entries `defFirst ..< defFirst + defCount` of
    /// `definitions`.
    var defFirst: Int32
    var defCount: Int32
  }
  var words: [Int32] = []
  /// Titles and fields (`ItemText` blobs), mark labels and the text of ids an `Event`
  /// named that the state does not know, by index.
  var texts: [UInt8] = []
  var textEnds: [UInt32] = []
  /// Stored forms of the definitions, in entry order.
  var definitions = IdSpace()
  /// Dictionaries that a restart began, with their repeated entries and the entries the
  /// dictionary before it map to (when the decoder had it at hand), by index.
  var restarts: [(dictionary: IdSpace, aliases: DefinitionAliases, from: Renumbering?)] = []
  /// Frames that ended, by index (`frameEnd` records).
  var frameEnds: [FrameEndRecord] = []
  /// The bytes of the site models `frameEnds` hold (each its own copy once the decoder
  /// moves on), counted in `heldBytes`.
  private var siteModelBytes = 0

  static let noTime = Int64.min

  package init() {}

  /// Top-level records held.
  package var count: Int { starts.count }

  package var isEmpty: Bool { starts.isEmpty }

  /// About how many bytes the records hold (words, texts, definitions and the per-record
  /// columns), so that a reader can cut chunks and bound its queue by size: a few events
  /// of millions of items each are as large as millions of small ones.
  package var heldBytes: Int {
    words.count &* 4 &+ texts.count &+ textEnds.count &* 4 &+ definitions.bytes.count
      &+ definitions.count &* 4 &+ starts.count &* (4 &+ 8 &+ MemoryLayout<Head>.stride)
      &+ siteModelBytes
  }

  /// Empties the buffers, keeping their capacity unless one event made them outgrow a
  /// usual chunk (a large subtree, a burst of definitions): chunks in flight stay small.
  package mutating func removeAll() {
    let keep = words.count <= Self.keptWords && definitions.bytes.count <= Self.keptWords * 4
    starts.removeAll(keepingCapacity: keep)
    seqs.removeAll(keepingCapacity: keep)
    heads.removeAll(keepingCapacity: keep)
    words.removeAll(keepingCapacity: keep)
    texts.removeAll(keepingCapacity: keep)
    textEnds.removeAll(keepingCapacity: keep)
    definitions.removeAll()
    restarts.removeAll()
    frameEnds.removeAll()
    siteModelBytes = 0
    madeEvents.removeAll()
  }

  /// Words a chunk keeps room for between uses (about 16 per event of a 4,096-event chunk).
  static let keptWords = 1 << 16

  /// Drops top-level records from `n` on (a frame that failed to decode).
  mutating func truncate(to n: Int) {
    while starts.count > n { dropLast(textsFrom: textEnds.count) }
  }

  // MARK: Kinds

  /// Record kinds: the 2.0 op codes (`EventCodes`) for events, and these.
  enum Kind {
    /// `deselect` of every selected item.
    static let deselectAll: Int32 = 0x101
    /// A dictionary restart before the next event: `restarts[word 2]`.
    static let restart: Int32 = 0x200
    /// An event before the first one wanted: only its definitions count.
    static let skip: Int32 = 0x201
    /// Where a frame ended: `frameEnds[word 2]`.
    static let frameEnd: Int32 = 0x202
  }

  /// Whether top-level record `i` is an event (not a restart, a skipped event or a frame's
  /// end).
  @inline(__always) package func isEvent(_ i: Int) -> Bool { kind(i) < Kind.restart }

  /// Whether top-level record `i` restarts the dictionary (the state's ids are renumbered).
  @inline(__always) package func isRestart(_ i: Int) -> Bool { kind(i) == Kind.restart }

  @inline(__always) func kind(_ i: Int) -> Int32 { words[Int(starts[i])] & 0xFFFF }
  @inline(__always) func flags(_ i: Int) -> Int32 { words[Int(starts[i])] >> 16 }
  /// Word `k` of top-level record `i` (0: kind, 1: length, 2…: arguments).
  @inline(__always) func word(_ i: Int, _ k: Int) -> Int32 { words[Int(starts[i]) &+ k] }

  /// The kind, flags and length of the record at word `w`.
  @inline(__always) func kind(atWord w: Int) -> Int32 { words[w] & 0xFFFF }
  @inline(__always) func flags(atWord w: Int) -> Int32 { words[w] >> 16 }
  @inline(__always) func length(atWord w: Int) -> Int { Int(words[w &+ 1]) }

  /// Words of a record before its arguments.
  static let header = 2

  /// A flag of a record inside a batch whose event has a time of its own: the record's
  /// last two words hold it.
  static let timed: Int32 = 0x4000

  /// A flag of a record whose event has a site: the word before its time (or its last word)
  /// holds it, an entry or an unknown entry's text (`name(_:_:)`). The fold never reads it.
  static let sited: Int32 = 0x2000

  /// The site word of the record at word `w`, nil when its event has no site.
  @inline(__always) func siteWord(atWord w: Int) -> Int32? {
    let f = flags(atWord: w)
    guard f & Self.sited != 0 else { return nil }
    return words[w &+ length(atWord: w) &- (f & Self.timed != 0 ? 3 : 1)]
  }

  /// The time of the record at word `w` inside a batch, nil when it has none.
  func nestedTime(atWord w: Int) -> Int64? {
    guard flags(atWord: w) & Self.timed != 0 else { return nil }
    let end = w &+ length(atWord: w)
    return Int64(UInt32(bitPattern: words[end &- 2])) | Int64(words[end &- 1]) << 32
  }

  /// Ends the record started at word `w`, with its site and (inside a batch) its own time
  /// when it has them.
  mutating func end(_ w: Int, site: Int32?, time: Int64?) {
    if let site {
      words[w] |= Self.sited << 16
      words.append(site)
    }
    end(w, time: time)
  }

  /// Ends the record started at word `w`, with its own time when it has one (inside a
  /// batch).
  mutating func end(_ w: Int, time: Int64?) {
    if let time {
      words[w] |= Self.timed << 16
      words.append(Int32(truncatingIfNeeded: time))
      words.append(Int32(truncatingIfNeeded: time >> 32))
    }
    end(w)
  }

  /// Events made already for records the fold swapped the state under (`madeEvent`).
  var madeEvents: [Int: Event] = [:]

  /// Keeps the event of top-level record `i` made now, with the ids as they stand, for
  /// `event(_:_:)` to give back after the fold swaps the state (a recovery point).
  package mutating func keepEvent(_ i: Int, _ ids: IdSpace) { madeEvents[i] = event(i, ids) }

  /// Whether record `i` was kept (`keepEvent`): its entries number the ids of the state the
  /// fold swapped out, not of the one it hands on, so a reader by entry names them through
  /// the former's ids.
  package func isKept(_ i: Int) -> Bool { !madeEvents.isEmpty && madeEvents[i] != nil }

  /// Record `i`'s time, nil when untimed.
  @inline(__always) package func time(_ i: Int) -> Int64? {
    let t = heads[i].time
    return t == Self.noTime ? nil : t
  }

  // MARK: Writing records

  /// Starts top-level record number `seq` (its record begins at the next word) with the
  /// dictionary at `dictionary` entries (-1: records made from an `Event`).
  mutating func top(seq: Int, time: Int64?, dictionary: Int) {
    starts.append(Int32(truncatingIfNeeded: words.count))
    seqs.append(seq)
    heads.append(
      Head(
        time: time ?? Self.noTime, dictBefore: Int32(truncatingIfNeeded: dictionary),
        defFirst: Int32(truncatingIfNeeded: definitions.count), defCount: 0))
  }

  /// Drops the last top-level record (an event that names a lost entry).
  mutating func dropLast(textsFrom textMark: Int) {
    words.removeSubrange(Int(starts[starts.count &- 1])...)
    let lo = textMark == 0 ? 0 : Int(textEnds[textMark &- 1])
    texts.removeSubrange(lo...)
    textEnds.removeSubrange(textMark...)
    let firstDefinition = Int(heads[heads.count &- 1].defFirst)
    if firstDefinition < definitions.count { definitions.truncate(to: firstDefinition) }
    starts.removeLast()
    seqs.removeLast()
    heads.removeLast()
  }

  /// Turns the last top-level record into a `skip` record: its definitions stay, its
  /// operation goes (an event that names an entry a salvaged log lost).
  mutating func unrecord(textsFrom textMark: Int) {
    let w = Int(starts[starts.count &- 1])
    words.removeSubrange(w...)
    end(begin(kind: Kind.skip))
    let lo = textMark == 0 ? 0 : Int(textEnds[textMark &- 1])
    texts.removeSubrange(lo...)
    textEnds.removeSubrange(textMark...)
  }

  /// Starts top-level record `kind` with no arguments written yet; returns where it starts.
  @discardableResult
  mutating func beginTop(
    kind: Int32, flags: Int32 = 0, seq: Int, time: Int64?, dictionary: Int
  ) -> Int {
    top(seq: seq, time: time, dictionary: dictionary)
    return begin(kind: kind, flags: flags)
  }

  /// Starts a record (inside a batch, or after `beginTop`'s bookkeeping).
  @inline(__always) mutating func begin(kind: Int32, flags: Int32 = 0) -> Int {
    let w = words.count
    words.append(kind | flags << 16)
    words.append(0)
    return w
  }

  /// Ends the record started at word `w`.
  @inline(__always) mutating func end(_ w: Int) {
    words[w &+ 1] = Int32(truncatingIfNeeded: words.count &- w)
  }

  /// Gives the record at word `w` (the last one written, already ended) its site and its
  /// own time.
  mutating func reopen(_ w: Int, site: Int32?, time: Int64?) { end(w, site: site, time: time) }

  /// Adds a text (a title and fields blob, a label, an unknown id) and returns its index.
  mutating func addText(_ bytes: UnsafeRawBufferPointer) -> Int32 {
    texts.append(contentsOf: bytes)
    return endText()
  }

  /// Ends the text appended to `texts` since the last one ended; returns its index.
  mutating func endText() -> Int32 {
    textEnds.append(UInt32(truncatingIfNeeded: texts.count))
    return Int32(truncatingIfNeeded: textEnds.count &- 1)
  }

  /// Adds `s` as a text.
  mutating func addText(_ s: String) -> Int32 {
    var s = s
    return s.withUTF8 { addText(UnsafeRawBufferPointer($0)) }
  }

  /// Adds an item's title and fields as one blob; -1 when both are nil.
  mutating func addContent(title: String?, fields: [String: String]?) -> Int32 {
    guard title != nil || fields != nil else { return -1 }
    ItemText.encode(title: title, fields: fields, into: &texts)
    return endText()
  }

  /// Calls `body` with text `k`.
  @inline(__always) func withText<R>(_ k: Int32, _ body: (UnsafeRawBufferPointer) -> R) -> R {
    let lo = k == 0 ? 0 : Int(textEnds[Int(k) &- 1])
    let hi = Int(textEnds[Int(k)])
    return texts.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[lo..<hi])) }
  }

  /// Text `k` as a string.
  func text(_ k: Int32) -> String { withText(k) { ItemText.string($0) } }

  /// Records before event `seq` that entries `range` of `dictionary` are holes (a salvaged
  /// log lost their definitions), so that a state following the records numbers the
  /// entries after them as the decoder does.
  mutating func holes(_ dictionary: IdSpace, _ range: Range<Int>, seq: Int) {
    guard !range.isEmpty else { return }
    end(beginTop(kind: Kind.skip, seq: seq, time: nil, dictionary: range.lowerBound))
    defined(dictionary, range)
  }

  /// Records that the top-level record being written defined entries `range` of
  /// `dictionary` (the decoder's).
  mutating func defined(_ dictionary: IdSpace, _ range: Range<Int>) {
    guard !range.isEmpty, !heads.isEmpty else { return }
    definitions.append(from: dictionary, range)
    heads[heads.count &- 1].defCount = Int32(truncatingIfNeeded: range.count)
  }

  // MARK: Frames and restarts

  /// Records that a frame ended after event `lastSeq`: the next one starts at `offset`, and
  /// the decoder stands in segment `segment` with `dictionary` entries.
  package mutating func endFrame(
    lastSeq: Int, offset: UInt64, segment: UInt64, dictionary: Int, restarted: Bool,
    aliasesFree: Bool, sites: SiteSync? = nil
  ) {
    let w = beginTop(kind: Kind.frameEnd, seq: lastSeq, time: nil, dictionary: dictionary)
    words.append(Int32(truncatingIfNeeded: frameEnds.count))
    end(w)
    siteModelBytes &+= sites?.model.heldBytes ?? 0
    frameEnds.append(
      FrameEndRecord(
        lastSeq: max(lastSeq, 0), offset: offset, segment: segment, dictionaryCount: dictionary,
        restarted: restarted, aliasesFree: aliasesFree, sites: sites))
  }

  /// Whether top-level record `i` is a frame's end: asked first, as `frameEnd(_:)` copies
  /// out its result's 200 bytes even when it is nil.
  package func isFrameEnd(_ i: Int) -> Bool { kind(i) == Kind.frameEnd }

  /// Where the frame of record `i` ended, if `i` is a frame's end.
  package func frameEnd(_ i: Int) -> FrameEndRecord? {
    guard kind(i) == Kind.frameEnd else { return nil }
    return frameEnds[Int(word(i, Self.header))]
  }

  /// A restart record's flag: the log lost the restart itself (a salvaged log: the
  /// dictionary is holes, and the state after it cannot be the recorded one).
  static let lostRestart: Int32 = 1
  /// A restart record's flag: the log lost events before it (a salvaged log), so a state
  /// folded to it may hold ids the restart does not list: they go.
  static let afterGaps: Int32 = 2

  /// Records a dictionary restart (`dictionary`, the new one) before event `seq` (`flags`:
  /// `lostRestart`, `afterGaps`), with the dictionary before it mapped into it when known.
  mutating func restart(
    _ dictionary: IdSpace, aliases: DefinitionAliases, seq: Int, flags: Int32 = 0,
    from previous: Renumbering? = nil
  ) {
    // Two dictionaries before the same event (only a hostile log has them): the fold goes
    // on with the last, as a seek from the checkpoint after them does, and never renumbers
    // its state through the first (which need not list the state's ids).
    var i = count &- 1
    while i >= 0 && kind(i) == Kind.frameEnd { i &-= 1 }
    if i >= 0 && kind(i) == Kind.restart && seqs[i] == seq {
      restarts[Int(word(i, Self.header))] = (dictionary, aliases, nil)
      let kept = self.flags(i) & Self.afterGaps
      words[Int(starts[i])] = Kind.restart | (flags | kept) << 16
      return
    }
    let w = beginTop(kind: Kind.restart, flags: flags, seq: seq, time: nil, dictionary: 0)
    words.append(Int32(truncatingIfNeeded: restarts.count))
    end(w)
    restarts.append((dictionary, aliases, previous))
  }
}

/// How the entries of a dictionary before a restart map into the restart's: what a state
/// numbered by the old one needs to renumber without comparing or hashing its ids.
struct Renumbering {
  /// The old dictionary's lineage: only a state numbered by it may use `entries`.
  var lineage: UInt64
  /// The restart's entry for each old entry (-1: the restart does not list its id).
  var entries: [Int32]
}

/// Where a frame ended, as a fold hears of it (`FoldOps.frameEnd`).
package struct FrameEndRecord: Sendable, Equatable {
  package var lastSeq: Int
  package var offset: UInt64
  package var segment: UInt64
  package var dictionaryCount: Int
  package var restarted: Bool
  /// Whether no definition of the segment so far repeats an earlier entry's id.
  package var aliasesFree: Bool
  /// The site model as the frame left it, when the reader's is the writer's (layout 3).
  package var sites: SiteSync?
}

// MARK: - Decoding frames into records

/// What reading one event's records came to.
enum OpOutcome {
  case decoded
  /// The event names an entry whose definition was lost (a salvaged log): no record.
  case lost
}

extension OpSource {
  /// The site of an event of op `code`, or nil when its definition was lost in a salvage
  /// gap: the event keeps its operation without the site, since a site never changes a
  /// state (an identifier's lost definition loses its event).
  @inline(__always) mutating func knownSite(code: UInt8) throws(CodecError) -> Int32? {
    guard let e = try site(code: code) else { return nil }
    return dictionary.isHole(Int(e)) ? nil : e
  }
}

/// Where `OpWalk` reads an event's parts: a 2.0 frame's columns (`FrameSource`) or a 1.0
/// record. Identifiers come as entries of the source's dictionary, defined there when new.
protocol OpSource: EventSource {
  /// The entry of the next identifier reference (defining it when new); sets
  /// `touchedHole` when it names an entry whose definition was lost.
  mutating func entryRef() throws(CodecError) -> Int32
  /// Entries defined so far: the next definition's number.
  var defined: Int { get }
  /// The dictionary entries are read from.
  var dictionary: IdSpace { get }
  /// Set when an identifier read since it was cleared is a hole in the dictionary.
  var touchedHole: Bool { get set }
  /// The entry of the site of an event whose op code is `code` (defining it when new); nil
  /// when the frame's sites cannot be read where it stands (layout 3, `SiteSync`).
  mutating func site(code: UInt8) throws(CodecError) -> Int32?
  /// The title and fields `flags` names (1: a title, 2: fields), added to `ops` as one
  /// blob (`ItemText`); -1 when it names neither.
  mutating func content(flags: UInt8, into ops: inout FoldOps) throws(CodecError) -> Int32
}

extension OpSource {
  mutating func content(flags: UInt8, into ops: inout FoldOps) throws(CodecError) -> Int32 {
    try stringContent(flags: flags, into: &ops)
  }

  /// `content` read as strings, the fields as a dictionary (a later duplicate key wins),
  /// and encoded.
  mutating func stringContent(flags: UInt8, into ops: inout FoldOps) throws(CodecError) -> Int32 {
    let title = flags & 1 != 0 ? try string() : nil
    let fields = flags & 2 != 0 ? try EventWalk.decodeFields(&self) : nil
    return ops.addContent(title: title, fields: fields)
  }
}

extension FrameSource: OpSource {
  /// Copied from the strings column (their lengths written minimal, as `ItemText.encode`
  /// writes them) when the keys are ASCII in strictly increasing order, which is the
  /// canonical order `ItemText.encode` gives; read again as strings otherwise. No `String`
  /// or dictionary per item on the common path.
  mutating func content(flags: UInt8, into ops: inout FoldOps) throws(CodecError) -> Int32 {
    guard flags & 3 != 0 else { return -1 }
    let mark = (strings: strings.offset, misc: misc.offset)
    let start = ops.texts.count
    ops.texts.append(flags & 3)
    /// The next string, checked as `string()` checks it, appended; its bytes.
    func copy(_ ops: inout FoldOps) throws(CodecError) -> UnsafeRawBufferPointer {
      let n = try strings.count()
      guard n <= CodecLimits.maxStringBytes else { throw strings.fail("string too long") }
      let at = strings.offset
      try strings.skipText(n)
      let bytes = UnsafeRawBufferPointer(rebasing: strings.base[at..<at &+ n])
      ByteSink.appendVarint(UInt64(n), to: &ops.texts)
      ops.texts.append(contentsOf: bytes)
      return bytes
    }
    if flags & 1 != 0 { _ = try copy(&ops) }
    var canonical = true
    if flags & 2 != 0 {
      let count = try self.count(.fields)
      ByteSink.appendVarint(UInt64(count), to: &ops.texts)
      var previous: UnsafeRawBufferPointer?
      for _ in 0..<count {
        let key = try copy(&ops)
        _ = try copy(&ops)
        guard canonical else { continue }
        if !ItemText.isASCII(key) {
          canonical = false
        } else if let p = previous, !p.lexicographicallyPrecedes(key) {
          canonical = false
        }
        previous = key
      }
    }
    if canonical { return ops.endText() }
    ops.texts.removeSubrange(start...)
    strings.offset = mark.strings
    misc.offset = mark.misc
    return try stringContent(flags: flags, into: &ops)
  }
}

/// Reads events into records, from a 2.0 frame's columns or a 1.0 record.
enum OpWalk {
  /// Reads one top-level event (with any batch inside it) numbered `seq` into `ops`.
  static func decode<S: OpSource>(_ s: inout S, seq: Int, into ops: inout FoldOps)
    throws(CodecError)
    -> OpOutcome
  {
    let tag = try s.tag()
    let time: Int64? = tag & EventCodes.timed != 0 ? try s.time(nested: false) : nil
    let textMark = ops.textEnds.count
    let before = s.defined
    s.touchedHole = false
    ops.top(seq: seq, time: time, dictionary: before)
    let site =
      tag & EventCodes.sited != 0 ? try s.knownSite(code: tag & EventCodes.codeMask) : nil
    try decodeRecord(&s, tag: tag, site: site, into: &ops)
    ops.defined(s.dictionary, before..<s.defined)
    if s.touchedHole {
      // What the event defined stays (later events name it): only its operation goes.
      ops.unrecord(textsFrom: textMark)
      return .lost
    }
    return .decoded
  }

  /// Reads an event whose tag was read (and time, at the top) as a record, batches with
  /// an explicit stack so that nesting never deepens the call stack.
  private static func decodeRecord<S: OpSource>(
    _ s: inout S, tag first: UInt8, site firstSite: Int32?, into ops: inout FoldOps
  )
    throws(CodecError)
  {
    // Open batch records: where each starts, how many events it still expects, its time
    // and site.
    var batches: [(start: Int, remaining: Int, time: Int64?, site: Int32?)] = []
    var tag = first
    var site = firstSite
    while true {
      let depth = batches.count
      var time: Int64?
      if depth > 0 {
        tag = try s.tag()
        if tag & EventCodes.timed != 0 { time = try s.time(nested: true) }
        site =
          tag & EventCodes.sited != 0 ? try s.knownSite(code: tag & EventCodes.codeMask) : nil
      }
      let code = tag & EventCodes.codeMask
      if code == EventCodes.batch {
        guard depth < CodecLimits.maxDepth else { throw s.fail("batches nested too deeply") }
        let w = ops.begin(kind: Int32(code))
        let n = try s.count(.events)
        ops.words.append(Int32(truncatingIfNeeded: n))
        if n > 0 {
          batches.append((w, n, time, site))
          continue
        }
        ops.end(w, site: site, time: time)
      } else {
        let w = ops.words.count
        try operation(code, depth: depth, &s, &ops)
        // The record ended at its arguments: its site and time go after them.
        if time != nil || site != nil { ops.reopen(w, site: site, time: time) }
      }
      // Close every batch the finished event completes.
      while let last = batches.last {
        batches[batches.count &- 1].remaining &-= 1
        guard last.remaining == 1 else { break }
        ops.end(last.start, site: last.site, time: last.time)
        batches.removeLast()
      }
      if batches.isEmpty { return }
    }
  }

  /// One operation's record (not a batch).
  private static func operation<S: OpSource>(
    _ code: UInt8, depth: Int, _ s: inout S, _ ops: inout FoldOps
  ) throws(CodecError) {
    @inline(__always) func entries() throws(CodecError) {
      let n = try s.count(.ids)
      ops.words.append(Int32(truncatingIfNeeded: n))
      for _ in 0..<n { ops.words.append(try s.entryRef()) }
    }
    func anchorSide() throws(CodecError) -> Int32 {
      let b = try s.flag()
      guard b <= 1 else { throw s.fail("bad anchor kind \(b)") }
      return Int32(b)
    }
    switch code {
    case EventCodes.appendSections, EventCodes.deleteSections, EventCodes.reloadSections,
      EventCodes.deleteItems, EventCodes.reloadItems, EventCodes.reconfigureItems,
      EventCodes.expand, EventCodes.collapse, EventCodes.select:
      let w = ops.begin(kind: Int32(code))
      try entries()
      ops.end(w)
    case EventCodes.insertSections:
      let w = ops.begin(kind: Int32(code))
      try entries()
      let side = try anchorSide()
      ops.words.append(try s.entryRef())
      ops.words[w] |= side << 16
      ops.end(w)
    case EventCodes.moveSection, EventCodes.moveItem:
      let w = ops.begin(kind: Int32(code))
      ops.words.append(try s.entryRef())
      let side = try anchorSide()
      ops.words.append(try s.entryRef())
      ops.words[w] |= side << 16
      ops.end(w)
    case EventCodes.appendItems:
      let flags = try s.flag()
      guard flags <= 3 else { throw s.fail("bad appendItems flags \(flags)") }
      let w = ops.begin(kind: Int32(code), flags: Int32(flags))
      ops.words.append(flags & 1 != 0 ? try s.entryRef() : -1)
      ops.words.append(flags & 2 != 0 ? try s.entryRef() : -1)
      try nodes(depth: depth, &s, &ops)
      ops.end(w)
    case EventCodes.insertItems:
      let side = try anchorSide()
      let w = ops.begin(kind: Int32(code), flags: side)
      ops.words.append(try s.entryRef())
      try nodes(depth: depth, &s, &ops)
      ops.end(w)
    case EventCodes.deleteAllItems:
      ops.end(ops.begin(kind: Int32(code)))
    case EventCodes.replaceChildren, EventCodes.applySectionSnapshot:
      let w = ops.begin(kind: Int32(code))
      ops.words.append(try s.entryRef())
      try nodes(depth: depth, &s, &ops)
      ops.end(w)
    case EventCodes.update:
      let flags = try s.flag()
      guard flags <= 3 else { throw s.fail("bad update flags \(flags)") }
      let w = ops.begin(kind: Int32(code))
      ops.words.append(try s.entryRef())
      ops.words.append(try s.content(flags: flags & 3, into: &ops))
      ops.end(w)
    case EventCodes.deselect:
      let b = try s.flag()
      guard b <= 1 else { throw s.fail("bad deselect flag \(b)") }
      if b == 0 {
        ops.end(ops.begin(kind: FoldOps.Kind.deselectAll))
      } else {
        let w = ops.begin(kind: Int32(code))
        try entries()
        ops.end(w)
      }
    case EventCodes.configure:
      let b = try s.flag()
      guard b <= 1 else { throw s.fail("bad configure flag \(b)") }
      ops.end(ops.begin(kind: Int32(code), flags: Int32(b)))
    case EventCodes.mark:
      let label = try s.string()
      let w = ops.begin(kind: Int32(code))
      ops.words.append(ops.addText(label))
      ops.end(w)
    default:
      throw s.fail("unknown op code \(code)")
    }
  }

  /// A node list with its subtrees as a count of nodes, then each node in pre-order: its
  /// entry, its level | expanded << 16, its text (-1: no title or fields).
  private static func nodes<S: OpSource>(depth: Int, _ s: inout S, _ ops: inout FoldOps)
    throws(CodecError)
  {
    guard depth < CodecLimits.maxDepth else { throw s.fail("items nested too deeply") }
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
      let e = try s.entryRef()
      let content = try s.content(flags: flags & 3, into: &ops)
      ops.words.append(e)
      ops.words.append(Int32(remaining.count &- 1) | (flags & 4 != 0 ? 1 << 16 : 0))
      ops.words.append(content)
      total &+= 1
      if flags & 8 != 0 {
        guard depth &+ remaining.count < CodecLimits.maxDepth else {
          throw s.fail("items nested too deeply")
        }
        remaining.append(try s.count(.nodes))
      }
    }
    ops.words[countAt] = Int32(truncatingIfNeeded: total)
  }
}

// MARK: - Events into records

extension FoldOps {
  /// Appends `event` as top-level record number `seq`, its ids read through `ids` (a
  /// state's): ids the event adds (new items and sections) become entries of `ids` when
  /// new; ids it only refers to and `ids` lacks are kept as text (an "unknown" entry,
  /// `-2 - text index`), so that the fault names them. - Complexity: O(ids in the event),
  /// one lookup each.
  package mutating func append(_ event: Event, seq: Int = 0, ids: inout IdSpace) {
    top(seq: seq, time: event.time, dictionary: -1)
    // Events still to write, innermost batch last, with the time and site each batch ends
    // with.
    var batches: [(start: Int, events: [Event], next: Int, time: Int64?, site: Int32?)] = []
    var current = event.operation
    // A nested event's own time (the top-level one's is `heads[i].time`).
    var time: Int64?
    // The event's site, kept as text (the fold never reads it).
    var site = event.site.map { addText($0) }.map { -2 &- $0 }
    while true {
      if case .batch(let events) = current {
        let b = begin(kind: Int32(EventCodes.batch))
        words.append(Int32(truncatingIfNeeded: events.count))
        if events.isEmpty {
          end(b, site: site, time: time)
        } else {
          batches.append((b, events, 0, time, site))
        }
      } else {
        let w = words.count
        operation(current, &ids)
        if time != nil || site != nil { reopen(w, site: site, time: time) }
      }
      while let top = batches.last, top.next == top.events.count {
        end(top.start, site: top.site, time: top.time)
        batches.removeLast()
      }
      guard let top = batches.last else { return }
      current = top.events[top.next].operation
      time = top.events[top.next].time
      site = top.events[top.next].site.map { addText($0) }.map { -2 &- $0 }
      batches[batches.count &- 1].next &+= 1
    }
  }

  /// Appends `event` as `append(_:seq:ids:)` does, recording the ids it adds to `ids` as
  /// its definitions, so that a state following these records (`ListState.apply(_:_:)`)
  /// numbers them as `ids` does (a 1.0 log read through the reader's own numbering).
  package mutating func append(_ event: Event, seq: Int, defining ids: inout IdSpace) {
    let before = ids.count
    append(event, seq: seq, ids: &ids)
    heads[heads.count &- 1].dictBefore = Int32(truncatingIfNeeded: before)
    defined(ids, before..<ids.count)
  }

  /// The entry of an id an event refers to, or an unknown entry holding its text.
  private mutating func reference(_ id: String, _ ids: inout IdSpace) -> Int32 {
    if let e = ids.entry(of: id) { return e }
    return -2 &- addText(id)
  }

  private mutating func operation(_ op: ListOperation, _ ids: inout IdSpace) {
    func references(_ list: [String]) {
      words.append(Int32(truncatingIfNeeded: list.count))
      for id in list { words.append(reference(id, &ids)) }
    }
    func definitions(_ list: [String]) {
      words.append(Int32(truncatingIfNeeded: list.count))
      for id in list { words.append(ids.define(id)) }
    }
    let code = Int32(EventCodes.code(of: op))
    switch op {
    case .appendSections(let l):
      let w = begin(kind: code)
      definitions(l)
      end(w)
    case .insertSections(let l, let a):
      let w = begin(kind: code, flags: a.isAfter ? 1 : 0)
      definitions(l)
      words.append(reference(a.id, &ids))
      end(w)
    case .deleteSections(let l), .reloadSections(let l), .deleteItems(let l),
      .reloadItems(let l), .reconfigureItems(let l), .expand(let l), .collapse(let l),
      .select(let l):
      let w = begin(kind: code)
      references(l)
      end(w)
    case .deselect(let l):
      guard let l else {
        end(begin(kind: Kind.deselectAll))
        return
      }
      let w = begin(kind: code)
      references(l)
      end(w)
    case .moveSection(let id, let a), .moveItem(let id, let a):
      let w = begin(kind: code, flags: a.isAfter ? 1 : 0)
      words.append(reference(id, &ids))
      words.append(reference(a.id, &ids))
      end(w)
    case .appendItems(let items, let section, let parent):
      let w = begin(kind: code, flags: (section == nil ? 0 : 1) | (parent == nil ? 0 : 2))
      words.append(section.map { reference($0, &ids) } ?? -1)
      words.append(parent.map { reference($0, &ids) } ?? -1)
      nodes(items, &ids)
      end(w)
    case .insertItems(let items, let a):
      let w = begin(kind: code, flags: a.isAfter ? 1 : 0)
      words.append(reference(a.id, &ids))
      nodes(items, &ids)
      end(w)
    case .deleteAllItems:
      end(begin(kind: code))
    case .replaceChildren(let id, let items), .applySectionSnapshot(let id, let items):
      let w = begin(kind: code)
      words.append(reference(id, &ids))
      nodes(items, &ids)
      end(w)
    case .update(let item, let title, let fields):
      let w = begin(kind: code)
      words.append(reference(item, &ids))
      words.append(addContent(title: title, fields: fields))
      end(w)
    case .configure(let multiple):
      end(begin(kind: code, flags: multiple ? 1 : 0))
    case .mark(let label):
      let w = begin(kind: code)
      words.append(addText(label))
      end(w)
    case .batch:
      break
    }
  }

  /// A node list as `OpWalk.nodes` writes it, its ids defined in `ids`.
  private mutating func nodes(_ list: [OutlineNode], _ ids: inout IdSpace) {
    let countAt = words.count
    words.append(0)
    var total = 0
    var stack: [(nodes: [OutlineNode], next: Int)] = [(list, 0)]
    while let top = stack.last {
      if top.next == top.nodes.count {
        stack.removeLast()
        continue
      }
      let n = top.nodes[top.next]
      stack[stack.count &- 1].next &+= 1
      words.append(ids.define(n.id))
      words.append(Int32(stack.count &- 1) | (n.expanded ? 1 << 16 : 0))
      words.append(addContent(title: n.title, fields: n.fields))
      total &+= 1
      if n.box != nil { stack.append((n.children, 0)) }
    }
    words[countAt] = Int32(truncatingIfNeeded: total)
  }
}

// MARK: - Back to events

extension FoldOps {
  /// The text of entry `e` of `ids`, or of an unknown entry's text.
  package func name(entry e: Int32, _ ids: IdSpace) -> String { name(e, ids) }

  /// Where the events of the batch record at word `w` end (before its site and its own
  /// time, if any).
  func batchEnd(atWord w: Int) -> Int {
    let f = flags(atWord: w)
    return w &+ length(atWord: w) &- (f & Self.timed != 0 ? 2 : 0) &- (f & Self.sited != 0 ? 1 : 0)
  }

  /// The text of entry `e` of `ids`, or of an unknown entry's text.
  func name(_ e: Int32, _ ids: IdSpace) -> String {
    if e >= 0 { return Int(e) < ids.count ? ids.text(Int(e)) : "?" }
    return text(-2 &- e)
  }

  /// The event top-level record `i` holds, its ids read from `ids` (synced past `i`).
  package func event(_ i: Int, _ ids: IdSpace) -> Event {
    if !madeEvents.isEmpty, let e = madeEvents[i] { return e }
    var names = Names(ids: ids)
    let w = Int(starts[i])
    return Event(operation(atWord: w, &names), time: time(i), site: site(atWord: w, &names))
  }

  /// The site of the record at word `w`, nil when its event has none.
  func site(atWord w: Int, _ names: inout Names) -> String? {
    siteWord(atWord: w).map { names.name($0, self) }
  }

  /// The site of top-level record `i` as an entry (or an unknown entry's text, for
  /// `name(entry:_:)`); nil when its event has none.
  package func siteEntry(_ i: Int) -> Int32? { siteWord(atWord: Int(starts[i])) }

  /// The site of top-level record `i`, its entry read from `ids`; nil when it has none.
  package func site(_ i: Int, _ ids: IdSpace) -> String? {
    if !madeEvents.isEmpty, let e = madeEvents[i] { return e.site }
    return siteWord(atWord: Int(starts[i])).map { name($0, ids) }
  }

  /// Ids made `String`s while one event is read back: a long id named again (an expand of
  /// one item many times over, a hostile log's megabyte ids) shares the first one's storage.
  struct Names {
    let ids: IdSpace
    /// The last long ids named, by entry.
    private var recent: [(entry: Int32, text: String)] = []

    init(ids: IdSpace) { self.ids = ids }

    mutating func name(_ e: Int32, _ ops: FoldOps) -> String {
      guard e >= 0, Int(e) < ids.count, ids.extent(Int(e)).count >= 64 else {
        return ops.name(e, ids)
      }
      if let hit = recent.first(where: { $0.entry == e }) { return hit.text }
      let text = ids.text(Int(e))
      if recent.count == 8 { recent.removeFirst() }
      recent.append((e, text))
      return text
    }
  }

  /// The operation of the record at word `w`, nested batches included (explicit stack).
  func operation(atWord start: Int, _ names: inout Names) -> ListOperation {
    guard kind(atWord: start) == Int32(EventCodes.batch) else {
      return simpleOperation(atWord: start, &names)
    }
    // Open batches: their events so far, their next record, where their events end, their
    // own time.
    var open: [(events: [Event], next: Int, end: Int, time: Int64?, site: String?)] = [
      ([], start &+ Self.header &+ 1, batchEnd(atWord: start), nil, nil)
    ]
    while true {
      let top = open.count &- 1
      if open[top].next >= open[top].end {
        let done = open.removeLast()
        let op = ListOperation.batch(done.events)
        if open.isEmpty { return op }
        open[open.count &- 1].events.append(Event(op, time: done.time, site: done.site))
        continue
      }
      let w = open[top].next
      open[top].next &+= length(atWord: w)
      if kind(atWord: w) == Int32(EventCodes.batch) {
        open.append(
          (
            [], w &+ Self.header &+ 1, batchEnd(atWord: w), nestedTime(atWord: w),
            site(atWord: w, &names)
          ))
      } else {
        open[top].events.append(
          Event(
            simpleOperation(atWord: w, &names), time: nestedTime(atWord: w),
            site: site(atWord: w, &names)))
      }
    }
  }

  private func simpleOperation(atWord start: Int, _ names: inout Names) -> ListOperation {
    let kind = kind(atWord: start)
    let after = flags(atWord: start) & 1 != 0
    var w = start &+ Self.header
    func next() -> Int32 {
      w &+= 1
      return words[w &- 1]
    }
    func list() -> [String] {
      let n = Int(next())
      var out: [String] = []
      out.reserveCapacity(n)
      for _ in 0..<n { out.append(names.name(next(), self)) }
      return out
    }
    func anchor(_ e: Int32) -> Anchor {
      after ? .after(names.name(e, self)) : .before(names.name(e, self))
    }
    switch kind {
    case Kind.deselectAll: return .deselect(nil)
    case Int32(EventCodes.appendSections): return .appendSections(list())
    case Int32(EventCodes.insertSections):
      let l = list()
      return .insertSections(l, anchor(next()))
    case Int32(EventCodes.deleteSections): return .deleteSections(list())
    case Int32(EventCodes.reloadSections): return .reloadSections(list())
    case Int32(EventCodes.moveSection):
      let id = names.name(next(), self)
      return .moveSection(id, anchor(next()))
    case Int32(EventCodes.moveItem):
      let id = names.name(next(), self)
      return .moveItem(id, anchor(next()))
    case Int32(EventCodes.expand): return .expand(list())
    case Int32(EventCodes.collapse): return .collapse(list())
    case Int32(EventCodes.select): return .select(list())
    case Int32(EventCodes.deselect): return .deselect(list())
    case Int32(EventCodes.deleteItems): return .deleteItems(list())
    case Int32(EventCodes.reloadItems): return .reloadItems(list())
    case Int32(EventCodes.reconfigureItems): return .reconfigureItems(list())
    case Int32(EventCodes.deleteAllItems): return .deleteAllItems
    case Int32(EventCodes.appendItems):
      let s = next()
      let p = next()
      return .appendItems(
        nodes(atWord: w, &names), section: s == -1 ? nil : names.name(s, self),
        parent: p == -1 ? nil : names.name(p, self))
    case Int32(EventCodes.insertItems):
      let a = anchor(next())
      return .insertItems(nodes(atWord: w, &names), a)
    case Int32(EventCodes.replaceChildren):
      let p = names.name(next(), self)
      return .replaceChildren(parent: p, items: nodes(atWord: w, &names))
    case Int32(EventCodes.applySectionSnapshot):
      let s = names.name(next(), self)
      return .applySectionSnapshot(section: s, items: nodes(atWord: w, &names))
    case Int32(EventCodes.update):
      let item = names.name(next(), self)
      let k = next()
      let (title, fields) = k < 0 ? (nil, nil) : withText(k) { ItemText.decode($0) }
      return .update(item: item, title: title, fields: fields)
    case Int32(EventCodes.configure): return .configure(multipleSelection: after)
    case Int32(EventCodes.mark): return .mark(text(next()))
    default: return .mark("")
    }
  }

  /// The node list at word `w` as outline nodes, rebuilt bottom-up without recursion.
  func nodes(atWord start: Int, _ names: inout Names) -> [OutlineNode] {
    var w = start
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
      var node = OutlineNode(names.name(e, self))
      node.expanded = words[w &+ 1] >> 16 != 0
      let k = words[w &+ 2]
      if k >= 0 { (node.title, node.fields) = withText(k) { ItemText.decode($0) } }
      w &+= 3
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
