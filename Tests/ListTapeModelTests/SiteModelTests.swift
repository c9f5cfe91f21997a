import ListTapeJSON
import ListTapeSamples
import Testing

@testable import ListTapeModel

/// Layout 3 frames: sites range-coded against a model the segment's frames share
/// (`SiteModel`), read back by readers that start anywhere.
@Suite struct SiteModelTests {
  /// Random sessions with sites drawn the way an app makes them (a few functions per op on
  /// the screen the person is on), cut into frames by one assembler.
  static func session(seed: UInt64, frames: Int = 12) throws -> (
    frames: [(payload: [UInt8], events: [Event], firstSeq: Int)], encoder: EventRowEncoder
  ) {
    var rng = SplitMix64(seed: seed)
    var gen = EventGenerator(seed: seed)
    var reference = Reference()
    var encoder = EventRowEncoder()
    var assembler = FrameAssembler()
    var out: [(payload: [UInt8], events: [Event], firstSeq: Int)] = []
    var seq = 1
    var screen = 0
    for _ in 0..<frames {
      let n = 1 + rng.below(300)
      var events: [Event] = []
      for _ in 0..<n {
        var e = gen.event(reference)
        try? reference.apply(e)
        if rng.chance(3) { screen = rng.below(12) }
        if rng.chance(95) {
          let path = rng.chance(70) ? 0 : 1 + rng.below(3)
          e.site = "Screen\(screen).swift:\(10 * path + e.operation.name.utf8.count) f\(path)()"
        }
        events.append(e)
      }
      out.append((try framePayload(events, &encoder, assembler: &assembler), events, seq))
      seq += n
    }
    return (out, encoder)
  }

  /// Decodes `frames` in order with `decoder`: every event as recorded but for sites it
  /// lost (never a wrong one); how many it lost.
  static func readWithoutWrongSites(
    _ frames: ArraySlice<(payload: [UInt8], events: [Event], firstSeq: Int)>,
    _ decoder: inout EventDecoder
  ) throws -> Int {
    var lost = 0
    for f in frames {
      let read = try decodeFrame(f.payload, &decoder, firstSeq: f.firstSeq, count: f.events.count)
      for (a, b) in zip(read, f.events) {
        var bare = b
        bare.site = a.site == nil ? nil : b.site
        #expect(a == bare)
        if a.site == nil && b.site != nil { lost += 1 }
      }
    }
    return lost
  }

  /// Decodes `frames` in order with `decoder`, expecting each to read back as recorded.
  static func expectReadBack(
    _ frames: ArraySlice<(payload: [UInt8], events: [Event], firstSeq: Int)>,
    _ decoder: inout EventDecoder
  ) throws {
    for f in frames {
      #expect(
        try decodeFrame(f.payload, &decoder, firstSeq: f.firstSeq, count: f.events.count)
          == f.events)
    }
  }

  /// Reads `frames` for their definitions alone (`skipFrame`).
  static func skip(
    _ frames: ArraySlice<(payload: [UInt8], events: [Event], firstSeq: Int)>,
    _ decoder: inout EventDecoder, prefix: Bool = false
  ) throws {
    for f in frames {
      _ = try f.payload.withUnsafeBytes { raw in
        try decoder.skipFrame(raw, firstSeq: f.firstSeq, count: f.events.count, prefix: prefix)
      }
    }
  }

  @Test func theRangeCoderGivesBackWhatItCodedAndReadsItsBytesExactly() throws {
    var rng = SplitMix64(seed: 11)
    var probabilities = [UInt16](repeating: RangeProbability.half, count: 4)
    var coder = RangeEncoder()
    var script: [(slot: Int, bit: Bool, value: UInt64, width: Int)] = []
    for _ in 0..<20_000 {
      let slot = rng.below(4)
      // Skewed bits, so probabilities adapt far from one half.
      let bit = rng.below(100) < [3, 50, 90, 99][slot]
      let width = rng.chance(10) ? rng.below(33) : 0
      let value = width == 0 ? 0 : rng.next() & (UInt64.max >> (64 - width))
      script.append((slot, bit, value, width))
      coder.encode(bit, &probabilities[slot])
      if width > 0 { coder.encodeDirect(value, width: width) }
    }
    coder.finish()
    let bytes = coder.bytes
    // Skewed bits cost less than a bit each.
    #expect(bytes.count < 20_000 / 8 + 2_000 * 4 + 16)
    try bytes.withUnsafeBytes { raw in
      var decoder = try RangeDecoder(ByteSource(raw))
      var p = [UInt16](repeating: RangeProbability.half, count: 4)
      for s in script {
        #expect(try decoder.decode(&p[s.slot]) == s.bit)
        if s.width > 0 { #expect(try decoder.decodeDirect(width: s.width) == s.value) }
      }
      #expect(decoder.isAtEnd)
    }
    // A prefix fails somewhere, never traps.
    for n in [0, 4, 5, bytes.count / 2, bytes.count - 1] {
      let cut = Array(bytes[..<n])
      #expect(throws: CodecError.self) {
        try cut.withUnsafeBytes { raw in
          var decoder = try RangeDecoder(ByteSource(raw))
          var p = [UInt16](repeating: RangeProbability.half, count: 4)
          for s in script {
            _ = try decoder.decode(&p[s.slot])
            if s.width > 0 { _ = try decoder.decodeDirect(width: s.width) }
          }
        }
      }
    }
  }

  @Test(arguments: [UInt64(1), 2, 3])
  func framesShareOneModelAndReadBackInOrder(seed: UInt64) throws {
    let (frames, _) = try Self.session(seed: seed)
    var decoder = EventDecoder()
    for (i, f) in frames.enumerated() {
      #expect(f.payload.first == FrameLayout.modelVersion)
      // The first frame starts the model; the others go on with it.
      #expect((siteRun(f.payload) == 0) == (i == 0))
      #expect(
        try decodeFrame(f.payload, &decoder, firstSeq: f.firstSeq, count: f.events.count)
          == f.events)
    }
  }

  @Test func aReaderOfDefinitionsAloneKeepsTheModel() throws {
    let (frames, _) = try Self.session(seed: 4)
    var decoder = EventDecoder()
    try Self.skip(frames.dropLast(3), &decoder, prefix: true)
    try Self.expectReadBack(frames.suffix(3), &decoder)
  }

  @Test func aFrameReadInPartThenAgainKeepsItsSites() throws {
    let (frames, _) = try Self.session(seed: 5)
    var decoder = EventDecoder()
    let k = frames.indices.first { frames[$0].events.count > 10 } ?? 0
    for f in frames[..<k] {
      _ = try decodeFrame(f.payload, &decoder, firstSeq: f.firstSeq, count: f.events.count)
    }
    let f = frames[k]
    let mid = f.firstSeq + f.events.count / 2
    // What a seek does: the frame to event `mid`, then again from there (its definitions
    // already read), then on.
    var ops = FoldOps()
    let stopped = try f.payload.withUnsafeBytes { raw in
      try decoder.decodeFrame(
        raw, firstSeq: f.firstSeq, count: f.events.count, from: 1, through: mid, into: &ops)
    }
    #expect(stopped == .stopped(at: mid + 1))
    var again: [Event] = []
    _ = try f.payload.withUnsafeBytes { raw in
      try decoder.decodeFrame(raw, firstSeq: f.firstSeq, count: f.events.count, from: mid + 1) {
        _, e in
        again.append(e)
        return true
      }
    }
    #expect(again == Array(f.events[(mid + 1 - f.firstSeq)...]))
    try Self.expectReadBack(frames[(k + 1)...], &decoder)
  }

  @Test func aReaderWithoutTheModelKeepsEveryOperationAndNoWrongSite() throws {
    let (frames, _) = try Self.session(seed: 6)
    var decoder = EventDecoder()
    try Self.skip(frames.dropLast(4), &decoder)
    // As after a seek from an index without reading the frames before (`load`).
    decoder.sites.forget()
    #expect(try Self.readWithoutWrongSites(frames.suffix(4), &decoder) > 0)
  }

  @Test func aReaderThatWantsStatesOnlyReadsNoCodedSite() throws {
    let (frames, _) = try Self.session(seed: 7)
    var decoder = EventDecoder()
    decoder.sites.enabled = false
    #expect(try Self.readWithoutWrongSites(frames[...], &decoder) > 0)
    #expect(!decoder.sites.live)
  }

  @Test func aNewSegmentANewWriterOrLayoutTwo() throws {
    let events = (0..<50).map { i in
      Event(
        .appendItems([OutlineNode("i\(i)")], section: nil, parent: nil), site: "A.swift:\(i % 3)")
    }
    var encoder = EventRowEncoder()
    var assembler = FrameAssembler()
    let first = try framePayload(Array(events[..<20]), &encoder, assembler: &assembler)
    let second = try framePayload(Array(events[20..<30]), &encoder, assembler: &assembler)
    #expect(siteRun(first) == 0)
    #expect(siteRun(second) == 20)
    // A writer that reopens the log starts its model over, and so does a new segment.
    var reopened = FrameAssembler()
    #expect(siteRun(try framePayload(Array(events[30..<40]), &encoder, assembler: &reopened)) == 0)
    var restarted = EventRowEncoder()
    #expect(
      siteRun(try framePayload(events, &restarted, segment: 7, assembler: &assembler)) == 0)
    // Layout 2, as writers before the model wrote it, still reads.
    var old = FrameAssembler()
    old.modelSites = false
    var oldEncoder = EventRowEncoder()
    let two = try framePayload(events, &oldEncoder, assembler: &old)
    #expect(two.first == FrameLayout.sitedVersion)
    var decoder = EventDecoder()
    #expect(try decodeFrame(two, &decoder, firstSeq: 1, count: events.count) == events)
  }

  @Test func damagedCodedSitesAreErrorsOrLostSitesNeverTraps() throws {
    let (frames, _) = try Self.session(seed: 8, frames: 3)
    let f = frames[1]
    var clean = EventDecoder()
    _ = try decodeFrame(frames[0].payload, &clean, firstSeq: 1, count: frames[0].events.count)
    var rng = SplitMix64(seed: 9)
    for trial in 0..<300 {
      var bytes = f.payload
      let at = trial < 100 ? bytes.count - 1 - trial % bytes.count : rng.below(bytes.count)
      bytes[at] ^= UInt8(1 + rng.below(255))
      var d = clean
      if let read = try? decodeFrame(bytes, &d, firstSeq: f.firstSeq, count: f.events.count) {
        #expect(read.count == f.events.count)
      }
    }
    for n in stride(from: 0, to: f.payload.count, by: 5) {
      var d = clean
      #expect(throws: CodecError.self) {
        _ = try decodeFrame(Array(f.payload[..<n]), &d, firstSeq: f.firstSeq, count: f.events.count)
      }
    }
  }

  @Test func aStoredModelReadsBackAndRefusesDamage() throws {
    let (frames, _) = try Self.session(seed: 10)
    var decoder = EventDecoder()
    for f in frames.dropLast(2) {
      _ = try decodeFrame(f.payload, &decoder, firstSeq: f.firstSeq, count: f.events.count)
    }
    let bytes = try #require(decoder.sites.stored)
    let entries = decoder.dictionary.count
    let back = try bytes.withUnsafeBytes { try SiteSync(stored: $0, entries: entries) }
    #expect(back.model == decoder.sites.model && back.segment == decoder.sites.segment)
    // A decoder given the stored model (as a seek from the index) reads the sites on.
    var seeker = decoder
    seeker.sites = back
    try Self.expectReadBack(frames.suffix(2), &seeker)
    // Cut short, or naming entries the reader does not hold: refused, never a trap.
    for n in stride(from: 0, to: bytes.count, by: 7) {
      #expect(throws: CodecError.self) {
        _ = try Array(bytes[..<n]).withUnsafeBytes { try SiteSync(stored: $0, entries: entries) }
      }
    }
    #expect(throws: CodecError.self) {
      _ = try bytes.withUnsafeBytes { try SiteSync(stored: $0, entries: 1) }
    }
    var rng = SplitMix64(seed: 12)
    for _ in 0..<200 {
      var damaged = bytes
      damaged[rng.below(damaged.count)] ^= UInt8(1 + rng.below(255))
      _ = try? damaged.withUnsafeBytes { try SiteSync(stored: $0, entries: entries) }
    }
    // A reader that is not the writer's stores nothing.
    decoder.sites.forget()
    #expect(decoder.sites.stored == nil)
  }

  @Test func thousandsOfContextsAndFullListsCodeAndReadBackAlike() throws {
    // 40 ops × 2,000 sites before: the context table grows many times, lists fill to
    // their bound and drop their least used entry, ranks move.
    var rng = SplitMix64(seed: 5)
    var writer = SiteModel()
    let frame = SiteFrame(entries: 2_000)
    var script: [(entry: Int32, code: UInt8)] = []
    // Every (op, site before) met, which the model must hold once each.
    var contexts = Set<[Int32]>()
    var previous: Int32 = -1
    for e in 0..<frame.entries {
      writer.define(Int32(e), code: UInt8(e % 40))
      contexts.insert([Int32(e % 40), previous])
      previous = Int32(e)
    }
    var reader = writer
    var coder = RangeEncoder()
    for k in 0..<90_000 {
      // Mostly a few hundred favourites, now and then any site; after 60,000 events, every
      // other event is site 7 of op 3 followed by any site of op 3, whose context's list
      // fills to its bound and then replaces its least used.
      var entry = Int32(rng.chance(20) ? rng.below(frame.entries) : rng.below(300))
      var code = UInt8(rng.below(40))
      if k >= 60_000 {
        code = 3
        entry = k % 2 == 0 ? 7 : Int32(rng.below(frame.entries))
      }
      script.append((entry, code))
      writer.encode(entry, code: code, frame: frame, into: &coder)
      contexts.insert([Int32(code), previous])
      previous = entry
    }
    #expect(writer.contextCount == contexts.count)
    // Read into locals: a failed expectation would print the whole model otherwise.
    let (longest, ranked) = (writer.longestList, writer.listsAreRanked)
    #expect(longest == SiteModel.listLimit)
    #expect(ranked)
    coder.finish()
    try coder.bytes.withUnsafeBytes { raw in
      var decoder = try RangeDecoder(ByteSource(raw))
      for s in script {
        #expect(try reader.decode(code: s.code, frame: frame, from: &decoder) == s.entry)
      }
    }
    let readerIsWriter = reader == writer
    #expect(readerIsWriter)
    // Stored and loaded, the model goes on as the writer's does.
    var sync = SiteSync()
    sync.model = writer
    sync.live = true
    let stored = try #require(sync.stored)
    var loaded = try stored.withUnsafeBytes { try SiteSync(stored: $0, entries: frame.entries) }
    let loadedIsWriter = loaded.model == writer
    #expect(loadedIsWriter)
    var more = RangeEncoder()
    for s in script.prefix(5_000) {
      writer.encode(s.entry, code: s.code, frame: frame, into: &more)
    }
    more.finish()
    try more.bytes.withUnsafeBytes { raw in
      var decoder = try RangeDecoder(ByteSource(raw))
      for s in script.prefix(5_000) {
        #expect(try loaded.model.decode(code: s.code, frame: frame, from: &decoder) == s.entry)
      }
    }
  }

  @Test func aChunkCountsTheSiteModelsItsFrameEndsHold() {
    // Each frame end of an index build holds a copy of the model: a reader's queue of
    // chunks, bounded by their bytes, must see them (a log of one-event frames and a large
    // model would otherwise queue a model per event).
    var sync = SiteSync()
    for e in 0..<20_000 { sync.model.define(Int32(e), code: UInt8(e % 30)) }
    sync.live = true
    let model = sync.model.heldBytes
    #expect(model > 20_000 * 8)
    var ops = FoldOps()
    let empty = ops.heldBytes
    for k in 0..<3 {
      ops.endFrame(
        lastSeq: k, offset: 0, segment: 0, dictionary: 0, restarted: false, aliasesFree: true,
        sites: sync)
    }
    #expect(ops.heldBytes >= empty + 3 * model)
    ops.removeAll()
    #expect(ops.heldBytes < model)
  }

  @Test func theModelIsBounded() {
    var model = SiteModel()
    var e: Int32 = 0
    while !model.isFull && e < 1 << 20 {
      model.define(e, code: UInt8(e % 7))
      e += 1
    }
    #expect(model.isFull)
    #expect(Int(e) <= SiteModel.limit)
    model.removeAll()
    #expect(!model.isFull && model.coded == 0)
  }
}

/// The site run of a layout 3 payload's header (nil for other layouts).
func siteRun(_ payload: [UInt8]) -> Int? {
  payload.withUnsafeBytes { raw in
    var head = ByteSource(raw)
    guard let start = try? FrameHeaderFields.start(&head),
      start.layout == FrameLayout.modelVersion
    else { return nil }
    return start.siteRun
  }
}
