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

/// The compact binary form of events stored in the log.
///
/// A record is a tag byte (op code, high bit set when the event has a time), the time as a
/// zigzag varint delta from the previous timed event, then the op's fields. Identifiers are
/// either a back-reference to one of the last 64 distinct identifiers written (one byte: UI
/// sessions keep touching the same rows) or length-prefixed UTF-8; other strings are always
/// length-prefixed. The running time and the identifier ring are the codec's state, reset
/// at every reset point (`EventCodecLayout`).
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
    ring = decoder.ring
    ringNext = decoder.ringNext
    nextSeq = decoder.expected
    for (i, id) in ring.enumerated() { slots[IdentifierKey(id)] = i }
  }

  /// Encodes the next event (number `nextSeq`), appending to `bytes`.
  package mutating func encode(_ event: Event, into bytes: inout [UInt8]) {
    var sink = ByteSink()
    swap(&sink.bytes, &bytes)
    if EventCodecLayout.isResetPoint(nextSeq) { reset() }
    encode(event, &sink, nested: false)
    nextSeq += 1
    swap(&sink.bytes, &bytes)
  }

  /// Encodes the next event as a new record.
  package mutating func encode(_ event: Event) -> [UInt8] {
    var bytes: [UInt8] = []
    encode(event, into: &bytes)
    return bytes
  }

  mutating func reset() {
    lastTime = 0
    ring.removeAll(keepingCapacity: true)
    ringNext = 0
    slots.removeAll(keepingCapacity: true)
  }

  /// Nested (batch) events write absolute times and leave the running time alone.
  mutating func encode(_ event: Event, _ sink: inout ByteSink, nested: Bool) {
    let code = EventCodes.code(of: event.operation)
    if let t = event.time {
      sink.byte(code | 0x80)
      if nested {
        sink.zigzag(t)
      } else {
        sink.zigzag(t &- lastTime)
        lastTime = t
      }
    } else {
      sink.byte(code)
    }
    encodeFields(event.operation, &sink)
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

  private mutating func encodeFields(_ op: ListOperation, _ s: inout ByteSink) {
    func ids(_ list: [String]) {
      s.count(list.count)
      for id in list { identifier(id, &s) }
    }
    func anchor(_ a: Anchor) {
      s.byte(a.isAfter ? 1 : 0)
      identifier(a.id, &s)
    }
    switch op {
    case .appendSections(let l), .deleteSections(let l), .reloadSections(let l),
      .deleteItems(let l),
      .reloadItems(let l), .reconfigureItems(let l), .expand(let l), .collapse(let l),
      .select(let l):
      ids(l)
    case .insertSections(let l, let a):
      ids(l)
      anchor(a)
    case .moveSection(let id, let a), .moveItem(let id, let a):
      identifier(id, &s)
      anchor(a)
    case .appendItems(let items, let section, let parent):
      s.byte((section == nil ? 0 : 1) | (parent == nil ? 0 : 2))
      if let section { identifier(section, &s) }
      if let parent { identifier(parent, &s) }
      nodes(items, &s)
    case .insertItems(let items, let a):
      anchor(a)
      nodes(items, &s)
    case .deleteAllItems: break
    case .replaceChildren(let id, let items), .applySectionSnapshot(let id, let items):
      identifier(id, &s)
      nodes(items, &s)
    case .update(let item, let title, let fields):
      s.byte((title == nil ? 0 : 1) | (fields == nil ? 0 : 2))
      identifier(item, &s)
      if let title { s.string(title) }
      if let fields { Self.fields(fields, &s) }
    case .deselect(let l):
      if let l {
        s.byte(1)
        ids(l)
      } else {
        s.byte(0)
      }
    case .configure(let multiple): s.byte(multiple ? 1 : 0)
    case .mark(let label): s.string(label)
    case .batch(let events):
      s.count(events.count)
      for e in events { encode(e, &s, nested: true) }
    }
  }

  static func fields(_ f: [String: String], _ s: inout ByteSink) {
    s.count(f.count)
    for k in f.keys.sorted() {
      s.string(k)
      s.string(f[k] ?? "")
    }
  }

  mutating func nodes(_ list: [OutlineNode], _ s: inout ByteSink) {
    s.count(list.count)
    for n in list {
      let flags: UInt8 =
        (n.title == nil ? 0 : 1) | (n.fields == nil ? 0 : 2) | (n.expanded ? 4 : 0)
        | (n.children.isEmpty ? 0 : 8)
      s.byte(flags)
      identifier(n.id, &s)
      if let title = n.title { s.string(title) }
      if let fields = n.fields { Self.fields(fields, &s) }
      if !n.children.isEmpty { nodes(n.children, &s) }
    }
  }
}

/// Decodes records written by `EventEncoder`, validating every byte.
package struct EventDecoder: Sendable {
  /// Time of the last timed event decoded (0 after a reset).
  package private(set) var lastTime: Int64 = 0
  var ring: [String] = []
  var ringNext = 0
  /// The event number the next record must have (unless it is a reset point).
  package private(set) var expected = 1
  /// Cap on nested batches and node subtrees, so hostile records cannot exhaust the stack.
  static let maxDepth = 256

  /// A decoder for a log's first event.
  package init() {}

  /// Decodes record number `seq`. Records must come in order; after a gap only a reset
  /// point can be decoded (anything else throws rather than guess at references).
  package mutating func decode(_ record: UnsafeRawBufferPointer, seq: Int) throws(CodecError)
    -> Event
  {
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
    var src = ByteSource(record)
    let e = try decode(&src, depth: 0, nested: false)
    guard src.isAtEnd else { throw src.fail("\(src.remaining) trailing bytes after the event") }
    expected = seq + 1
    return e
  }

  /// Decodes record number `seq`.
  package mutating func decode(_ record: [UInt8], seq: Int) throws(CodecError) -> Event {
    let result: Result<Event, CodecError> = record.withUnsafeBytes { raw in
      Result { () throws(CodecError) in try self.decode(raw, seq: seq) }
    }
    return try result.get()
  }

  mutating func decode(_ s: inout ByteSource, depth: Int, nested: Bool) throws(CodecError)
    -> Event
  {
    let tag = try s.byte()
    var time: Int64?
    if tag & 0x80 != 0 {
      if nested {
        time = try s.zigzag()
      } else {
        let t = lastTime &+ (try s.zigzag())
        lastTime = t
        time = t
      }
    }
    let op = try decodeFields(tag & 0x7F, &s, depth: depth)
    return Event(op, time: time)
  }

  /// An identifier: a ring slot or literal text (then remembered), never empty.
  mutating func identifier(_ s: inout ByteSource) throws(CodecError) -> String {
    let v = try s.varint()
    if v < UInt64(EventCodecLayout.ringSize) {
      guard Int(v) < ring.count else {
        throw s.fail("reference to identifier slot \(v) of \(ring.count)")
      }
      return ring[Int(v)]
    }
    let n = v - UInt64(EventCodecLayout.ringSize)
    guard n > 0 else { throw s.fail("empty identifier") }
    guard n <= UInt64(s.remaining) else {
      throw s.fail("identifier of \(n) bytes exceeds the \(s.remaining) bytes left")
    }
    let id = try s.text(Int(n))
    if ring.count < EventCodecLayout.ringSize {
      ring.append(id)
    } else {
      ring[ringNext] = id
    }
    ringNext = (ringNext + 1) % EventCodecLayout.ringSize
    return id
  }

  private mutating func decodeFields(
    _ code: UInt8, _ s: inout ByteSource, depth: Int
  ) throws(CodecError) -> ListOperation {
    func ids() throws(CodecError) -> [String] {
      let n = try s.count()
      var out: [String] = []
      out.reserveCapacity(n)
      for _ in 0..<n { out.append(try identifier(&s)) }
      return out
    }
    func anchor() throws(CodecError) -> Anchor {
      let b = try s.byte()
      guard b <= 1 else { throw s.fail("bad anchor kind \(b)") }
      let id = try identifier(&s)
      return b == 1 ? .after(id) : .before(id)
    }
    switch code {
    case EventCodes.appendSections: return .appendSections(try ids())
    case EventCodes.insertSections: return .insertSections(try ids(), try anchor())
    case EventCodes.deleteSections: return .deleteSections(try ids())
    case EventCodes.moveSection:
      let id = try identifier(&s)
      return .moveSection(id, try anchor())
    case EventCodes.reloadSections: return .reloadSections(try ids())
    case EventCodes.appendItems:
      let flags = try s.byte()
      guard flags <= 3 else { throw s.fail("bad appendItems flags \(flags)") }
      let section = flags & 1 != 0 ? try identifier(&s) : nil
      let parent = flags & 2 != 0 ? try identifier(&s) : nil
      return .appendItems(try nodes(&s, depth: depth), section: section, parent: parent)
    case EventCodes.insertItems:
      let a = try anchor()
      return .insertItems(try nodes(&s, depth: depth), a)
    case EventCodes.deleteItems: return .deleteItems(try ids())
    case EventCodes.deleteAllItems: return .deleteAllItems
    case EventCodes.moveItem:
      let id = try identifier(&s)
      return .moveItem(id, try anchor())
    case EventCodes.replaceChildren:
      let id = try identifier(&s)
      return .replaceChildren(parent: id, items: try nodes(&s, depth: depth))
    case EventCodes.applySectionSnapshot:
      let id = try identifier(&s)
      return .applySectionSnapshot(section: id, items: try nodes(&s, depth: depth))
    case EventCodes.reloadItems: return .reloadItems(try ids())
    case EventCodes.reconfigureItems: return .reconfigureItems(try ids())
    case EventCodes.update:
      let flags = try s.byte()
      guard flags <= 3 else { throw s.fail("bad update flags \(flags)") }
      let item = try identifier(&s)
      let title = flags & 1 != 0 ? try s.string() : nil
      let fields = flags & 2 != 0 ? try Self.fields(&s) : nil
      return .update(item: item, title: title, fields: fields)
    case EventCodes.expand: return .expand(try ids())
    case EventCodes.collapse: return .collapse(try ids())
    case EventCodes.select: return .select(try ids())
    case EventCodes.deselect:
      let b = try s.byte()
      guard b <= 1 else { throw s.fail("bad deselect flag \(b)") }
      return .deselect(b == 1 ? try ids() : nil)
    case EventCodes.configure:
      let b = try s.byte()
      guard b <= 1 else { throw s.fail("bad configure flag \(b)") }
      return .configure(multipleSelection: b == 1)
    case EventCodes.mark: return .mark(try s.string())
    case EventCodes.batch:
      guard depth < Self.maxDepth else { throw s.fail("batches nested too deeply") }
      let n = try s.count()
      var events: [Event] = []
      events.reserveCapacity(n)
      for _ in 0..<n { events.append(try decode(&s, depth: depth + 1, nested: true)) }
      return .batch(events)
    default:
      throw CodecError("unknown op code \(code)", offset: s.offset - 1)
    }
  }

  static func fields(_ s: inout ByteSource) throws(CodecError) -> [String: String] {
    let n = try s.count(minBytes: 2)
    var out: [String: String] = [:]
    out.reserveCapacity(n)
    for _ in 0..<n {
      let k = try s.string()
      out[k] = try s.string()
    }
    return out
  }

  mutating func nodes(_ s: inout ByteSource, depth: Int) throws(CodecError) -> [OutlineNode] {
    guard depth < Self.maxDepth else { throw s.fail("items nested too deeply") }
    let n = try s.count(minBytes: 2)
    var out: [OutlineNode] = []
    out.reserveCapacity(n)
    for _ in 0..<n {
      let flags = try s.byte()
      guard flags <= 15 else { throw s.fail("bad item flags \(flags)") }
      var node = OutlineNode(try identifier(&s))
      if flags & 1 != 0 { node.title = try s.string() }
      if flags & 2 != 0 { node.fields = try Self.fields(&s) }
      node.expanded = flags & 4 != 0
      if flags & 8 != 0 { node.children = try nodes(&s, depth: depth + 1) }
      out.append(node)
    }
    return out
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
