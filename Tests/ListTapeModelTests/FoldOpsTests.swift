import Foundation
import ListTapeSamples
import Testing

@testable import ListTapeModel

/// The fold on dictionary entries (`FoldOps`, `ListState.apply(_:_:_:)`) against the fold of
/// events: the same events back, the same faults, the same states, frame after frame.
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
  func fold(_ ops: FoldOps, _ state: inout ListState, _ entries: inout FoldEntries) throws
    -> [ListFault?]
  {
    var faults: [ListFault?] = []
    for i in 0..<ops.count {
      let fault = try state.apply(ops, i, &entries)
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

  /// Random valid, faulty and batched events (deep ones too), cut into frames of random
  /// sizes with dictionary restarts now and then.
  @Test(arguments: [UInt64(1), 2, 3, 4, 5, 6])
  func randomSessionsFoldAlike(seed: UInt64) throws {
    var rng = SplitMix64(seed: seed)
    var gen = EventGenerator(seed: seed)
    gen.deep = seed % 2 == 0
    var reference = Reference()
    var encoder = EventRowEncoder()
    var eventDecoder = EventDecoder()
    var opsDecoder = EventDecoder()
    var entries = FoldEntries(opsDecoder.dictionary)
    var byEvents = ListState()
    var byOps = ListState()
    var seq = 1
    var segment: UInt64 = 0
    var ops = FoldOps()
    for frame in 0..<50 {
      ops.removeAll()
      if rng.chance(12) {
        var ids: [String] = []
        var seen = Set<String>()
        for id in gen.everItems where rng.chance(70) && seen.insert(id).inserted { ids.append(id) }
        let payload = DictionaryPayload.encode(ids)
        try payload.bytes.withUnsafeBytes { raw in
          try eventDecoder.restart(raw, seq: seq)
          try opsDecoder.restart(raw, seq: seq, into: &ops)
        }
        var table = IdTable()
        for id in ids { table.add(id) }
        encoder = EventRowEncoder(table: table)
        segment = UInt64(seq)
      }
      if frame == 25 {
        // A new fold over the same state (a seek's state folded further): a new lineage.
        entries = FoldEntries(opsDecoder.dictionary)
      }
      let n = 1 + rng.below(60)
      var events: [Event] = []
      for _ in 0..<n {
        let e = gen.event(reference)
        try? reference.apply(e)
        events.append(e)
      }
      let payload = try framePayload(events, &encoder, segment: segment)
      let decoded = try decodeFrame(payload, &eventDecoder, firstSeq: seq, count: n)
      try decodeOps(payload, &opsDecoder, firstSeq: seq, count: n, into: &ops)
      let eventFaults = fold(decoded, &byEvents)
      let opsFaults = try fold(ops, &byOps, &entries)
      #expect(opsFaults == eventFaults, "frame \(frame)")
      #expect(byOps == byEvents, "frame \(frame)")
      // The operations give the decoder's events back.
      var back: [Event] = []
      var replayEntries = FoldEntries(opsDecoder.dictionary)
      for i in 0..<ops.count where ops.isEvent(i) { back.append(try ops.event(i, &replayEntries)) }
      #expect(back == decoded, "frame \(frame)")
      // And their fields (what `export --parquet` reads without an `Event`) name the same.
      var k = 0
      for i in 0..<ops.count where ops.isEvent(i) {
        try expectFields(ops, i, &replayEntries, decoded[k], "frame \(frame) event \(k)")
        k += 1
      }
      seq += n
    }
    #expect(invariantViolations(byOps) == [])
    #expect(byOps.encoded() == byEvents.encoded())
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
    // The state after event 2,000 by events, then the rest both ways.
    var byEvents = ListState()
    _ = fold(Array(events[..<2_000]), &byEvents)
    var byOps = byEvents
    var eventDecoder = EventDecoder()
    var opsDecoder = EventDecoder()
    var entries = FoldEntries(opsDecoder.dictionary)
    var started = false
    var ops = FoldOps()
    for (first, count, payload) in payloads {
      let decoded = try decodeFrame(payload, &eventDecoder, firstSeq: first, count: count)
      if first + count <= 2_000 {
        _ = try decodeFrame(payload, &opsDecoder, firstSeq: first, count: count)
        continue
      }
      if !started {
        // The fold begins with the dictionary as the frame holding its first event needs.
        entries = FoldEntries(opsDecoder.dictionary)
        started = true
      }
      ops.removeAll()
      try decodeOps(payload, &opsDecoder, firstSeq: first, count: count, from: 2_001, into: &ops)
      let wanted = decoded.enumerated().filter { first + $0.offset > 2_000 }.map(\.element)
      #expect(try fold(ops, &byOps, &entries) == fold(wanted, &byEvents))
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
    var encoder = EventRowEncoder()
    let payload = try framePayload(events, &encoder)
    var decoder = EventDecoder()
    var ops = FoldOps()
    try decodeOps(payload, &decoder, firstSeq: 1, count: events.count, into: &ops)
    var byOps = ListState()
    var entries = FoldEntries(EventDecoder().dictionary)
    var byEvents = ListState()
    #expect(try fold(ops, &byOps, &entries) == fold(events, &byEvents))
    #expect(byOps == byEvents)
    #expect(invariantViolations(byOps) == [])
  }

  /// A state decoded from a compact checkpoint against a dictionary loaded in stored form
  /// (an index file's) knows its entries: the fold after it matches the event fold, and
  /// the ids it reads back are the stored ones, UUIDs of either case included.
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
    _ = try decodeFrame(head, &decoder, firstSeq: 1, count: 3_000)
    var byEvents = ListState()
    _ = fold(Array(events[..<3_000]), &byEvents)
    let compact = try byEvents.compactEncoded(
      segment: 0, dictionaryCount: decoder.dictionary.count, table: encoder.table)
    let (stored, ends) = try decoder.dictionary.storedForm(upTo: decoder.dictionary.count)
    var loaded = EventDecoder()
    loaded.load(try IdDictionary(stored: stored, ends: ends), segment: 0, before: 3_001)
    var byOps = try compact.bytes.withUnsafeBytes { try loaded.decodeCheckpoint($0) }
    #expect(byOps == byEvents)
    #expect(byOps.forest.entryLineage == loaded.dictionary.lineage)
    #expect(byOps.forest.entryHandles.filter { $0 >= 0 }.count == byOps.numberOfAllItems)
    var entries = FoldEntries(loaded.dictionary)
    var ops = FoldOps()
    try decodeOps(tail, &loaded, firstSeq: 3_001, count: 1_000, into: &ops)
    #expect(try fold(ops, &byOps, &entries) == fold(Array(events[3_000...]), &byEvents))
    #expect(byOps == byEvents)
    #expect(invariantViolations(byOps) == [])
    // Encoding with the entries the fold knows gives the bytes the id lookups give.
    var dictionary = loaded.dictionary
    let table = try IdTable(&dictionary)
    let count = dictionary.count
    let known = try byOps.compactEncoded(
      segment: 0, dictionaryCount: count, table: table, lineage: entries.lineage)
    let looked = try byOps.compactEncoded(segment: 0, dictionaryCount: count, table: table)
    #expect(known.bytes == looked.bytes)
    #expect(byOps.forest.knownEntry(of: 0) != nil || byOps.numberOfAllItems == 0)
  }

  /// Record `i`'s fields (`FoldOps.fields`) name what `event` does: its op, section, parent,
  /// anchor, ids (inserted subtrees in pre-order), label and time.
  func expectFields(
    _ ops: FoldOps, _ i: Int, _ entries: inout FoldEntries, _ event: Event, _ what: String
  ) throws {
    #expect(ops.time(i) == event.time, "\(what)")
    guard let f = ops.fields(i) else {
      #expect(ops.wholeEvent(i) == event, "\(what)")
      return
    }
    #expect(ops.wholeEvent(i) == nil, "\(what)")
    func text(_ e: Int32) throws -> String? {
      e < 0 ? nil : try entries.withText(e) { String(decoding: $0, as: UTF8.self) }
    }
    var ids: [String] = []
    var w = f.idsStart
    for _ in 0..<f.idsCount {
      ids.append(try text(ops.entry(atWord: w)) ?? "")
      w += f.idsStride
    }
    var section: String?
    var parent: String?
    var anchor: String?
    var label: String?
    var expected: [String] = []
    func subtrees(_ nodes: [OutlineNode]) { for n in nodes { n.forEachID { expected.append($0) } } }
    switch event.operation {
    case .expand(let x), .collapse(let x), .select(let x), .reloadItems(let x),
      .reconfigureItems(let x), .deleteItems(let x):
      expected = x
    case .deselect(let x): expected = x ?? []
    case .moveItem(let id, let a):
      expected = [id]
      anchor = a.id
    case .insertItems(let nodes, let a):
      subtrees(nodes)
      anchor = a.id
    case .appendItems(let nodes, let s, let p):
      subtrees(nodes)
      section = s
      parent = p
    case .update(let item, _, _): expected = [item]
    case .mark(let text): label = text
    default:
      Issue.record("\(what): \(event.op) has fields")
    }
    #expect(ListOperation.allNames[f.name] == event.op, "\(what)")
    #expect(event.operation.nameIndex == f.name, "\(what)")
    #expect(ids == expected, "\(what)")
    #expect(try text(f.section) == section, "\(what)")
    #expect(try text(f.parent) == parent, "\(what)")
    #expect(try text(f.anchor) == anchor, "\(what)")
    #expect(f.label == label, "\(what)")
  }
}
