import ListTapeSamples
import Testing

@testable import ListTapeModel

/// Definitions entered in the string table a batch at a time (a skipped frame's, whose
/// lookups overlap) give the same entries and repeats as one at a time.
@Suite struct DefinitionBatchTests {
  /// Ids of every stored kind, with repeats: UUIDs of both cases, short and long text.
  static func ids(_ n: Int, seed: UInt64) -> [String] {
    var rng = SplitMix64(seed: seed)
    var out: [String] = []
    for i in 0..<n {
      if i > 0, rng.next() % 5 == 0 {
        out.append(out[Int(rng.next() % UInt64(out.count))])
        continue
      }
      switch rng.next() % 4 {
      case 0: out.append(UUIDs.make(rng.next(), rng.next(), lower: false))
      case 1: out.append(UUIDs.make(rng.next(), rng.next(), lower: true))
      case 2: out.append("i\(rng.next() % 100_000)")
      default: out.append("/library/folder\(rng.next() % 97)/" + String(repeating: "x", count: 20))
      }
    }
    return out
  }

  @Test(arguments: [0, 1, 37, 4_000])
  func batchesFindTheFirstEntryOfEachRepeat(tableOver prefix: Int) throws {
    let all = Self.ids(9_000, seed: UInt64(prefix) &+ 3)
    var one = IdSpace()
    var firsts: [Int32] = []
    for id in all {
      let e = one.append(id)
      firsts.append(one.firstEntry(sameAs: Int(e)))
    }
    var batched = IdSpace()
    for id in all[..<prefix] { batched.append(id) }
    if prefix > 0 { batched.buildTable() }
    var told: [(Int32, Int32)] = []
    // Several batches of uneven sizes, each appended before it is entered.
    var at = prefix
    for size in [1, 15, 16, 17, 1_000, all.count] where at < all.count {
      let end = min(all.count, at + size)
      let from = batched.count
      for id in all[at..<end] {
        var form: [UInt8] = []
        IdText.store(id, into: &form)
        form.withUnsafeBytes { batched.appendUnindexed(stored: $0) }
      }
      batched.indexAppended(from: from) { told.append(($0, $1)) }
      at = end
    }
    #expect(told.map(\.0) == (prefix..<all.count).map { Int32($0) })
    #expect(told.map(\.1) == Array(firsts[prefix...]))
    for (e, id) in all.enumerated() {
      #expect(batched.entry(of: id) == firsts[e], "entry \(e)")
      #expect(batched.firstEntry(sameAs: e) == firsts[e], "entry \(e)")
    }
    #expect(batched.entry(of: "never defined") == nil)
  }

  /// A frame that defines an id the dictionary already holds (a hostile log: no writer does)
  /// is skipped with the same repeat recorded as when its events are decoded.
  @Test func aSkippedFrameRecordsTheSameRepeatsAsADecodedOne() throws {
    var a = EventRowEncoder()
    let first = try framePayload(
      [
        Event(.appendSections(["s"])),
        Event(.appendItems([OutlineNode("a"), OutlineNode("b")], section: "s", parent: nil)),
      ],
      &a)
    // A second encoder that has defined three other ids defines "s" and "a" again, as
    // entries 3 and 4 of the same segment (repeating entries 0 and 1).
    var b = EventRowEncoder()
    _ = try framePayload([Event(.appendSections(["x", "y", "z"]))], &b)
    let second = try framePayload(
      [
        Event(.appendItems([OutlineNode("a"), OutlineNode("c")], section: "s", parent: nil)),
        Event(.expand(["a"])),
      ], &b)
    var skipped = EventDecoder()
    var decoded = EventDecoder()
    for d in [0, 1] {
      var decoder = d == 0 ? skipped : decoded
      _ = try first.withUnsafeBytes { try decoder.skipFrame($0, firstSeq: 1, count: 2) }
      if d == 0 {
        _ = try second.withUnsafeBytes { try decoder.skipFrame($0, firstSeq: 3, count: 2) }
        skipped = decoder
      } else {
        _ = try decodeFrame(second, &decoder, firstSeq: 3, count: 2)
        decoded = decoder
      }
    }
    #expect(skipped.aliases.map == [3: 0, 4: 1])
    #expect(skipped.aliases == decoded.aliases)
    #expect(skipped.dictionary.bytes == decoded.dictionary.bytes)
    #expect(skipped.dictionary.ends == decoded.dictionary.ends)
    var ids = skipped.dictionary
    #expect(ids.entry(of: "c") == 5)
    #expect(ids.entry(of: "a") == 1)
    #expect(ids.entry(of: "s") == 0)
  }

  /// Across a gap (a salvaged log), a frame whose definitions start past the entries a
  /// skipping decoder holds (a seek's) makes holes of the lost ones, as a decoding one does,
  /// so its own definitions take their numbers; without `acrossGaps`, or when its header
  /// claims more lost entries than `maxHoles` (a hostile one), it is a gap.
  @Test func aSkippedFrameAfterLostDefinitionsMakesHolesAsADecodedOne() throws {
    var encoder = EventRowEncoder()
    _ = try framePayload([Event(.appendSections(["x", "y", "z"]))], &encoder)  // lost
    let after = try framePayload(
      [
        Event(.appendSections(["s"])),
        Event(.appendItems([OutlineNode("a")], section: "s", parent: nil)),
      ], &encoder)
    var skipped = EventDecoder()
    let outcome = try after.withUnsafeBytes {
      try skipped.skipFrame($0, firstSeq: 2, count: 2, acrossGaps: true)
    }
    #expect(outcome == .done)
    var decoded = EventDecoder()
    var ops = FoldOps()
    _ = try after.withUnsafeBytes {
      try decoded.decodeFrame(
        $0, firstSeq: 2, count: 2, from: 2, through: 3, acrossGaps: true, into: &ops)
    }
    #expect(skipped.dictionary.count == 5)
    #expect(skipped.dictionary.ends == decoded.dictionary.ends)
    #expect(skipped.dictionary.bytes == decoded.dictionary.bytes)
    var ids = skipped.dictionary
    #expect(ids.entry(of: "a") == 4)
    var plain = EventDecoder()
    #expect(try after.withUnsafeBytes { try plain.skipFrame($0, firstSeq: 2, count: 2) } == .gap)
    #expect(plain.dictionary.count == 0)
    // The same frame claiming its definitions start past `maxHoles` lost entries.
    // The header: the layout byte, then the segment and the dictionary base as varints.
    func varintEnd(_ at: Int) -> Int {
      var i = at
      while after[i] & 0x80 != 0 { i += 1 }
      return i + 1
    }
    let baseAt = varintEnd(1)
    let baseEnd = varintEnd(baseAt)
    var far = Array(after[..<baseAt])
    ByteSink.appendVarint(UInt64(EventDecoder.maxHoles + 3 + 1), to: &far)
    far += after[baseEnd...]
    for across in [false, true] {
      var decoder = EventDecoder()
      var skipping = EventDecoder()
      var none = FoldOps()
      #expect(
        try far.withUnsafeBytes {
          try decoder.decodeFrame(
            $0, firstSeq: 2, count: 2, from: 2, through: 3, acrossGaps: across, into: &none)
        } == .gap)
      #expect(
        try far.withUnsafeBytes {
          try skipping.skipFrame($0, firstSeq: 2, count: 2, acrossGaps: across)
        } == .gap)
      #expect(decoder.dictionary.count == 0 && skipping.dictionary.count == 0)
    }
  }

  /// A decoded frame's new definitions are checked for repeats in one batch after its
  /// events; one that repeats an id the dictionary holds (a hostile log) has the frame
  /// decoded again checking each as it comes, so its references name the earlier entries
  /// and the fold finds the section and the item they repeat. A frame stopped inside
  /// (`through`) reads the same.
  @Test(arguments: [Int.max, 3])
  func aDecodedFrameWithRepeatsFoldsOnTheEarlierEntries(through: Int) throws {
    let firstEvents = [
      Event(.appendSections(["s"])),
      Event(.appendItems([OutlineNode("a"), OutlineNode("b")], section: "s", parent: nil)),
    ]
    var a = EventRowEncoder()
    let first = try framePayload(firstEvents, &a)
    // "s" and "a" defined again as entries 3 and 4, then "c" as 5.
    var b = EventRowEncoder()
    _ = try framePayload([Event(.appendSections(["x", "y", "z"]))], &b)
    let secondEvents = [
      Event(.appendItems([OutlineNode("c")], section: "s", parent: "a")),
      Event(.expand(["a"])),
    ]
    let second = try framePayload(secondEvents, &b)
    var decoder = EventDecoder()
    var state = ListState()
    try state.adopt(decoder.dictionary, aliases: decoder.aliases)
    var ops = FoldOps()
    for (payload, seq, count) in [(first, 1, 2), (second, 3, 2)] {
      ops.removeAll()
      let outcome = try payload.withUnsafeBytes {
        try decoder.decodeFrame(
          $0, firstSeq: seq, count: count, from: 1, through: through, into: &ops)
      }
      #expect(outcome == (seq + count - 1 > through ? .stopped(at: through + 1) : .done))
      for i in 0..<ops.count {
        #expect(try state.apply(ops, i) == nil, "record \(i) of the frame at \(seq)")
      }
    }
    #expect(decoder.aliases.map == [3: 0, 4: 1])
    var reference = ListState()
    for e in (firstEvents + secondEvents).prefix(min(through, 4)) { try reference.apply(e) }
    #expect(state == reference)
    #expect(state.numberOfAllItems == 3)
    var ids = decoder.dictionary
    #expect(ids.entry(of: "c") == 5)
  }
}

/// A frame whose events are skipped is inflated only through its definitions: the first
/// `definitionsEnd` bytes of its payload give the same dictionary as all of them.
@Suite struct DefinitionPrefixTests {
  @Test(arguments: IdShape.allCases)
  func definitionsReadFromAPrefixMatchTheWholeFrame(shape: IdShape) throws {
    var events: [Event] = []
    SampleSession.generate(
      events: 5_000, seed: 21, maxItems: 2_200, opening: .outline(items: 2_000, shape: shape)
    ) { events.append($0) }
    // Sites on every third event of the first half: their frames have the sited layout
    // (read whole: the site model reads their sites with the definitions) and define sites.
    for i in stride(from: 0, to: events.count / 2, by: 3) {
      events[i].site = "F\(i % 40).swift:\(i % 9)"
    }
    var encoder = EventRowEncoder()
    var whole = EventDecoder()
    var part = EventDecoder()
    var seq = 1
    for chunk in stride(from: 0, to: events.count, by: 600) {
      let frame = Array(events[chunk..<min(chunk + 600, events.count)])
      let payload = try framePayload(frame, &encoder)
      let head = min(payload.count, EventDecoder.definitionsHead)
      let end = try #require(
        payload.withUnsafeBytes {
          EventDecoder.definitionsEnd(ofFrame: UnsafeRawBufferPointer(rebasing: $0[0..<head]))
        })
      if payload.first == FrameLayout.modelVersion {
        #expect(end == payload.count, "frame at \(seq): sited, read whole")
      } else {
        #expect(end < payload.count, "frame at \(seq): the strings come after the definitions")
      }
      // A header cut short names no prefix.
      #expect(
        payload.withUnsafeBytes {
          EventDecoder.definitionsEnd(ofFrame: UnsafeRawBufferPointer(rebasing: $0[0..<4]))
        } == nil)
      _ = try payload.withUnsafeBytes { try whole.skipFrame($0, firstSeq: seq, count: frame.count) }
      _ = try payload.withUnsafeBytes {
        try part.skipFrame(
          UnsafeRawBufferPointer(rebasing: $0[0..<end]), firstSeq: seq, count: frame.count,
          prefix: true)
      }
      // One byte short of the definitions is refused, not misread.
      var short = part
      #expect(throws: CodecError.self) {
        _ = try payload.withUnsafeBytes {
          try short.skipFrame(
            UnsafeRawBufferPointer(rebasing: $0[0..<(end - 1)]), firstSeq: seq,
            count: frame.count, prefix: true)
        }
      }
      seq += frame.count
    }
    #expect(part.dictionary.bytes == whole.dictionary.bytes)
    #expect(part.dictionary.ends == whole.dictionary.ends)
    #expect(part.aliases == whole.aliases)
    #expect(part.dictionary.count == encoder.table.count)
  }
}

/// Canonical UUID text from two words, spelled as the model spells them.
private enum UUIDs {
  static func make(_ hi: UInt64, _ lo: UInt64, lower: Bool) -> String {
    withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 36) { out in
      IdText.spellUUID(hi, lo, lower: lower, into: out)
      return String(decoding: out, as: UTF8.self)
    }
  }
}
