import Foundation
import ListTapeModel
import ListTapeRead
import ListTapeSamples
import Testing

@testable import ListTapeLog
@testable import ListTapeStore

/// Issue 31.1: which states of a salvaged log are the recorded ones comes from one place,
/// the reader's account (`LogReader.exactStretches`, `exactFrom(through:)`), which every
/// `Timeline` answer uses.
@Suite struct ExactnessTests {
  /// A log of 2-event frames with no parity, so that damaging a frame loses it; recovery
  /// points only where the test makes them.
  static func record(
    _ path: String, events: Int, restartAt: Set<Int>
  ) throws -> [Event] {
    var options = Recorder.options(.never)
    options.maxEventsPerFrame = 2
    options.maxEventsBetweenCheckpoints = 1_000_000
    options.parity = nil
    options.recoveryPointRatio = 0
    let recorder = try Recorder.open(path: path, options: options)
    recorder.restartSlack = 1 << 30
    var recorded: [Event] = []
    try SampleSession.generate(events: events, seed: 7, maxItems: 300) { e in
      _ = try recorder.record(e)
      recorded.append(e)
      if restartAt.contains(recorded.count) { try recorder.restartDictionary() }
    }
    try recorder.close()
    return recorded
  }

  /// The event frames of a log: offset, length, first event, events.
  static func eventFrames(_ path: String) throws -> [(offset: Int, length: Int, first: Int)] {
    let reader = try LogReader(path: path)
    var out: [(offset: Int, length: Int, first: Int)] = []
    var offset = reader.firstFrameOffset
    while offset < reader.validEnd {
      let frame = try reader.frameSummary(at: offset)
      if frame.kind == .events {
        out.append((Int(offset), Int(frame.length), Int(frame.firstSeq)))
      }
      offset += frame.length
    }
    return out
  }

  /// A log that declares more gaps than the reader keeps (1,024): past the last kept one,
  /// no state is called exact, even after a recovery point, since a gap it did not keep may
  /// lie between (the hostile case of the issue; a second count of the kept gaps called the
  /// states after the recovery point exact).
  @Test func gapsPastThoseTheReaderKeepsLeaveNothingExactAfterThem() throws {
    let dir = Scratch()
    defer { dir.remove() }
    let log = dir.path("many.ltape")
    _ = try Self.record(log, events: 4_700, restartAt: [4_300])
    let frames = try Self.eventFrames(log)
    // Every other frame among events 3...4,200 (at least 1,024 of them), then one after
    // the recovery point at 4,300.
    var doomed = frames.filter { $0.first >= 3 && $0.first <= 4_200 }.enumerated()
      .filter { $0.offset % 2 == 0 }.map(\.element)
    #expect(doomed.count >= 1_025)
    doomed = Array(doomed.prefix(1_024))
    let late = try #require(frames.first { $0.first >= 4_400 })
    doomed.append(late)
    var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: log)))
    for f in doomed {
      for i in (f.offset + 40)..<(f.offset + f.length) { bytes[i] ^= 0x5A }
    }
    let damaged = dir.path("damaged.ltape")
    try Data(bytes).write(to: URL(fileURLWithPath: damaged))
    let salvagedPath = dir.path("salvaged.ltape")
    let report = try Timeline.salvage(damaged, to: salvagedPath)
    #expect(report.gaps.count == 1_025)

    let salvaged = try Timeline(path: salvagedPath)
    salvaged.buildsIndex = false
    #expect(salvaged.gaps.count == 1_024)
    let reader = salvaged.reader
    let lastKept = try #require(salvaged.lostRanges.last)
    #expect(lastKept.upperBound < 4_300)
    #expect(reader.recoveryPoint(atOrAfter: UInt64(lastKept.upperBound))?.seq == 4_300)
    // After the recovery point, before and after the gap the reader did not keep.
    for n in [4_350, late.first + 5, 4_700] {
      #expect(!salvaged.exactness(at: n).isExact, "event \(n)")
      #expect(reader.exactFrom(through: UInt64(n)) == nil, "event \(n)")
    }
    #expect(!salvaged.exactSteps.stateIsExact(at: late.first + 5))
    // Before the first gap every state is exact, and the same the reader says.
    let first = try #require(salvaged.lostRanges.first)
    #expect(salvaged.exactness(at: first.lowerBound - 1) == .exact(restoredFrom: nil))
    #expect(reader.exactFrom(through: UInt64(first.lowerBound - 1)) == UInt64(first.lowerBound - 1))
  }

  /// With the gaps the reader keeps, the stretches are its own: a state is exact exactly
  /// when the reader's `exactFrom` says so, and restored from the point it names.
  @Test func timelineAnswersAreTheReadersAccount() throws {
    let dir = Scratch()
    defer { dir.remove() }
    let log = dir.path("few.ltape")
    let events = try Self.record(log, events: 3_000, restartAt: [1_500, 2_500])
    let frames = try Self.eventFrames(log)
    var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: log)))
    for f in frames where [700, 1_800].contains(where: { $0 >= f.first && $0 < f.first + 2 }) {
      for i in (f.offset + 40)..<(f.offset + f.length) { bytes[i] ^= 0x5A }
    }
    let damaged = dir.path("damaged.ltape")
    try Data(bytes).write(to: URL(fileURLWithPath: damaged))
    let salvagedPath = dir.path("salvaged.ltape")
    _ = try Timeline.salvage(damaged, to: salvagedPath)
    let salvaged = try Timeline(path: salvagedPath)
    salvaged.buildsIndex = false
    #expect(salvaged.lostRanges.count == 2)
    let reader = salvaged.reader
    #expect(
      reader.exactStretches.map { [$0.start, $0.end] }
        == [
          [0, UInt64(salvaged.lostRanges[0].lowerBound - 1)],
          [1_500, UInt64(salvaged.lostRanges[1].lowerBound - 1)], [2_500, 3_000],
        ])
    var reference = ListState()
    for (i, e) in events.enumerated() {
      try? reference.apply(e)
      let n = i + 1
      guard n % 97 == 0 || [1_499, 1_500, 1_501, 2_499, 2_500, 2_501].contains(n) else {
        continue
      }
      let exactness = salvaged.exactness(at: n)
      let from = reader.exactFrom(through: UInt64(n))
      #expect(exactness.isExact == (from != nil), "event \(n)")
      #expect(salvaged.exactSteps.stateIsExact(at: n) == exactness.isExact, "event \(n)")
      if case .exact(let restored) = exactness {
        #expect(restored.map(UInt64.init) ?? UInt64(n) == from, "event \(n)")
        #expect(try salvaged.exactState(at: n).state == reference, "event \(n)")
      }
    }
  }

  /// A copy that keeps a salvaged log's numbers (`cut`, `what-if -o`) records its lost
  /// events as a gap: from there the recorder writes no checkpoint and no recovery point of
  /// its state (not the recorded one), until it adopts the restored state, where it writes
  /// a recovery point; readers then call the same states exact as in the original.
  @Test func aRecordedGapHoldsBackCheckpointsUntilTheStateIsAdopted() throws {
    let dir = Scratch()
    defer { dir.remove() }
    let path = dir.path("copy.ltape")
    var options = Recorder.options(.never)
    options.maxEventsBetweenCheckpoints = 50
    options.minCheckpointSpacingBytes = 0
    options.checkpointBytesRatio = 0
    options.recoveryPointRatio = 1
    let recorder = try Recorder.open(path: path, options: options)
    var events: [Event] = []
    SampleSession.generate(events: 3_000, seed: 9, maxItems: 200) { events.append($0) }
    for e in events[..<1_000] { _ = try recorder.record(e) }
    try recorder.recordGap(200)
    #expect(!recorder.isExact)
    for e in events[1_200..<2_000] { _ = try recorder.record(e) }
    var restored = ListState()
    for e in events[..<2_000] { try? restored.apply(e) }
    try recorder.adopt(restored)
    #expect(recorder.isExact)
    for e in events[2_000...] {
      _ = try recorder.record(e)
      try? restored.apply(e)
    }
    try recorder.close()

    let timeline = try Timeline(path: path)
    timeline.buildsIndex = false
    #expect(timeline.eventCount == 3_000)
    #expect(timeline.lostRanges == [1_001...1_200])
    let checkpoints = timeline.reader.checkpointSeqs
    #expect(checkpoints.contains { $0 < 1_000 } && checkpoints.contains { $0 > 2_000 })
    #expect(!checkpoints.contains { $0 > 1_000 && $0 < 2_000 })
    #expect(timeline.reader.isRecoveryPoint(checkpointSeq: 2_000))
    #expect(
      timeline.reader.exactStretches.map { [$0.start, $0.end] } == [[0, 1_000], [2_000, 3_000]])
    #expect(try timeline.exactState(at: 3_000).state == restored)
    #expect(!timeline.exactness(at: 1_500).isExact)
  }

  /// The log layer's 1.0 reset interval is the codec's.
  @Test func theVersion1ResetIntervalIsTheCodecs() {
    #expect(Int(Format.v1RecordResetInterval) == EventCodecLayout.resetInterval)
  }
}

/// A fresh temporary directory, removed by the caller.
struct Scratch {
  let directory = (temporaryLogPath() as NSString).deletingLastPathComponent

  func path(_ name: String) -> String { directory + "/" + name }
  func remove() { try? FileManager.default.removeItem(atPath: directory) }
}
