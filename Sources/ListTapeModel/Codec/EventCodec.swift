/// The codec's shared rules: records restart from a clean state every `resetInterval`
/// events, so decoding can begin at any reset point, and a gap (a salvaged log) can never
/// make later records decode to different events.
package enum EventCodecLayout {
  /// Events between reset points: event numbers 1, 1 + k, 1 + 2k, … start clean.
  package static let resetInterval = 256
  /// Identifiers remembered for back-references.
  static let ringSize = 64

  /// Whether event `seq` starts from a clean codec state.
  package static func isResetPoint(_ seq: Int) -> Bool { (seq - 1) % resetInterval == 0 }

  /// The reset point at or before event `seq` (seq ≥ 1).
  package static func resetPoint(atOrBefore seq: Int) -> Int {
    ((seq - 1) / resetInterval) * resetInterval + 1
  }
}

/// The compact binary form of events stored in format 1.0 logs, one record per event.
///
/// A record is a tag byte (op code, high bit set when the event has a time), the time as a
/// zigzag varint delta from the previous timed event, then the op's fields (`EventWalk`).
/// Identifiers are either a back-reference to one of the last 64 distinct identifiers
/// written (one byte: UI sessions keep touching the same rows) or length-prefixed UTF-8;
/// other strings are always length-prefixed. The running time and the identifier ring are
/// the codec's state, reset at every reset point (`EventCodecLayout`).
package struct EventEncoder: Sendable {
  /// Time of the last timed event encoded (0 after a reset).
  package var lastTime: Int64 = 0
  var ring: [String] = []
  var ringNext = 0
  var slots: [IdentifierKey: Int] = [:]
  /// The event number the next record gets.
  package private(set) var nextSeq = 1

  /// An encoder for a log's first event.
  package init() {}

  /// An encoder continuing where `decoder` stopped (appending to an existing log).
  package init(continuing decoder: EventDecoder) {
    lastTime = decoder.lastTime
    ring = decoder.ring.map { decoder.dictionary.text(Int($0)) }
    ringNext = decoder.ringNext
    nextSeq = decoder.expected
    for (i, id) in ring.enumerated() { slots[IdentifierKey(id)] = i }
  }

  /// Encodes the next event (number `nextSeq`), appending to `bytes`; refuses an event a
  /// decoder would refuse (see `CodecLimits`), leaving `bytes` and the encoder unchanged.
  package mutating func encode(_ event: Event, into bytes: inout [UInt8]) throws(CodecError) {
    try EventWalk.check(event)
    var sink = RecordSink(encoder: EventEncoder())
    swap(&sink.encoder, &self)
    swap(&sink.out.bytes, &bytes)
    defer {
      swap(&sink.encoder, &self)
      swap(&sink.out.bytes, &bytes)
    }
    if EventCodecLayout.isResetPoint(sink.encoder.nextSeq) { sink.encoder.reset() }
    try EventWalk.encode(event, &sink)
    sink.encoder.nextSeq += 1
  }

  /// Encodes the next event as a new record.
  package mutating func encode(_ event: Event) throws(CodecError) -> [UInt8] {
    var bytes: [UInt8] = []
    try encode(event, into: &bytes)
    return bytes
  }

  mutating func reset() {
    lastTime = 0
    ring.removeAll(keepingCapacity: true)
    ringNext = 0
    slots.removeAll(keepingCapacity: true)
  }

  /// An identifier: a ring slot when it was written lately, else its text (then remembered).
  mutating func identifier(_ id: String, _ s: inout ByteSink) {
    if let slot = slots[IdentifierKey(id)] {
      s.count(slot)
      return
    }
    var id = id
    id.withUTF8 { utf8 in
      s.count(EventCodecLayout.ringSize + utf8.count)
      s.bytes.append(contentsOf: utf8)
    }
    if ring.count < EventCodecLayout.ringSize {
      slots[IdentifierKey(id)] = ring.count
      ring.append(id)
    } else {
      let old = ring[ringNext]
      if slots[IdentifierKey(old)] == ringNext { slots[IdentifierKey(old)] = nil }
      ring[ringNext] = id
      slots[IdentifierKey(id)] = ringNext
    }
    ringNext = (ringNext + 1) % EventCodecLayout.ringSize
  }
}

/// The 1.0 record layout as an `EventSink`: everything in one byte stream.
private struct RecordSink: EventSink {
  var encoder: EventEncoder
  var out = ByteSink()

  mutating func tag(_ code: UInt8, timed: Bool) { out.byte(timed ? code | 0x80 : code) }

  mutating func time(_ t: Int64, nested: Bool) {
    if nested {
      out.zigzag(t)
    } else {
      out.zigzag(t &- encoder.lastTime)
      encoder.lastTime = t
    }
  }

  mutating func count(_ n: Int) { out.count(n) }
  mutating func flag(_ b: UInt8) { out.byte(b) }
  mutating func id(_ s: String) { encoder.identifier(s, &out) }
  mutating func string(_ s: String) { out.string(s) }
  /// A 1.0 record names its site as it names an identifier (a ring slot or its text).
  mutating func site(_ s: String) { encoder.identifier(s, &out) }
}

/// Decodes records written by `EventEncoder`, validating every byte.
package struct EventDecoder: Sendable {
  /// Time of the last timed event decoded (0 after a reset).
  package internal(set) var lastTime: Int64 = 0
  /// The 1.0 codec's ring of the last identifiers written, as entries of `dictionary`, so a
  /// back-reference hashes nothing.
  var ring: [Int32] = []
  var ringNext = 0
  /// The event number the next record must have (unless it is a reset point).
  package internal(set) var expected = 1
  /// Format 2.0: the current segment's dictionary, its repeated definitions...
  package internal(set) var dictionary = IdSpace()
  package internal(set) var aliases = DefinitionAliases()
  /// Entries the log has defined before the next frame (the dictionary may hold more: an
  /// index file's whole segment, or definitions read past a stop).
  package internal(set) var defined = 0
  /// ...and the event number its restart came before (0: the log's start).
  package internal(set) var segment: UInt64 = 0
  /// A number naming the log read (from its UUID), from which each segment's dictionary
  /// draws its lineage (`lineage(log:segment:)`).
  package private(set) var logID: UInt64 = 0
  /// The site model layout 3 frames share, as far as the frames read give it.
  package var sites = SiteSync()

  /// A decoder for a log's first event.
  package init() {}

  /// About how many bytes the decoder holds (its dictionary and ring), as
  /// `ListState.heldBytes` counts a state's.
  package var heldBytes: Int { dictionary.heldBytes &+ ring.capacity &* 4 }

  /// A decoder for the first event of the log named `logID`.
  package init(logID: UInt64) {
    self.logID = logID
    dictionary.setLineage(Self.lineage(log: logID, segment: 0))
  }

  /// Decodes record number `seq` as an `Event` (its records, read back). Records must come
  /// in order; after a gap only a reset point can be decoded (anything else throws rather
  /// than guess at references).
  package mutating func decode(_ record: UnsafeRawBufferPointer, seq: Int) throws(CodecError)
    -> Event
  {
    var ops = FoldOps()
    try decode(record, seq: seq, into: &ops)
    return ops.event(0, dictionary)
  }

  /// Decodes record number `seq` into records of the fold (`OpWalk`, as 2.0 frames are), its
  /// ids numbered in `dictionary`: a literal id is looked up once (and defined when new),
  /// and its ring slot keeps the entry, so a back-reference hashes nothing. Records must
  /// come in order, as for `decode(_:seq:)`; a record that does not decode adds nothing.
  package mutating func decode(
    _ record: UnsafeRawBufferPointer, seq: Int, into ops: inout FoldOps
  ) throws(CodecError) {
    if EventCodecLayout.isResetPoint(seq) {
      lastTime = 0
      ring.removeAll(keepingCapacity: true)
      ringNext = 0
    } else if seq != expected {
      throw CodecError(
        "event \(seq) follows a gap (expected event \(expected)); decoding resumes at event "
          + "\(EventCodecLayout.resetPoint(atOrBefore: seq) + EventCodecLayout.resetInterval)",
        offset: 0)
    }
    var source = EntryRecordSource(decoder: EventDecoder(), bytes: ByteSource(record))
    swap(&source.decoder, &self)
    defer { swap(&source.decoder, &self) }
    let mark = ops.count
    do throws(CodecError) {
      _ = try OpWalk.decode(&source, seq: seq, into: &ops)
      guard source.bytes.isAtEnd else {
        throw source.bytes.fail("\(source.bytes.remaining) trailing bytes after the event")
      }
    } catch {
      ops.truncate(to: mark)
      throw error
    }
    source.decoder.expected = seq + 1
  }

  /// Decodes record number `seq`.
  package mutating func decode(_ record: [UInt8], seq: Int) throws(CodecError) -> Event {
    let result: Result<Event, CodecError> = record.withUnsafeBytes { raw in
      Result { () throws(CodecError) in try self.decode(raw, seq: seq) }
    }
    return try result.get()
  }
}

/// A 1.0 record read into records of the fold: one byte stream, each identifier an entry of
/// the decoder's dictionary.
private struct EntryRecordSource: OpSource {
  var decoder: EventDecoder
  var bytes: ByteSource
  /// A 1.0 decoder's dictionary has no holes (it numbers what it reads).
  var touchedHole = false

  var defined: Int { decoder.dictionary.count }
  var dictionary: IdSpace { decoder.dictionary }

  mutating func tag() throws(CodecError) -> UInt8 { try bytes.byte() }

  mutating func time(nested: Bool) throws(CodecError) -> Int64 {
    let v = try bytes.zigzag()
    if nested { return v }
    let t = decoder.lastTime &+ v
    decoder.lastTime = t
    return t
  }

  mutating func count(_ kind: CountKind) throws(CodecError) -> Int {
    switch kind {
    case .ids, .events: return try bytes.count()
    case .nodes, .fields: return try bytes.count(minBytes: 2)
    }
  }

  mutating func flag() throws(CodecError) -> UInt8 { try bytes.byte() }

  mutating func id() throws(CodecError) -> String {
    decoder.dictionary.text(Int(try entryRef()))
  }

  mutating func string() throws(CodecError) -> String { try bytes.string() }
  func fail(_ message: String) -> CodecError { bytes.fail(message) }

  /// A 1.0 record names its site as an identifier.
  mutating func site(code: UInt8) throws(CodecError) -> Int32? { try entryRef() }

  /// A ring slot's entry, or a literal id looked up (defined when new) and remembered.
  mutating func entryRef() throws(CodecError) -> Int32 {
    let v = try bytes.varint()
    if v < UInt64(EventCodecLayout.ringSize) {
      guard Int(v) < decoder.ring.count else {
        throw bytes.fail("reference to identifier slot \(v) of \(decoder.ring.count)")
      }
      return decoder.ring[Int(v)]
    }
    let n = v - UInt64(EventCodecLayout.ringSize)
    guard n > 0 else { throw bytes.fail("empty identifier") }
    guard n <= UInt64(bytes.remaining) else {
      throw bytes.fail("identifier of \(n) bytes exceeds the \(bytes.remaining) bytes left")
    }
    let e = try bytes.withText(Int(n)) { decoder.dictionary.define(text: $0) }
    if decoder.ring.count < EventCodecLayout.ringSize {
      decoder.ring.append(e)
    } else {
      decoder.ring[decoder.ringNext] = e
    }
    decoder.ringNext = (decoder.ringNext + 1) % EventCodecLayout.ringSize
    return e
  }
}

/// Op codes of the binary form; part of the file format, never renumber.
enum EventCodes {
  static let appendSections: UInt8 = 1
  static let insertSections: UInt8 = 2
  static let deleteSections: UInt8 = 3
  static let moveSection: UInt8 = 4
  static let reloadSections: UInt8 = 5
  static let appendItems: UInt8 = 6
  static let insertItems: UInt8 = 7
  static let deleteItems: UInt8 = 8
  static let deleteAllItems: UInt8 = 9
  static let moveItem: UInt8 = 10
  static let replaceChildren: UInt8 = 11
  static let applySectionSnapshot: UInt8 = 12
  static let reloadItems: UInt8 = 13
  static let reconfigureItems: UInt8 = 14
  static let update: UInt8 = 15
  static let expand: UInt8 = 16
  static let collapse: UInt8 = 17
  static let select: UInt8 = 18
  static let deselect: UInt8 = 19
  static let configure: UInt8 = 20
  static let mark: UInt8 = 21
  static let batch: UInt8 = 22
  /// A tag bit: the event's site follows its time. Readers from before sites refuse the
  /// tag as an unknown op code rather than misread the event.
  static let sited: UInt8 = 0x40
  /// A tag bit: the event's time follows the tag.
  static let timed: UInt8 = 0x80
  /// The op code of a tag.
  static let codeMask: UInt8 = 0x3F

  static func code(of op: ListOperation) -> UInt8 {
    switch op {
    case .appendSections: return appendSections
    case .insertSections: return insertSections
    case .deleteSections: return deleteSections
    case .moveSection: return moveSection
    case .reloadSections: return reloadSections
    case .appendItems: return appendItems
    case .insertItems: return insertItems
    case .deleteItems: return deleteItems
    case .deleteAllItems: return deleteAllItems
    case .moveItem: return moveItem
    case .replaceChildren: return replaceChildren
    case .applySectionSnapshot: return applySectionSnapshot
    case .reloadItems: return reloadItems
    case .reconfigureItems: return reconfigureItems
    case .update: return update
    case .expand: return expand
    case .collapse: return collapse
    case .select: return select
    case .deselect: return deselect
    case .configure: return configure
    case .mark: return mark
    case .batch: return batch
    }
  }
}
