import Foundation
import ListTapeSamples
import Testing

@testable import ListTapeModel

/// The fold of a log's records (`FoldOps` decoded from frames, numbered by the log's
/// dictionary, `ListState.apply(_:_:)`) against the fold of the events the log was written
/// from (numbered by the state's own ids): the same events back, the same faults, the same
/// states, frame after frame.
@Suite struct FoldOpsTests {
  /// Decodes a whole frame into operations, with the events from `from` on.
  func decodeOps(
    _ payload: [UInt8], _ decoder: inout EventDecoder, firstSeq: Int, count: Int,
    from: Int = 1, into ops: inout FoldOps
  ) throws {
    let outcome = try payload.withUnsafeBytes { raw in
      try decoder.decodeFrame(
        raw, firstSeq: firstSeq, count: count, from: from, through: .max, into: &ops)
    }
    guard outcome == .done else { throw CodecError("frame not decoded: \(outcome)", offset: 0) }
  }

  /// Folds `ops` into `state`; returns each event's fault (nil when it applied).
  func fold(_ ops: FoldOps, _ state: inout ListState) throws -> [ListFault?] {
    var faults: [ListFault?] = []
    for i in 0..<ops.count {
      let fault = try state.apply(ops, i)
      if ops.isEvent(i) { faults.append(fault) } else { #expect(fault == nil) }
    }
    return faults
  }

  func fold(_ events: [Event], _ state: inout ListState) -> [ListFault?] {
    events.map { e in
      do throws(ListFault) {
        try state.apply(e)
        return nil
      } catch {
        return error
      }
    }
  }

  /// `events` written as one frame, decoded into records and folded, then folded as
  /// events: the same faults and states expected. The records and their state.
  func foldAlike(_ events: [Event]) throws -> (FoldOps, ListState) {
    var encoder = EventRowEncoder()
    let payload = try framePayload(events, &encoder)
    var decoder = EventDecoder()
    var ops = FoldOps()
    try decodeOps(payload, &decoder, firstSeq: 1, count: events.count, into: &ops)
    var byOps = ListState()
    try byOps.adopt(decoder.dictionary, aliases: decoder.aliases)
    var byEvents = ListState()
    #expect(try fold(ops, &byOps) == fold(events, &byEvents))
    #expect(byOps == byEvents)
    return (ops, byOps)
  }

  /// Random valid, faulty and batched events (deep ones too), cut into frames of random
  /// sizes with dictionary restarts now and then.
  @Test(arguments: [UInt64(1), 2, 3, 4, 5, 6])
  func randomSessionsFoldAlike(seed: UInt64) throws {
    var rng = SplitMix64(seed: seed)
    var gen = EventGenerator(seed: seed)
    gen.deep = seed % 2 == 0
    var reference = Reference()
    var encoder = EventRowEncoder()
    var opsDecoder = EventDecoder(logID: seed)
    var byEvents = ListState()
    var byOps = ListState()
    try byOps.adopt(opsDecoder.dictionary, aliases: opsDecoder.aliases)
    var seq = 1
    var segment: UInt64 = 0
    var ops = FoldOps()
    for frame in 0..<50 {
      ops.removeAll()
      if rng.chance(12) {
        // A restart lists the live ids (a recorder's: sections, then items in pre-order;
        // here sometimes in another order, read by lookups) and maybe some dead ones.
        var ids = byEvents.sectionIdentifiers
        for section in byEvents.sectionIdentifiers {
          ids += byEvents.allItems(inSection: section) ?? []
        }
        if rng.chance(30) { ids.reverse() }
        var seen = Set(ids)
        for id in gen.everItems where rng.chance(20) && seen.insert(id).inserted { ids.append(id) }
        let payload = DictionaryPayload.encode(ids)
        try payload.bytes.withUnsafeBytes { raw in
          try opsDecoder.restart(raw, seq: seq, into: &ops)
        }
        var table = IdTable()
        for id in ids { table.add(id) }
        encoder = EventRowEncoder(table: table)
        segment = UInt64(seq)
      }
      let n = 1 + rng.below(60)
      var events: [Event] = []
      for _ in 0..<n {
        let e = gen.event(reference)
        try? reference.apply(e)
        events.append(e)
      }
      let payload = try framePayload(events, &encoder, segment: segment)
      try decodeOps(payload, &opsDecoder, firstSeq: seq, count: n, into: &ops)
      let eventFaults = fold(events, &byEvents)
      let opsFaults = try fold(ops, &byOps)
      #expect(opsFaults == eventFaults, "frame \(frame)")
      #expect(byOps == byEvents, "frame \(frame)")
      // The records give the events back, and their fields (what `export --parquet` reads
      // without an `Event`) name the same.
      var back: [Event] = []
      for i in 0..<ops.count where ops.isEvent(i) {
        back.append(ops.event(i, byOps.ids))
        expectFields(ops, i, byOps.ids, events[back.count - 1], "frame \(frame) event \(i)")
      }
      #expect(back == events, "frame \(frame)")
      // A fold of records hashes no id: the state never built a string table.
      #expect(!byOps.ids.hasStringTable, "frame \(frame)")
      seq += n
    }
    #expect(invariantViolations(byOps) == [])
    #expect(byOps.encoded() == byEvents.encoded())
  }

  /// A restart's table of where the old entries went renumbers a state only when the
  /// state is numbered by the dictionary the table maps from (its lineage) and the table
  /// lists every live id; otherwise the state compares or looks up its ids, to the same
  /// entries. A table applied where it does not belong would give items other ids.
  @Test func aRestartTableServesOnlyTheDictionaryItMapsFrom() throws {
    var d = EventDecoder(logID: 5)
    let old = ["s", "a", "b", "c", "gone"]
    try DictionaryPayload.encode(old).bytes.withUnsafeBytes { try d.restart($0, seq: 1) }
    var state = ListState()
    try state.adopt(d.dictionary, aliases: d.aliases)
    try state.appendSections(["s"])
    try state.appendItems(
      [OutlineNode("a", children: [OutlineNode("b")]), OutlineNode("c")], toSection: "s")
    var ops = FoldOps()
    try DictionaryPayload.encode(["c", "s", "b", "a"]).bytes.withUnsafeBytes {
      try d.restart($0, seq: 10, into: &ops)
    }
    let r = ops.restarts[0]
    let from = try #require(r.from)
    var compared = state
    try compared.forest.renumber(to: r.dictionary, aliases: r.aliases, before: 10)
    var byTable = state
    #expect(try byTable.apply(ops, 0) == nil)
    #expect(byTable == compared)
    #expect(byTable.forest.entryOf == compared.forest.entryOf)
    // A table of another numbering (every entry sent elsewhere) is not used.
    let shuffled = from.entries.map { $0 < 0 ? $0 : 3 - $0 }
    for table in [
      Renumbering(lineage: from.lineage &+ 1, entries: shuffled),
      Renumbering(lineage: from.lineage, entries: from.entries.map { $0 == 3 ? -1 : $0 }),
    ] {
      var other = state
      try other.forest.renumber(to: r.dictionary, aliases: r.aliases, before: 10, from: table)
      #expect(other.forest.entryOf == compared.forest.entryOf)
      #expect(other == compared)
    }
  }

  /// Titles and fields as a frame holds them come out of the decoder as the blobs
  /// `ItemText.encode` makes of the event's strings: copied when the keys are ASCII (in the
  /// frame's key order), read as strings when a key is not; long strings, empty values and
  /// keys that sort differently by case included.
  @Test func contentBlobsAreThoseOfTheEventsStrings() throws {
    let long = String(repeating: "é", count: 90)
    let fieldSets: [[String: String]?] = [
      nil, [:], ["badge": "1"], ["b": "2", "a": "", "B": "3", "_": "4", "a0": long],
      ["é": "x", "e": "y"], ["zeta": long, "ünï": "côde", "Alpha": "1"], [long: "k"],
    ]
    var events = [Event(.appendSections(["s"]))]
    var items: [OutlineNode] = []
    for (i, fields) in fieldSets.enumerated() {
      let title: String? = i % 3 == 0 ? nil : (i % 3 == 1 ? "T\(i)" : long)
      items.append(OutlineNode("i\(i)", title: title, fields: fields))
    }
    events.append(Event(.appendItems(items, section: "s", parent: nil)))
    for (i, fields) in fieldSets.enumerated().reversed() {
      events.append(Event(.update(item: "i\(i)", title: i % 2 == 0 ? "U" : nil, fields: fields)))
    }
    let (ops, byOps) = try foldAlike(events)
    var back: [Event] = []
    for i in 0..<ops.count where ops.isEvent(i) { back.append(ops.event(i, byOps.ids)) }
    #expect(back == events)
    // The records' texts are the items' canonical blobs, in order (no marks or sites here).
    var expected: [[UInt8]] = []
    for n in items {
      var b: [UInt8] = []
      ItemText.encode(title: n.title, fields: n.fields, into: &b)
      if !b.isEmpty { expected.append(b) }
    }
    for (i, fields) in fieldSets.enumerated().reversed() {
      var b: [UInt8] = []
      ItemText.encode(title: i % 2 == 0 ? "U" : nil, fields: fields, into: &b)
      if !b.isEmpty { expected.append(b) }
    }
    let texts = (0..<ops.textEnds.count).map { k in ops.withText(Int32(k)) { Array($0) } }
    #expect(texts == expected)
  }

  /// The bench's session (a 100k-item outline shrunk to 3,000 items, then a person's edits)
  /// with every id shape, folded from a seek point in the middle of a frame.
  @Test(arguments: IdShape.allCases)
  func sampleSessionFoldsAlike(shape: IdShape) throws {
    var events: [Event] = []
    SampleSession.generate(
      events: 6_000, seed: 14, maxItems: 3_300, opening: .outline(items: 3_000, shape: shape)
    ) { events.append($0) }
    var encoder = EventRowEncoder()
    var payloads: [(Int, Int, [UInt8])] = []
    var seq = 1
    for chunk in stride(from: 0, to: events.count, by: 700) {
      let part = Array(events[chunk..<min(chunk + 700, events.count)])
      payloads.append((seq, part.count, try framePayload(part, &encoder)))
      seq += part.count
    }
    // The state after event 2,100 (a frame's end) by events, then the rest both ways.
    var byEvents = ListState()
    _ = fold(Array(events[..<2_100]), &byEvents)
    // The fold's state has its own numbering: the first record re-keys it by the log's.
    var byOps = byEvents
    var opsDecoder = EventDecoder()
    var started = false
    var ops = FoldOps()
    for (first, count, payload) in payloads {
      if first + count - 1 <= 2_100 {
        _ = try payload.withUnsafeBytes {
          try opsDecoder.skipFrame($0, firstSeq: first, count: count)
        }
        continue
      }
      if !started {
        // The fold begins with the dictionary as the frame holding its first event needs.
        try byOps.adopt(opsDecoder.dictionary, aliases: opsDecoder.aliases)
        started = true
      }
      ops.removeAll()
      try decodeOps(payload, &opsDecoder, firstSeq: first, count: count, from: 2_101, into: &ops)
      let wanted = Array(events[max(first - 1, 2_100)..<(first - 1 + count)])
      #expect(try fold(ops, &byOps) == fold(wanted, &byEvents))
      #expect(byOps == byEvents)
    }
    #expect(invariantViolations(byOps) == [])
  }

  /// An id deleted and added again gets a new handle; the entry's old handle, reused by
  /// another item, must not be taken for it. Node lists of every shape, and their faults.
  @Test func staleHandlesAreNeverUsedAndFaultsMatch() throws {
    let events: [Event] = [
      Event(.appendItems([OutlineNode("x")], section: nil, parent: nil)),
      Event(.appendSections(["s"])),
      Event(.appendItems([OutlineNode("x"), OutlineNode("x")], section: nil, parent: nil)),
      Event(
        .appendItems(
          [OutlineNode("p", children: [OutlineNode("q", title: "Q", fields: ["a": "b"])])],
          section: "s", parent: nil)),
      Event(.appendItems([OutlineNode("r")], section: "t", parent: "p")),
      Event(.appendSections(["t"])),
      Event(.appendItems([OutlineNode("r")], section: "t", parent: "p")),
      Event(.appendItems([OutlineNode("r"), OutlineNode("q")], section: "t", parent: nil)),
      Event(
        .insertItems(
          [OutlineNode("m1"), OutlineNode("m2", expanded: true, children: [OutlineNode("m3")])],
          .before("q"))),
      Event(.insertItems([OutlineNode("m4")], .before("zz"))),
      Event(.deleteItems(["p", "zz"])),
      Event(.appendItems([OutlineNode("a"), OutlineNode("b")], section: "s", parent: nil)),
      Event(.expand(["a"])),
      Event(.deleteItems(["a"])),
      Event(.appendItems([OutlineNode("c")], section: nil, parent: "b")),
      Event(.expand(["a"])),
      Event(.select(["c"])),
      Event(.appendItems([OutlineNode("a")], section: nil, parent: "b")),
      Event(.moveItem("a", .before("c"))),
      Event(.batch([Event(.deleteItems(["c"])), Event(.expand(["nope"]))])),
      Event(.select(["c"])),
      Event(.update(item: "c", title: "C", fields: ["k": "v"])),
      Event(.insertItems([OutlineNode("d", title: "D")], .after("c"))),
      Event(.insertItems([OutlineNode("d")], .after("c"))),
      Event(.moveItem("b", .after("a"))),
      Event(.collapse(["b"])),
      Event(.reloadItems(["d", "zz"])),
      Event(.deselect(nil)),
    ]
    let (_, byOps) = try foldAlike(events)
    #expect(invariantViolations(byOps) == [])
  }

  /// A state decoded from a compact checkpoint against a dictionary loaded in stored form
  /// (an index file's) is keyed by the dictionary's entries: the fold after it matches the
  /// event fold without hashing an id, and the ids it reads back are the stored ones, UUIDs
  /// of either case included.
  @Test(arguments: IdShape.allCases)
  func checkpointStatesFoldOnFromTheirEntries(shape: IdShape) throws {
    var events: [Event] = []
    SampleSession.generate(
      events: 4_000, seed: 7, maxItems: 2_200, opening: .outline(items: 2_000, shape: shape)
    ) { events.append($0) }
    var encoder = EventRowEncoder()
    let head = try framePayload(Array(events[..<3_000]), &encoder)
    let tail = try framePayload(Array(events[3_000...]), &encoder)
    var decoder = EventDecoder()
    _ = try head.withUnsafeBytes { try decoder.skipFrame($0, firstSeq: 1, count: 3_000) }
    var byEvents = ListState()
    _ = fold(Array(events[..<3_000]), &byEvents)
    let count = decoder.dictionary.count
    let compact = try byEvents.compactEncoded(
      segment: 0, dictionaryCount: count, table: encoder.table)
    var loaded = EventDecoder()
    loaded.load(
      try IdSpace(stored: decoder.dictionary.bytes, ends: decoder.dictionary.ends),
      aliases: DefinitionAliases(vetted: count, map: [:]), segment: 0, defined: count,
      before: 3_001)
    var byOps = try compact.bytes.withUnsafeBytes { try loaded.decodeCheckpoint($0) }
    #expect(byOps == byEvents)
    #expect(byOps.forest.handleOf.filter { $0 >= 0 }.count == byOps.numberOfAllItems)
    var ops = FoldOps()
    try byOps.adopt(loaded.dictionary, aliases: loaded.aliases)
    try decodeOps(tail, &loaded, firstSeq: 3_001, count: 1_000, into: &ops)
    #expect(try fold(ops, &byOps) == fold(Array(events[3_000...]), &byEvents))
    #expect(byOps == byEvents)
    #expect(invariantViolations(byOps) == [])
    #expect(!byOps.ids.hasStringTable)
    // Encoding by the state's own entries gives the bytes the writer's lookups give.
    let table = IdTable(loaded.dictionary)
    let byEntries = try byOps.compactEncoded(segment: 0, dictionaryCount: loaded.defined)
    let looked = try byOps.compactEncoded(
      segment: 0, dictionaryCount: loaded.defined, table: table)
    #expect(byEntries.bytes == looked.bytes)
  }

  /// Record `i`'s fields (`FoldOps.fields`) name what `event` does: its op, section, parent,
  /// anchor, ids (inserted subtrees in pre-order; a batch's, those of the events inside it),
  /// label and time.
  func expectFields(
    _ ops: FoldOps, _ i: Int, _ ids: IdSpace, _ event: Event, _ what: String
  ) {
    #expect(ops.time(i) == event.time, "\(what)")
    let f = ops.fields(i)
    func text(_ e: Int32) -> String? { e == -1 ? nil : ops.name(entry: e, ids) }
    var listed: [String] = []
    func collect(_ g: FoldOpFields) {
      var w = g.idsStart
      for _ in 0..<g.idsCount {
        listed.append(text(ops.entry(atWord: w)) ?? "")
        w += g.idsStride
      }
    }
    if ops.isBatch(atWord: ops.start(i)) {
      var stack = [ops.batchRecords(atWord: ops.start(i))[...]]
      while var top = stack.popLast() {
        guard let w = top.popFirst() else { continue }
        stack.append(top)
        if ops.isBatch(atWord: w) {
          stack.append(ops.batchRecords(atWord: w)[...])
        } else {
          collect(ops.fields(atWord: w))
        }
      }
    } else {
      collect(f)
    }
    var section: String?
    var parent: String?
    var anchor: String?
    var label: String?
    var expected: [String] = []
    func subtrees(_ nodes: [OutlineNode]) { for n in nodes { n.forEachID { expected.append($0) } } }
    func add(_ op: ListOperation) {
      switch op {
      case .expand(let x), .collapse(let x), .select(let x), .reloadItems(let x),
        .reconfigureItems(let x), .deleteItems(let x), .appendSections(let x),
        .deleteSections(let x), .reloadSections(let x):
        expected += x
      case .insertSections(let x, _): expected += x
      case .deselect(let x): expected += x ?? []
      case .moveItem(let id, _), .update(let id, _, _): expected.append(id)
      case .insertItems(let nodes, _), .appendItems(let nodes, _, _),
        .replaceChildren(_, let nodes), .applySectionSnapshot(_, let nodes):
        subtrees(nodes)
      case .batch(let inner): for e in inner { add(e.operation) }
      case .moveSection, .deleteAllItems, .configure, .mark: break
      }
    }
    add(event.operation)
    switch event.operation {
    case .moveItem(_, let a), .insertItems(_, let a), .insertSections(_, let a):
      anchor = a.id
    case .moveSection(let id, let a):
      section = id
      anchor = a.id
    case .appendItems(_, let s, let p):
      section = s
      parent = p
    case .replaceChildren(let p, _): parent = p
    case .applySectionSnapshot(let s, _): section = s
    case .mark(let text): label = text
    default: break
    }
    #expect(ListOperation.allNames[f.name] == event.op, "\(what)")
    #expect(event.operation.nameIndex == f.name, "\(what)")
    #expect(listed == expected, "\(what)")
    #expect(text(f.section) == section, "\(what)")
    #expect(text(f.parent) == parent, "\(what)")
    #expect(text(f.anchor) == anchor, "\(what)")
    #expect(ops.label(f) == label, "\(what)")
  }
}
