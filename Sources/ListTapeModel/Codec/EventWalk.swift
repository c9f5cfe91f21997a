/// Limits every codec enforces in both directions: a decoder refuses anything beyond them,
/// so the encoders refuse it too, and a log never holds an event it cannot read back.
package enum CodecLimits {
  /// Nesting inside one event: batch levels plus item subtree levels (protocol section 5).
  package static let maxDepth = 256
  /// Bytes in one identifier, title, mark, field key or field value.
  package static let maxStringBytes = 1 << 24
  /// Elements in one list (identifiers, nodes, fields, a batch's events).
  package static let maxCount = 1 << 24
}

/// What a list count counts: each element needs at least one byte somewhere, so a decoder
/// bounds the count by the bytes left before reserving room for it.
enum CountKind {
  case ids
  case nodes
  case fields
  case events
}

/// Where the event walk writes the parts of an event (a 1.0 record, or 2.0 row tokens).
protocol EventSink {
  /// The op code, and whether a time follows.
  mutating func tag(_ code: UInt8, timed: Bool)
  /// The event's time; `nested` inside a batch (absolute there).
  mutating func time(_ t: Int64, nested: Bool)
  mutating func count(_ n: Int)
  /// A small flag byte (anchor side, optional parts, node flags).
  mutating func flag(_ b: UInt8)
  mutating func id(_ s: String)
  mutating func string(_ s: String)
  /// The event's site (after its time, when the tag says one follows).
  mutating func site(_ s: String)
}

/// A sink that keeps nothing: `EventWalk.check`.
private struct NullSink: EventSink {
  mutating func tag(_ code: UInt8, timed: Bool) {}
  mutating func time(_ t: Int64, nested: Bool) {}
  mutating func count(_ n: Int) {}
  mutating func flag(_ b: UInt8) {}
  mutating func id(_ s: String) {}
  mutating func string(_ s: String) {}
  mutating func site(_ s: String) {}
}

/// Where the event walk reads the parts of an event back, checking each against what is left.
protocol EventSource {
  mutating func tag() throws(CodecError) -> UInt8
  mutating func time(nested: Bool) throws(CodecError) -> Int64
  mutating func count(_ kind: CountKind) throws(CodecError) -> Int
  mutating func flag() throws(CodecError) -> UInt8
  /// A non-empty identifier.
  mutating func id() throws(CodecError) -> String
  mutating func string() throws(CodecError) -> String
  /// A refusal located where the source stands.
  func fail(_ message: String) -> CodecError
}

/// The one place that knows the order of an event's parts, for every format: the encoder
/// and decoder walks below, each iterative (explicit stacks) so that a deeply nested event,
/// legal or hostile, never deepens the call stack.
enum EventWalk {
  // MARK: Encoding

  /// Throws what `encode` would refuse, writing nothing: encoders check first, so that a
  /// refused event leaves no trace in their state (ring, dictionary).
  static func check(_ event: Event) throws(CodecError) {
    var sink = NullSink()
    try encode(event, &sink)
  }

  /// Writes `event` into `sink`, refusing what a decoder would refuse (nesting beyond
  /// `CodecLimits.maxDepth`, strings or lists beyond their caps, empty identifiers).
  static func encode<S: EventSink>(_ event: Event, _ sink: inout S) throws(CodecError) {
    // Batches being written: their events and the next one to write.
    var batches: [(events: [Event], next: Int)] = []
    var current = event
    while true {
      let depth = batches.count
      try encodeOne(current, depth: depth, &sink)
      if case .batch(let events) = current.operation, !events.isEmpty {
        batches.append((events, 0))
      }
      while let top = batches.last, top.next == top.events.count { batches.removeLast() }
      guard let top = batches.last else { return }
      current = top.events[top.next]
      batches[batches.count - 1].next += 1
    }
  }

  /// One event's tag, time and fields; a batch writes only its count here.
  private static func encodeOne<S: EventSink>(_ event: Event, depth: Int, _ s: inout S)
    throws(CodecError)
  {
    let op = event.operation
    let code = EventCodes.code(of: op)
    s.tag(event.site == nil ? code : code | EventCodes.sited, timed: event.time != nil)
    if let t = event.time { s.time(t, nested: depth > 0) }
    if let site = event.site {
      let n = site.utf8.count
      guard n > 0 else { throw CodecError("empty site", offset: 0) }
      guard n <= CodecLimits.maxStringBytes else { throw tooLong(n) }
      s.site(site)
    }
    func ids(_ list: [String]) throws(CodecError) {
      try checkCount(list.count)
      s.count(list.count)
      for id in list { try identifier(id, &s) }
    }
    func anchor(_ a: Anchor) throws(CodecError) {
      s.flag(a.isAfter ? 1 : 0)
      try identifier(a.id, &s)
    }
    switch op {
    case .appendSections(let l), .deleteSections(let l), .reloadSections(let l),
      .deleteItems(let l), .reloadItems(let l), .reconfigureItems(let l), .expand(let l),
      .collapse(let l), .select(let l):
      try ids(l)
    case .insertSections(let l, let a):
      try ids(l)
      try anchor(a)
    case .moveSection(let id, let a), .moveItem(let id, let a):
      try identifier(id, &s)
      try anchor(a)
    case .appendItems(let items, let section, let parent):
      s.flag((section == nil ? 0 : 1) | (parent == nil ? 0 : 2))
      if let section { try identifier(section, &s) }
      if let parent { try identifier(parent, &s) }
      try nodes(items, depth: depth, &s)
    case .insertItems(let items, let a):
      try anchor(a)
      try nodes(items, depth: depth, &s)
    case .deleteAllItems: break
    case .replaceChildren(let id, let items), .applySectionSnapshot(let id, let items):
      try identifier(id, &s)
      try nodes(items, depth: depth, &s)
    case .update(let item, let title, let fields):
      s.flag((title == nil ? 0 : 1) | (fields == nil ? 0 : 2))
      try identifier(item, &s)
      if let title { try string(title, &s) }
      if let fields { try encodeFields(fields, &s) }
    case .deselect(let l):
      if let l {
        s.flag(1)
        try ids(l)
      } else {
        s.flag(0)
      }
    case .configure(let multiple): s.flag(multiple ? 1 : 0)
    case .mark(let label): try string(label, &s)
    case .batch(let events):
      guard depth < CodecLimits.maxDepth else {
        throw CodecError("batches nested more than \(CodecLimits.maxDepth) levels", offset: 0)
      }
      try checkCount(events.count)
      s.count(events.count)
    }
  }

  /// A node list and every subtree below it, pre-order; `depth` is the list's nesting.
  static func nodes<S: EventSink>(_ list: [OutlineNode], depth: Int, _ s: inout S)
    throws(CodecError)
  {
    guard depth < CodecLimits.maxDepth else { throw tooDeep() }
    try checkCount(list.count)
    s.count(list.count)
    var lists: [(nodes: [OutlineNode], next: Int)] = [(list, 0)]
    while let top = lists.last {
      if top.next == top.nodes.count {
        lists.removeLast()
        continue
      }
      let n = top.nodes[top.next]
      lists[lists.count - 1].next += 1
      let flags: UInt8 =
        (n.title == nil ? 0 : 1) | (n.fields == nil ? 0 : 2) | (n.expanded ? 4 : 0)
        | (n.children.isEmpty ? 0 : 8)
      s.flag(flags)
      try identifier(n.id, &s)
      if let title = n.title { try string(title, &s) }
      if let fields = n.fields { try encodeFields(fields, &s) }
      if !n.children.isEmpty {
        guard depth + lists.count < CodecLimits.maxDepth else { throw tooDeep() }
        try checkCount(n.children.count)
        s.count(n.children.count)
        lists.append((n.children, 0))
      }
    }
  }

  /// Fields as a count, then each key and value, keys in byte order (canonical).
  static func encodeFields<S: EventSink>(_ f: [String: String], _ s: inout S) throws(CodecError) {
    try checkCount(f.count)
    s.count(f.count)
    for k in f.keys.sorted() {
      try string(k, &s)
      try string(f[k] ?? "", &s)
    }
  }

  private static func identifier<S: EventSink>(_ id: String, _ s: inout S) throws(CodecError) {
    let n = id.utf8.count
    guard n > 0 else { throw CodecError("empty identifier", offset: 0) }
    guard n <= CodecLimits.maxStringBytes else { throw tooLong(n) }
    s.id(id)
  }

  private static func string<S: EventSink>(_ text: String, _ s: inout S) throws(CodecError) {
    let n = text.utf8.count
    guard n <= CodecLimits.maxStringBytes else { throw tooLong(n) }
    s.string(text)
  }

  private static func checkCount(_ n: Int) throws(CodecError) {
    guard n <= CodecLimits.maxCount else {
      throw CodecError(
        "list of \(n) elements exceeds the cap of \(CodecLimits.maxCount)", offset: 0)
    }
  }

  private static func tooDeep() -> CodecError {
    CodecError("items nested more than \(CodecLimits.maxDepth) levels", offset: 0)
  }

  private static func tooLong(_ n: Int) -> CodecError {
    CodecError(
      "string of \(n) bytes exceeds the cap of \(CodecLimits.maxStringBytes)", offset: 0)
  }

  // MARK: Decoding

  /// A fields dictionary (later duplicates of a key win, as in 1.0).
  static func decodeFields<S: EventSource>(_ s: inout S) throws(CodecError) -> [String: String] {
    let n = try s.count(.fields)
    var out: [String: String] = [:]
    out.reserveCapacity(n)
    for _ in 0..<n {
      let k = try s.string()
      out[k] = try s.string()
    }
    return out
  }
}
