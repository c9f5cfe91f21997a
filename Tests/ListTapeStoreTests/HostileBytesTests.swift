import ListTapeModel
import ListTapeSamples
import Testing

@testable import ListTapeStore

/// Records and checkpoints that pass the log's checksums but were forged or mangled must
/// decode to an error or to some event, never crash, and whatever decodes must fold.
@Suite struct HostileBytesTests {
  @Test func mutatedRecordsAndStatesNeverCrash() {
    var rng = SplitMix64(seed: 99)
    var encoder = EventEncoder()
    var records: [[UInt8]] = []
    var state = ListState()
    var blobs: [[UInt8]] = []
    SampleSession.generate(events: 1_024, seed: 3, maxItems: 200) { e in
      records.append((try? encoder.encode(e)) ?? [])
      try? state.apply(e)
      if records.count % 256 == 0 { blobs.append(state.encoded()) }
    }
    var decoded = 0
    var rejected = 0
    var statesDecoded = 0
    var restoredDiffers = 0
    for i in 0..<4_000 {
      // A run of records from a reset point with one of them mutated, folded as it decodes.
      let start = rng.below(records.count / 256) * 256
      let length = 1 + rng.below(24)
      let victim = start + rng.below(length)
      var decoder = EventDecoder()
      var folded = ListState()
      for seq in start..<min(start + length, records.count) {
        var record = records[seq]
        if seq == victim { Self.mutate(&record, &rng) }
        guard let e = try? decoder.decode(record, seq: seq + 1) else {
          rejected += 1
          break
        }
        decoded += 1
        try? folded.apply(e)
      }
      if i % 4 == 0 {
        var blob = blobs[rng.below(blobs.count)]
        Self.mutate(&blob, &rng)
        if let s = try? ListState(encoded: blob) {
          // Whatever a mangled state decodes to is a state like any other: it shows, and its
          // own encoding decodes back to it.
          _ = s.json(event: 0)
          if (try? ListState(encoded: s.encoded())) != s { restoredDiffers += 1 }
          statesDecoded += 1
        }
      }
    }
    #expect(decoded > 0)
    #expect(rejected > 0)
    #expect(statesDecoded > 0)
    #expect(restoredDiffers == 0)
  }

  static func mutate(_ b: inout [UInt8], _ rng: inout SplitMix64) {
    for _ in 0..<(1 + rng.below(4)) {
      guard !b.isEmpty else { return }
      switch rng.below(4) {
      case 0: b[rng.below(b.count)] ^= UInt8(1 << rng.below(8))
      case 1: b[rng.below(b.count)] = UInt8(truncatingIfNeeded: rng.next())
      case 2: b.removeSubrange(rng.below(b.count)...)
      default: b.insert(UInt8(truncatingIfNeeded: rng.next()), at: rng.below(b.count))
      }
    }
  }
}
