import ListTapeJSON
import ListTapeSamples
import Testing

@testable import ListTapeModel

/// Sites (protocol section 1): kept by every codec, given back by JSON, refused when
/// malformed, never folded.
@Suite struct SiteTests {
  /// Every event of the round-trip list with a site from a few, a batch's inner events
  /// with their own (some without), so that sites repeat per op and across ops.
  static let events: [Event] = {
    let sites = ["A.swift:1", "B.swift:22 f(_:)", "A.swift:1", "C.swift:333 g()"]
    var out: [Event] = []
    for (i, e) in EventRoundTripTests.events.enumerated() {
      var e = e
      if i % 5 != 4 { e.site = sites[i % sites.count] }
      if case .batch(let inner) = e.operation {
        e.operation = .batch(
          inner.enumerated().map { k, x in
            var x = x
            x.site = k % 2 == 0 ? "Inner.swift:\(k)" : nil
            return x
          })
      }
      out.append(e)
    }
    return out
  }()

  @Test func jsonKeepsSitesInsideBatchesToo() throws {
    let line =
      #"{"op":"batch","events":[{"op":"expand","items":["a"],"site":"In.swift:2"},"#
      + #"{"op":"mark","label":"m"}],"t":5,"site":"Out.swift:1 f()"}"#
    let e = try Event(jsonLine: line)
    #expect(e.site == "Out.swift:1 f()")
    guard case .batch(let inner) = e.operation else {
      Issue.record("not a batch")
      return
    }
    #expect(inner.map(\.site) == ["In.swift:2", nil])
    #expect(e.jsonLine == line)
    for e in Self.events { #expect(try Event(jsonLine: e.jsonLine) == e) }
    // null counts as absent, as for every optional field.
    #expect(try Event(jsonLine: #"{"op":"deleteAllItems","site":null}"#).site == nil)
  }

  @Test(arguments: [
    (#"{"op":"deleteAllItems","site":7}"#, #"field "site" must be a string, found integer"#),
    (#"{"op":"deleteAllItems","site":""}"#, #"field "site" must not be empty"#),
    (#"{"op":"deleteAllItems","site":{"f":1}}"#, #"field "site" must be a string, found object"#),
    (#"{"op":"deleteAllItems","site":["a"]}"#, #"field "site" must be a string, found array"#),
    (#"{"op":"deleteAllItems","site":true}"#, #"field "site" must be a string, found boolean"#),
    (
      #"{"op":"batch","events":[{"op":"deleteAllItems"},{"op":"mark","label":"x","site":3}]}"#,
      #"event 2 of the batch: field "site" must be a string, found integer"#
    ),
    (#"{"op":"batch","events":[],"site":""}"#, #"field "site" must not be empty"#),
  ])
  func malformedSitesAreRefused(line: String, message: String) {
    #expect(throws: MalformedEvent(message)) { try Event(jsonLine: line) }
  }

  @Test func aFrameWithSitesRoundTripsAndOneWithoutKeepsLayoutOne() throws {
    var encoder = EventRowEncoder()
    let payload = try framePayload(Self.events, &encoder)
    #expect(payload.first == FrameLayout.modelVersion)
    var decoder = EventDecoder()
    #expect(
      try decodeFrame(payload, &decoder, firstSeq: 1, count: Self.events.count) == Self.events)
    // Each distinct site is one dictionary entry, defined once.
    let sites = Set(Self.events.flatMap { e in [e.site] + e.innerSites }.compactMap { $0 })
    var bare = EventRowEncoder()
    _ = try framePayload(EventRoundTripTests.events, &bare)
    #expect(encoder.table.count == bare.table.count + sites.count)
    var plain = EventRowEncoder()
    #expect(try framePayload(EventRoundTripTests.events, &plain).first == 1)
    // Every strict prefix and a longer payload are errors, never traps.
    for n in stride(from: 0, to: payload.count, by: 3) {
      var d = EventDecoder()
      #expect(throws: CodecError.self) {
        _ = try decodeFrame(Array(payload[..<n]), &d, firstSeq: 1, count: Self.events.count)
      }
    }
  }

  /// Random sessions with a site on most events (from a pool larger than an op's list
  /// holds), cut into frames: decoding frame after frame gives them back.
  @Test(arguments: [UInt64(5), 6])
  func randomSessionsWithSitesRoundTripAcrossFrames(seed: UInt64) throws {
    var rng = SplitMix64(seed: seed)
    var gen = EventGenerator(seed: seed)
    var reference = Reference()
    var encoder = EventRowEncoder()
    var decoder = EventDecoder()
    var seq = 1
    for _ in 0..<20 {
      let n = 1 + rng.below(400)
      var events: [Event] = []
      for _ in 0..<n {
        var e = gen.event(reference)
        try? reference.apply(e)
        if rng.chance(90) { e.site = "F\(rng.below(300)).swift:\(rng.below(9)) f()" }
        events.append(e)
      }
      let payload = try framePayload(events, &encoder)
      #expect(try decodeFrame(payload, &decoder, firstSeq: seq, count: n) == events)
      seq += n
    }
  }

  @Test func formatOneRecordsKeepSites() throws {
    var encoder = EventEncoder()
    var decoder = EventDecoder()
    for (i, e) in Self.events.enumerated() {
      let record = try encoder.encode(e)
      #expect(try decoder.decode(record, seq: i + 1) == e)
    }
  }

  @Test func theFoldIgnoresSites() throws {
    var withSites = ListState()
    var without = ListState()
    func fold(_ s: inout ListState, _ e: Event) -> ListFault? {
      do {
        try s.apply(e)
        return nil
      } catch {
        return error
      }
    }
    for (e, bare) in zip(Self.events, EventRoundTripTests.events) {
      #expect(fold(&withSites, e) == fold(&without, bare))
      #expect(withSites == without)
    }
  }

  @Test func emptySitesAreRefusedByTheEncoders() {
    let e = Event(.deleteAllItems, site: "")
    var rows = EventRowEncoder()
    #expect(throws: CodecError.self) { _ = try framePayload([e], &rows) }
    var records = EventEncoder()
    #expect(throws: CodecError.self) { _ = try records.encode(e) }
  }
}

extension Event {
  /// The sites of the events inside this one (a batch's, nested ones included).
  fileprivate var innerSites: [String?] {
    guard case .batch(let inner) = operation else { return [] }
    return inner.flatMap { [$0.site] + $0.innerSites }
  }
}
