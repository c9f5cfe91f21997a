import Foundation
import ListTapeJSON
import ListTapeSamples
import Testing

@testable import ListTapeModel

/// Encodes `events` as 2.0 rows (numbering new ids in `encoder`) and assembles them into
/// the payload of one event frame of segment `segment`.
func framePayload(
  _ events: [Event], _ encoder: inout EventRowEncoder, segment: UInt64 = 0
) throws -> [UInt8] {
  var assembler = FrameAssembler()
  return try framePayload(events, &encoder, segment: segment, assembler: &assembler)
}

/// `framePayload(_:_:segment:)` with the writer's `assembler`, which keeps the site model
/// from frame to frame as a log writer's does.
func framePayload(
  _ events: [Event], _ encoder: inout EventRowEncoder, segment: UInt64 = 0,
  assembler: inout FrameAssembler
) throws -> [UInt8] {
  var rows: [UInt8] = []
  for e in events {
    var row: [UInt8] = []
    try encoder.encode(e, into: &row)
    var n = row.count
    while n >= 0x80 {
      rows.append(UInt8(n & 0x7F) | 0x80)
      n >>= 7
    }
    rows.append(UInt8(n))
    rows += row
  }
  var out: [UInt8] = []
  var points: [Int] = []
  try rows.withUnsafeBytes { raw in
    try assembler.assemble(
      rows: raw, count: events.count, segment: segment, into: &out, flushPoints: &points)
  }
  return out
}

/// Decodes a whole 2.0 event frame numbered from `firstSeq`.
func decodeFrame(_ payload: [UInt8], _ decoder: inout EventDecoder, firstSeq: Int, count: Int)
  throws -> [Event]
{
  var events: [Event] = []
  let outcome = try payload.withUnsafeBytes { raw in
    try decoder.decodeFrame(raw, firstSeq: firstSeq, count: count) { _, e in
      events.append(e)
      return true
    }
  }
  guard outcome == .done else { throw CodecError("frame not decoded: \(outcome)", offset: 0) }
  return events
}

/// Format 2.0's columnar event frames, dictionary restarts and compact states.
@Suite struct FrameCodecTests {
  @Test func everyOpRoundTripsThroughOneFrame() throws {
    var encoder = EventRowEncoder()
    let events = EventRoundTripTests.events
    let payload = try framePayload(events, &encoder)
    var decoder = EventDecoder()
    #expect(try decodeFrame(payload, &decoder, firstSeq: 1, count: events.count) == events)
    #expect(decoder.dictionary.count == encoder.table.count)
    // Every strict prefix and every longer payload is an error, never a trap.
    for n in stride(from: 0, to: payload.count, by: 3) {
      var d = EventDecoder()
      #expect(throws: CodecError.self) {
        _ = try decodeFrame(Array(payload[..<n]), &d, firstSeq: 1, count: events.count)
      }
    }
    var d = EventDecoder()
    #expect(throws: CodecError.self) {
      _ = try decodeFrame(payload + [0], &d, firstSeq: 1, count: events.count)
    }
  }

  /// Random valid and faulty sessions, cut into frames of random sizes, with dictionary
  /// restarts now and then: decoding frame after frame gives the events back.
  @Test(arguments: [UInt64(1), 2, 3, 4])
  func randomSessionsRoundTripAcrossFramesAndRestarts(seed: UInt64) throws {
    var rng = SplitMix64(seed: seed)
    var gen = EventGenerator(seed: seed)
    var reference = Reference()
    var encoder = EventRowEncoder()
    var decoder = EventDecoder()
    var seq = 1
    var segment: UInt64 = 0
    for _ in 0..<60 {
      if rng.chance(15) {
        // A restart: the live ids (here, some of the table's) become the new dictionary.
        var ids: [String] = []
        var seen = Set<String>()
        for id in gen.everItems where rng.chance(50) && seen.insert(id).inserted { ids.append(id) }
        let payload = DictionaryPayload.encode(ids)
        try payload.bytes.withUnsafeBytes { raw in
          try decoder.restart(raw, seq: seq)
        }
        var table = IdTable()
        for id in ids { table.add(id) }
        encoder = EventRowEncoder(table: table)
        segment = UInt64(seq)
        #expect(decoder.dictionary.count == ids.count)
      }
      let n = 1 + rng.below(80)
      var events: [Event] = []
      for _ in 0..<n {
        let e = gen.event(reference)
        try? reference.apply(e)
        events.append(e)
      }
      let payload = try framePayload(events, &encoder, segment: segment)
      #expect(try decodeFrame(payload, &decoder, firstSeq: seq, count: n) == events)
      #expect(decoder.dictionary.count == encoder.table.count)
      seq += n
    }
  }

  /// A frame decoded again (a seek back into it) gives the same events: its definitions
  /// replace themselves rather than piling up.
  @Test func reDecodingAFrameFromItsStartIsIdempotent() throws {
    var encoder = EventRowEncoder()
    let first = try framePayload(Array(EventRoundTripTests.events[0..<20]), &encoder)
    let second = try framePayload(Array(EventRoundTripTests.events[20...]), &encoder)
    var decoder = EventDecoder()
    _ = try decodeFrame(first, &decoder, firstSeq: 1, count: 20)
    let rest = EventRoundTripTests.events.count - 20
    let once = try decodeFrame(second, &decoder, firstSeq: 21, count: rest)
    let again = try decodeFrame(second, &decoder, firstSeq: 21, count: rest)
    #expect(once == again)
    #expect(once == Array(EventRoundTripTests.events[20...]))
    // Stopping early still reads the frame's definitions.
    var stopped = EventDecoder()
    _ = try decodeFrame(first, &stopped, firstSeq: 1, count: 20)
    let outcome = try second.withUnsafeBytes { raw in
      try stopped.decodeFrame(raw, firstSeq: 21, count: rest) { seq, _ in seq < 23 }
    }
    #expect(outcome == .stopped(at: 23))
    #expect(stopped.dictionary.count == decoder.dictionary.count)
  }

  /// Identifiers come back byte for byte: canonical UUIDs of either case (stored as 16
  /// bytes), look-alikes that are not canonical, text sharing prefixes, canonically
  /// equivalent but distinct Unicode.
  @Test func identifiersReadBackExactly() throws {
    let ids = [
      "0F3A9C2E-1234-4ABC-8DEF-00112233AABB", "0f3a9c2e-1234-4abc-8def-00112233aabb",
      "0F3A9C2E-1234-4abc-8DEF-00112233AABB", "0F3A9C2E-1234-4ABC-8DEF-00112233AAB",
      "0F3A9C2E-1234-4ABC-8DEF-00112233AABBC", "0F3A9C2E+1234-4ABC-8DEF-00112233AABB",
      "00000000-0000-0000-0000-000000000000", "GGGGGGGG-1234-4ABC-8DEF-00112233AABB",
      "lib/g1/sub2/i-123", "lib/g1/sub2/i-124", "lib/g1/sub3/i-1", "l", "\u{E9}", "e\u{301}",
      "e\u{301}x", "🍎", "🍎🍏", "a\u{0}b",
    ]
    var encoder = EventRowEncoder()
    let events = ids.map { Event(.appendSections([$0])) } + [Event(.select(ids.reversed()))]
    let payload = try framePayload(events, &encoder)
    var decoder = EventDecoder()
    let back = try decodeFrame(payload, &decoder, firstSeq: 1, count: events.count)
    for (a, b) in zip(back, events) {
      guard case .appendSections(let x) = a.operation, case .appendSections(let y) = b.operation
      else { continue }
      #expect(Array(x[0].utf8) == Array(y[0].utf8))
    }
    guard case .select(let all) = back.last?.operation else {
      throw CodecError("no select", offset: 0)
    }
    #expect(all.map { Array($0.utf8) } == ids.reversed().map { Array($0.utf8) })
    // The same ids restart a dictionary and come back in order.
    let restart = DictionaryPayload.encode(ids)
    var d = EventDecoder()
    try restart.bytes.withUnsafeBytes { raw in try d.restart(raw, seq: 1) }
    #expect(
      (0..<ids.count).map { Array(d.dictionary.text($0).utf8) }
        == ids.map { Array($0.utf8) })
    // And so does their stored form (what an index file keeps).
    var stored: [UInt8] = []
    var ends: [UInt32] = []
    for id in ids {
      IdText.store(id, into: &stored)
      ends.append(UInt32(stored.count))
    }
    let loaded = try IdSpace(stored: stored, ends: ends)
    #expect((0..<ids.count).map { Array(loaded.text($0).utf8) } == ids.map { Array($0.utf8) })
  }

  /// A restart that lists an id twice (a section and an item may share one; a hostile log
  /// may repeat any) reads each repeat as its first entry, among thousands entered in one
  /// batch, and the string table finds every id at its first entry.
  @Test func aRestartReadsARepeatedIdAsItsFirstEntry() throws {
    var ids = (0..<5_000).map { "id-\($0)" }
    ids += ["id-7", "s", "id-4999", "s"]
    let restart = DictionaryPayload.encode(ids)
    var d = EventDecoder()
    try restart.bytes.withUnsafeBytes { raw in try d.restart(raw, seq: 1) }
    #expect(d.dictionary.count == ids.count)
    #expect(d.aliases.map == [5_000: 7, 5_002: 4_999, 5_003: 5_001])
    #expect(d.aliases.vetted == ids.count)
    #expect(d.dictionary.entry(of: "s") == 5_001)
    #expect(d.dictionary.entry(of: "id-4321") == 4_321)
    #expect(d.dictionary.entry(of: "id-5000") == nil)
  }

  /// A restart tells the fold where each entry of the dictionary before it went: the
  /// restart's first entry of the same id (a repeat read as its first), -1 for an id it
  /// does not list; so that a state renumbers by that table instead of comparing its ids.
  @Test func aRestartMapsTheEntriesBeforeIt() throws {
    var d = EventDecoder(logID: 3)
    let old = (0..<3_000).map { "id-\($0)" } + ["gone", "s"]
    try DictionaryPayload.encode(old).bytes.withUnsafeBytes { try d.restart($0, seq: 1) }
    let lineage = d.dictionary.lineage
    let new = ["s"] + (0..<3_000).reversed().map { "id-\($0)" } + ["s", "id-5", "fresh"]
    var ops = FoldOps()
    try DictionaryPayload.encode(new).bytes.withUnsafeBytes {
      try d.restart($0, seq: 10, into: &ops)
    }
    let from = try #require(ops.restarts.first?.from)
    #expect(from.lineage == lineage)
    let expected = old.map { id in new.firstIndex(of: id).map { Int32($0) } ?? -1 }
    #expect(from.entries == expected)
    // After lost events (a salvaged log), the fold drops what the restart does not list,
    // which the table cannot tell: no table then.
    var afterGaps = FoldOps()
    try DictionaryPayload.encode(old).bytes.withUnsafeBytes {
      try d.restart($0, seq: 20, afterGaps: true, into: &afterGaps)
    }
    #expect(afterGaps.restarts.first?.from == nil)
  }

  /// Mangled frames (passing the log's checksums, say forged) decode to an error or to
  /// events, never a crash or a hang.
  @Test func mangledFramesNeverCrash() throws {
    var rng = SplitMix64(seed: 77)
    var gen = EventGenerator(seed: 9)
    var reference = Reference()
    var events: [Event] = []
    for _ in 0..<300 {
      let e = gen.event(reference)
      try? reference.apply(e)
      events.append(e)
    }
    var encoder = EventRowEncoder()
    let payload = try framePayload(events, &encoder)
    var errors = 0
    for _ in 0..<3_000 {
      var bytes = payload
      for _ in 0..<(1 + rng.below(4)) {
        let i = rng.below(bytes.count)
        bytes[i] =
          rng.chance(50) ? UInt8(truncatingIfNeeded: rng.next()) : bytes[i] ^ (1 << rng.below(8))
      }
      var d = EventDecoder()
      do {
        _ = try decodeFrame(bytes, &d, firstSeq: 1, count: events.count)
      } catch {
        errors += 1
      }
    }
    #expect(errors > 0)
  }

  // MARK: Limits

  /// A chain of `depth` nested nodes.
  static func chain(_ depth: Int) -> OutlineNode {
    var node = OutlineNode("n\(depth)")
    for d in stride(from: depth - 1, through: 1, by: -1) {
      node = OutlineNode("n\(d)", children: [node])
    }
    return node
  }

  /// Batches nested `depth` deep.
  static func nestedBatches(_ depth: Int) -> Event {
    var e = Event(.mark("core"))
    for _ in 0..<depth { e = Event(.batch([e])) }
    return e
  }

  @Test func encodersRefuseWhatDecodersRefuse() throws {
    let deepest = Event(.appendItems([Self.chain(256)], section: "s", parent: nil))
    let tooDeep = Event(.appendItems([Self.chain(257)], section: "s", parent: nil))
    let batches = Self.nestedBatches(256)
    let tooManyBatches = Self.nestedBatches(257)
    let long = String(repeating: "x", count: CodecLimits.maxStringBytes)
    let tooLong = long + "x"
    let refused = [
      tooDeep, tooManyBatches, Event(.mark(tooLong)), Event(.select([tooLong])),
      Event(.update(item: "a", title: nil, fields: ["k": tooLong])), Event(.select([""])),
      Event(.appendItems([OutlineNode("")], section: "s", parent: nil)),
    ]
    for event in refused {
      var v1 = EventEncoder()
      var v2 = EventRowEncoder()
      var bytes: [UInt8] = [1, 2, 3]
      #expect(throws: CodecError.self) { try v1.encode(event, into: &bytes) }
      #expect(bytes == [1, 2, 3])
      #expect(throws: CodecError.self) { try v2.encode(event, into: &bytes) }
      #expect(bytes == [1, 2, 3])
      #expect(v2.table.count == 0)
    }
    // What the encoders accept at the limits, both decoders read back.
    for event in [deepest, batches, Event(.mark(long))] {
      var v1 = EventEncoder()
      var d1 = EventDecoder()
      #expect(try d1.decode(try v1.encode(event), seq: 1) == event)
      var v2 = EventRowEncoder()
      var d2 = EventDecoder()
      #expect(
        try decodeFrame(try framePayload([event], &v2), &d2, firstSeq: 1, count: 1) == [event])
    }
    // A refused event leaves the encoder as it was: the next event still decodes.
    var v1 = EventEncoder()
    var d1 = EventDecoder()
    #expect(throws: CodecError.self) { try v1.encode(Event(.select(["fresh", tooLong]))) }
    let next = Event(.select(["fresh"]))
    #expect(try d1.decode(try v1.encode(next), seq: 1) == next)
    // The row encoder forgets the entries a refused event defined before its refusal (ids
    // and a site, short and long), and keeps those defined before it.
    var v2 = EventRowEncoder()
    var d2 = EventDecoder()
    let first = Event(.select(["kept", "a-kept-identifier-of-some-length"]))
    #expect(
      try decodeFrame(try framePayload([first], &v2), &d2, firstSeq: 1, count: 1) == [first])
    var row: [UInt8] = []
    let before = v2.table.count
    var refusedEvent = Event(
      .select(["fresh", "kept", "a-fresh-identifier-of-some-length", "fresh", tooLong]))
    refusedEvent.site = "Refused.swift:1"
    #expect(throws: CodecError.self) { try v2.encode(refusedEvent, into: &row) }
    #expect(v2.table.count == before)
    for id in ["fresh", "a-fresh-identifier-of-some-length", "Refused.swift:1"] {
      #expect(v2.table.number(of: id) == nil, "\(id)")
    }
    #expect(v2.table.number(of: "kept") == 0)
    #expect(v2.table.number(of: "a-kept-identifier-of-some-length") == 1)
    var again = Event(.select(["a-fresh-identifier-of-some-length", "kept", "fresh"]))
    again.site = "Refused.swift:1"
    #expect(
      try decodeFrame(try framePayload([again], &v2), &d2, firstSeq: 2, count: 1) == [again])
  }

  /// Decoding a legal 256-level subtree or 256 nested batches needs no deep call stack:
  /// it runs on a thread with 64 KiB of stack (Apple platforms give secondary threads
  /// 512 KiB; a recursive decoder needs far more for this).
  @Test func deepEventsDecodeOnASmallStack() throws {
    let events = [
      Event(.appendItems([Self.chain(256)], section: "s", parent: nil)), Self.nestedBatches(256),
    ]
    var v1 = EventEncoder()
    let records = try events.map { try v1.encode($0) }
    var v2 = EventRowEncoder()
    let frame = try framePayload(events, &v2)
    // Decoded there, compared here: `==` and the release of nested nodes recurse by nature.
    let decoded = runOnSmallStack { () -> [[Event]] in
      var d1 = EventDecoder()
      var d2 = EventDecoder()
      let a = records.enumerated().compactMap { try? d1.decode($0.element, seq: $0.offset + 1) }
      let b = (try? decodeFrame(frame, &d2, firstSeq: 1, count: events.count)) ?? []
      return [a, b]
    }
    #expect(decoded == [events, events])
  }

  // MARK: UTF-8 and compact states

  /// `UTF8Validation` (the builder's, the JSON parser's and the codecs' check) agrees with
  /// the standard library's on short random byte runs rich in the boundary cases
  /// (continuation bytes, overlong leads, surrogates, 0xF4 0x90).
  @Test func utf8CheckAgreesWithTheStandardLibrary() {
    var rng = SplitMix64(seed: 5)
    let interesting: [UInt8] = [
      0x00, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC1, 0xC2, 0xDF, 0xE0, 0xE1,
      0xEC, 0xED, 0xEE, 0xEF, 0xF0, 0xF1, 0xF3, 0xF4, 0xF5, 0xFF,
    ]
    for round in 0..<200_000 {
      var bytes = (0..<(1 + rng.below(12))).map { _ in
        rng.chance(70)
          ? interesting[rng.below(interesting.count)] : UInt8(truncatingIfNeeded: rng.next())
      }
      // Long ASCII runs take the eight-bytes-at-a-time path first.
      if round % 3 == 0 { bytes = Array("abcdefghij".utf8) + bytes }
      let expected: Bool
      if #available(macOS 15, iOS 18, *) {
        expected = String(validating: bytes, as: UTF8.self) != nil
      } else {
        // Decoding replaces each invalid sequence, so only valid bytes come back unchanged.
        expected = String(decoding: bytes, as: UTF8.self).utf8.elementsEqual(bytes)
      }
      let got = bytes.withUnsafeBufferPointer { UTF8Validation.isValid($0) }
      #expect(got == expected, "\(bytes)")
      if got != expected { return }
    }
  }

  /// The index's encoding: a fold's own entries written as they are (no table), from
  /// states whose handles a long session scattered, with titles, fields and selections.
  @Test(arguments: [UInt64(21), 22])
  func compactStatesOfAFoldRoundTrip(seed: UInt64) throws {
    var state = ListState()
    var n = 0
    var checked = 0
    try SampleSession.generate(
      events: 3_000, seed: seed, maxItems: 900, opening: .outline(items: 600, shape: .uuid)
    ) { e in
      try? state.apply(e)
      n += 1
      guard n % 300 == 0 else { return }
      let ids = state.forest.ids
      let (bytes, columns) = try state.compactEncoded(segment: 3, dictionaryCount: ids.count)
      #expect(columns.count == 5)
      let back = try bytes.withUnsafeBytes { raw in
        try ListState(compact: raw, ids: ids, aliases: DefinitionAliases())
      }
      #expect(back == state, "after event \(n)")
      checked += 1
      // An entry past the dictionary's end names the id it could not write.
      if state.numberOfAllItems > 0 {
        #expect(throws: CodecError.self) {
          try state.compactEncoded(segment: 3, dictionaryCount: 0)
        }
      }
    }
    #expect(checked == 10)
  }

  /// The index build's copy of a state, encoded on another thread while the fold goes on:
  /// it gives the bytes the state had when copied, whatever the state did after.
  @Test func aCompactImageEncodesTheStateItCopied() throws {
    var state = ListState()
    var n = 0
    var copies: [(image: CompactImage, count: Int, bytes: [UInt8])] = []
    try SampleSession.generate(
      events: 2_000, seed: 5, maxItems: 700, opening: .outline(items: 500, shape: .path)
    ) { e in
      try? state.apply(e)
      n += 1
      guard n % 400 == 0 else { return }
      let count = state.forest.ids.count
      let bytes = try state.compactEncoded(segment: 1, dictionaryCount: count).bytes
      copies.append((CompactImage(state), count, bytes))
    }
    #expect(copies.count == 5)
    for c in copies {
      #expect(try c.image.encoded(segment: 1, dictionaryCount: c.count).bytes == c.bytes)
    }
    // Without the ids, an entry past the dictionary is named by its number.
    let last = try #require(copies.last)
    #expect {
      try last.image.encoded(segment: 1, dictionaryCount: 0)
    } throws: { error in
      (error as? CodecError)?.message.contains("identifier entry") == true
    }
  }

  @Test(arguments: [UInt64(11), 12, 13])
  func compactStatesRoundTrip(seed: UInt64) throws {
    var gen = EventGenerator(seed: seed)
    var reference = Reference()
    var state = ListState()
    var table = IdTable()
    var dictionary = IdSpace()
    for i in 0..<1_500 {
      let e = gen.event(reference)
      try? reference.apply(e)
      try? state.apply(e)
      for id in e.operation.itemIDs + sectionIDs(e) where table.number(of: id) == nil {
        table.add(id)
        dictionary.append(id)
      }
      guard i % 250 == 249 else { continue }
      let (bytes, _) = try state.compactEncoded(
        segment: 7, dictionaryCount: table.count, table: table)
      let back = try bytes.withUnsafeBytes { raw in
        try ListState(compact: raw, ids: dictionary, aliases: DefinitionAliases())
      }
      #expect(back == state)
      #expect(invariantViolations(back).isEmpty)
      // A dictionary short of the entries the state needs is refused.
      let short = IdSpace()
      #expect(throws: CodecError.self) {
        _ = try bytes.withUnsafeBytes { raw in
          try ListState(compact: raw, ids: short, aliases: DefinitionAliases())
        }
      }
    }
  }

  /// A compact state of one section "S" holding a chain d0 > d1 > ... > d255 (the deepest
  /// the protocol allows), with the dictionary it was encoded against and its column offsets.
  func deepestChain() throws -> (bytes: [UInt8], columns: [Int], dictionary: IdSpace) {
    var node = OutlineNode("d255")
    for i in stride(from: 254, through: 0, by: -1) {
      var parent = OutlineNode("d\(i)")
      parent.children = [node]
      node = parent
    }
    var state = ListState()
    try state.appendSections(["S"])
    try state.appendItems([node], toSection: "S")
    var table = IdTable()
    var dictionary = IdSpace()
    for id in ["S"] + (0..<256).map({ "d\($0)" }) {
      table.add(id)
      dictionary.append(id)
    }
    let (bytes, columns) = try state.compactEncoded(
      segment: 0, dictionaryCount: table.count, table: table)
    let check = dictionary
    #expect(
      try bytes.withUnsafeBytes {
        try ListState(compact: $0, ids: check, aliases: DefinitionAliases())
      } == state)
    return (bytes, columns, dictionary)
  }

  /// Compact checkpoints are built like canonical ones (`ListStateBuilder`): a chain one
  /// level deeper than the protocol allows (d0 at level 0 ... d256 at level 256, written by
  /// hand since no state holds it) is refused, not read back as a state no fold could make.
  @Test func compactStatesKeepTheNestingLimit() throws {
    let ids = ["S"] + (0...256).map { "d\($0)" }
    var dictionary = IdSpace()
    for id in ids { dictionary.append(id) }
    var sections = ByteSink()
    sections.count(0)  // "S"
    sections.count(257)
    var levels = ByteSink()
    for level in 0...256 { levels.count(level) }
    let flags = [UInt8](repeating: 0, count: 257)
    var refs = ByteSink()
    refs.zigzag(1)  // d0 is entry 1 (previous -1)
    for _ in 1...256 { refs.zigzag(0) }
    let bytes = compactStateBytes(
      dictionaryCount: ids.count, sections: 1,
      columns: [sections.bytes, levels.bytes, flags, refs.bytes, []])
    #expect {
      _ = try bytes.withUnsafeBytes {
        try ListState(compact: $0, ids: dictionary, aliases: DefinitionAliases())
      }
    } throws: { error in
      (error as? CodecError)?.message.contains("item level 256 is past the deepest level") == true
    }
    // One level less is the deepest legal chain, and reads back.
    var sections255 = ByteSink()
    sections255.count(0)
    sections255.count(256)
    var levels255 = ByteSink()
    for level in 0...255 { levels255.count(level) }
    let legal = compactStateBytes(
      dictionaryCount: ids.count - 1, sections: 1,
      columns: [
        sections255.bytes, levels255.bytes, Array(flags.dropLast()), Array(refs.bytes.dropLast()),
        [],
      ])
    let state = try legal.withUnsafeBytes {
      try ListState(compact: $0, ids: dictionary, aliases: DefinitionAliases())
    }
    #expect(state.numberOfAllItems == 256)
    #expect(state.level(of: "d255") == 255)
  }

  /// An entry named twice (the last item's entry delta turned from +0 into -1) is a
  /// duplicate item, refused as in canonical states.
  @Test func compactStatesRefuseDuplicateItems() throws {
    var (bytes, columns, dictionary) = try deepestChain()
    let end = columns[4]
    #expect(bytes[end - 1] == 0)
    bytes[end - 1] = 1  // zigzag(-1)
    #expect {
      _ = try bytes.withUnsafeBytes {
        try ListState(compact: $0, ids: dictionary, aliases: DefinitionAliases())
      }
    } throws: { error in
      (error as? CodecError)?.message.contains("duplicate item \"d254\"") == true
    }
  }

  /// A state read while its dictionary is still coming (`CompactIDs` promised by count)
  /// is the state read with the dictionary at hand; a failure's message waits for the
  /// dictionary to name the id, and a dictionary that is not the promised one (another
  /// size, or none) fails the load.
  @Test func compactStatesReadWithAPromisedDictionary() throws {
    let (bytes, _, dictionary) = try deepestChain()
    var asked = 0
    let promised = CompactIDs(count: dictionary.count) { () throws(CodecError) in
      asked += 1
      return dictionary
    }
    let state = try bytes.withUnsafeBytes {
      try ListState(compact: $0, ids: promised, aliases: DefinitionAliases())
    }
    #expect(asked >= 1)
    #expect(
      state
        == (try bytes.withUnsafeBytes {
          try ListState(compact: $0, ids: dictionary, aliases: DefinitionAliases())
        }))
    // A duplicate entry is named through the promised dictionary.
    var duplicate = bytes
    let (_, columns, _) = try deepestChain()
    duplicate[columns[4] - 1] = 1
    #expect {
      _ = try duplicate.withUnsafeBytes {
        try ListState(compact: $0, ids: promised, aliases: DefinitionAliases())
      }
    } throws: { error in
      (error as? CodecError)?.message.contains("duplicate item \"d254\"") == true
    }
    var shorter = dictionary
    shorter.append("extra")
    for broken in [
      CompactIDs(count: dictionary.count) { () throws(CodecError) in shorter },
      CompactIDs(count: dictionary.count) { () throws(CodecError) in
        throw CodecError("no dictionary", offset: 0)
      },
    ] {
      #expect(throws: CodecError.self) {
        _ = try bytes.withUnsafeBytes {
          try ListState(compact: $0, ids: broken, aliases: DefinitionAliases())
        }
      }
    }
  }

  func sectionIDs(_ e: Event) -> [String] {
    switch e.operation {
    case .appendSections(let l), .insertSections(let l, _): return l
    case .batch(let events): return events.flatMap { sectionIDs($0) }
    case .appendItems(_, let s?, _): return [s]
    default: return []
    }
  }
}

/// Runs `body` on a new thread with 64 KiB of stack and returns its result.
func runOnSmallStack<T>(_ body: @escaping () -> T) -> T? {
  let box = SmallStackBox(body)
  var attr = pthread_attr_t()
  pthread_attr_init(&attr)
  pthread_attr_setstacksize(&attr, 64 << 10)
  #if canImport(Darwin)
  var thread: pthread_t?
  #else
  var thread = pthread_t()
  #endif
  let context = Unmanaged.passRetained(box as SmallStackRun).toOpaque()
  let rc = pthread_create(
    &thread, &attr,
    { raw in
      guard let raw else { return nil }
      Unmanaged<SmallStackRun>.fromOpaque(raw).takeRetainedValue().run()
      return nil
    }, context)
  guard rc == 0 else { return nil }
  #if canImport(Darwin)
  if let thread { pthread_join(thread, nil) }
  #else
  pthread_join(thread, nil)
  #endif
  return box.result
}

/// What the small-stack thread runs.
class SmallStackRun: @unchecked Sendable {
  func run() {}
}

/// A body and its result, handed to the small-stack thread and read after it joined.
final class SmallStackBox<T>: SmallStackRun, @unchecked Sendable {
  var result: T?
  let body: () -> T
  init(_ body: @escaping () -> T) { self.body = body }
  override func run() { result = body() }
}
