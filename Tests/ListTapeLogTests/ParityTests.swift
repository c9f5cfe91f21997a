import Foundation
import ListTapeSamples
import Testing

@testable import ListTapeLog

/// PARITY frames (docs/log-format.md, "Parity"): what the writer and salvage write, and what
/// salvage rebuilds from them.
@Suite("Parity frames")
struct ParityTests {
  /// Small groups, so that a short log holds many: 4 KiB of parity per 32 KiB of frames.
  static var small: ParityOptions {
    var p = ParityOptions()
    p.width = 4 << 10
    p.blockSize = 512
    p.groupWidths = 8
    return p
  }

  /// Writes `count` records in frames of 20 with parity, over `sessions` writer sessions.
  static func write(
    _ path: String, count: Int, sessions: Int = 1, parity: ParityOptions? = small, seed: UInt64 = 5
  ) throws -> [[UInt8]] {
    var options = LogWriterOptions()
    options.fsync = .never
    options.maxEventsPerFrame = 20
    options.batchDelay = 10
    options.formatMajor = 2
    options.parity = parity
    var rng = SplitMix64(seed: seed)
    var records: [[UInt8]] = []
    for s in 0..<sessions {
      let w = try LogWriter.open(path: path, options: options)
      for _ in 0..<(count / sessions) {
        let r = makeRecord(&rng)
        records.append(r)
        try w.append(r)
      }
      try w.appendCheckpoint([UInt8(s), 9, 9])
      try w.close()
    }
    return records
  }

  /// Offsets of the log's frames of `type`.
  static func frames(_ bytes: [UInt8], type: UInt8) throws -> [Int] {
    let fx = try Fixture(bytes: bytes, records: [], checkpoints: [:])
    return fx.frames.filter { $0.header.type == type }.map(\.offset)
  }

  @Test("a writer's parity frames are skipped by readers and cost about 1 / groupWidths")
  func parityFramesAreSkippable() throws {
    let dir = TempDir()
    let path = dir.file("p.log")
    let records = try Self.write(path, count: 20_000)
    let bytes = try readBytes(path)
    let parity = try Self.frames(bytes, type: Format.typeParity)
    #expect(parity.count >= 3)
    let reader = try LogReader(path: path)
    #expect(reader.stop == nil)
    let fx = try Fixture(bytes: bytes, records: records, checkpoints: [:])
    #expect(try fx.replayMatches(reader) == records.count)
    let report = try reader.verify()
    #expect(report.status == .intact)
    #expect(report.skippedFrames == parity.count)
    let parityBytes = fx.frames.filter { $0.header.type == Format.typeParity }
      .reduce(0) { $0 + Int($1.header.frameLength) }
    let share = Double(parityBytes) / Double(bytes.count)
    #expect(share > 0.08 && share < 0.16, "parity share \(share)")
  }

  @Test(
    "salvage rebuilds a burst of damage up to the parity width exactly", arguments: [1, 700, 3_500])
  func salvageRebuildsABurst(length: Int) throws {
    let dir = TempDir()
    let path = dir.file("p.log")
    let records = try Self.write(path, count: 20_000)
    var bytes = try readBytes(path)
    // Between two parity frames in the middle of the log (a damaged parity frame rebuilds
    // nothing of its group).
    let parity = try Self.frames(bytes, type: Format.typeParity)
    let at = (parity[parity.count / 2 - 1] + 5_000 + parity[parity.count / 2]) / 2 - length / 2
    for i in at..<(at + length) { bytes[i] ^= 0xA5 }
    try writeBytes(bytes, to: path)
    #expect(try LogReader(path: path).stop?.kind == .damaged)
    let out = dir.file("salvaged.log")
    let report = try LogReader.salvage(from: path, to: out)
    #expect(report.gaps.isEmpty)
    #expect(report.damagedRanges.isEmpty)
    #expect(!report.repaired.isEmpty && report.unrepaired.isEmpty)
    let salvaged = try LogReader(path: out)
    #expect(salvaged.stop == nil)
    let fx = try Fixture(bytes: readBytes(out), records: records, checkpoints: [:])
    #expect(try fx.replayMatches(salvaged) == records.count)
    // The salvaged log has parity of its own.
    #expect(try Self.frames(readBytes(out), type: Format.typeParity).count >= 1)
  }

  /// Issue 31.2: the open group at the end of a log that was synced is protected as a
  /// closed one: `sync()` writes its parity when it is worth one (as `close()` does), so a
  /// log a crash leaves right after a sync rebuilds damage in its last frames. Without it,
  /// the last group (here the whole log) had no parity until the group filled.
  @Test("a synced open group is protected as a closed one")
  func aSyncedOpenGroupIsProtected() throws {
    let dir = TempDir()
    let path = dir.file("p.log")
    var options = LogWriterOptions()
    options.fsync = .interval(seconds: 3_600)
    options.clock = ManualClock()
    options.maxEventsPerFrame = 20
    options.formatMajor = 2
    options.parity = Self.small
    var rng = SplitMix64(seed: 8)
    var records: [[UInt8]] = []
    let w = try LogWriter.open(path: path, options: options)
    // Less than a full group (32 KiB), more than groupWidths blocks (4 KiB).
    while try readBytes(path).count < 20 << 10 {
      let r = makeRecord(&rng)
      records.append(r)
      try w.append(r)
      try w.flush()
    }
    try w.sync()
    // What a crash right after the sync leaves: the file as it is (the writer never closes).
    var bytes = try readBytes(path)
    let parity = try Self.frames(bytes, type: Format.typeParity)
    #expect(parity.count == 1, "the sync wrote the open group's parity")
    let frames = try Self.frames(bytes, type: Format.typeEvents)
    let last = try #require(frames.last { $0 < (parity.last ?? 0) })
    for i in (last + 36)..<(last + 40) { bytes[i] ^= 0x5A }  // its payload, not the next frame
    let crashed = dir.file("crashed.log")
    try writeBytes(bytes, to: crashed)
    let out = dir.file("salvaged.log")
    let report = try LogReader.salvage(from: crashed, to: out)
    #expect(report.gaps.isEmpty && !report.repaired.isEmpty, "\(report)")
    let fx = try Fixture(bytes: readBytes(out), records: records, checkpoints: [:])
    #expect(try fx.replayMatches(try LogReader(path: out)) == records.count)
    try w.close()
  }

  @Test("damage in two blocks of one parity column is not rebuilt: a gap, as without parity")
  func twoBlocksInOneColumnAreLost() throws {
    let dir = TempDir()
    let path = dir.file("p.log")
    let records = try Self.write(path, count: 20_000)
    var bytes = try readBytes(path)
    let parity = try Self.frames(bytes, type: Format.typeParity)
    // Two bytes one width apart inside the group the second parity frame covers.
    let first = try #require(
      try Fixture(bytes: bytes, records: [], checkpoints: [:]).frames.first {
        $0.offset == parity[0]
      })
    let at = parity[0] + Int(first.header.frameLength) + 1_000
    bytes[at] ^= 1
    bytes[at + Self.small.width] ^= 1
    try writeBytes(bytes, to: path)
    let out = dir.file("salvaged.log")
    let report = try LogReader.salvage(from: path, to: out)
    #expect(report.unrepaired.count == 2)
    #expect(!report.gaps.isEmpty)
    let salvaged = try LogReader(path: out)
    var n = 0
    try forEachRecord(salvaged) { seq, r in
      n += 1
      #expect(Array(r) == records[Int(seq) - 1])
    }
    #expect(n < records.count && n > records.count / 2)
  }

  @Test("a parity group spans writer sessions: the next writer re-reads the open group")
  func groupsSpanSessions() throws {
    let dir = TempDir()
    let path = dir.file("p.log")
    // Sessions too short to be worth closing with their own parity frame.
    let records = try Self.write(path, count: 3_000, sessions: 30)
    var bytes = try readBytes(path)
    let parity = try Self.frames(bytes, type: Format.typeParity)
    #expect(!parity.isEmpty)
    // Damage the first session's frames: the first group covers them.
    for i in 200..<600 { bytes[i] ^= 0x3C }
    try writeBytes(bytes, to: path)
    let out = dir.file("salvaged.log")
    let report = try LogReader.salvage(from: path, to: out)
    #expect(report.gaps.isEmpty && !report.repaired.isEmpty)
    let fx = try Fixture(bytes: readBytes(out), records: records, checkpoints: [:])
    #expect(try fx.replayMatches(LogReader(path: out)) == records.count)
  }

  @Test("a parity group folds onto a narrower width, so a short group costs no more")
  func foldedWidth() throws {
    var group = ParityGroup(options: Self.small, start: 64)
    var rng = SplitMix64(seed: 3)
    let data = (0..<9_000).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
    data.withUnsafeBytes { group.add($0) }
    let payload = group.payload()
    let frame = try #require(payload.withUnsafeBytes { ParityFrame($0, at: 64 + 9_000) })
    #expect(frame.width == 2_048)  // 9,000 / 8 widths rounds up to 2 KiB
    #expect(frame.crcs.count == (9_000 + 511) / 512)
    for i in 0..<frame.width {
      var x: UInt8 = 0
      var k = i
      while k < data.count {
        x ^= data[k]
        k += frame.width
      }
      if x != frame.parity[i] {
        Issue.record("parity byte \(i)")
        break
      }
    }
  }

  @Test("a parity payload that does not describe bytes before it is refused")
  func hostileParityPayload() throws {
    var group = ParityGroup(options: Self.small, start: 64)
    let data = [UInt8](repeating: 7, count: 5_000)
    data.withUnsafeBytes { group.add($0) }
    let payload = group.payload()
    #expect(payload.withUnsafeBytes { ParityFrame($0, at: 64 + 5_000) } != nil)
    #expect(payload.withUnsafeBytes { ParityFrame($0, at: 64 + 4_999) } == nil)
    #expect(payload.dropLast().withUnsafeBytes { ParityFrame($0, at: 64 + 5_000) } == nil)
    var wrongWidth = payload
    wrongWidth[8] = 3
    #expect(wrongWidth.withUnsafeBytes { ParityFrame($0, at: 64 + 5_000) } == nil)
  }
}
