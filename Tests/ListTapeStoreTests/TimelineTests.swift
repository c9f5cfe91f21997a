import Foundation
import ListTapeInvestigate
import ListTapeLog
import ListTapeModel
import ListTapeRead
import ListTapeSamples
import Testing

@testable import ListTapeStore

/// A fresh temporary path for a log, removed by the caller.
func temporaryLogPath(_ name: String = #function) -> String {
  let dir = FileManager.default.temporaryDirectory.appendingPathComponent(
    "listtape-tests-\(UUID().uuidString)")
  try? FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
  return dir.appendingPathComponent("log.ltape").path
}

@Suite struct TimelineTests {
  /// Records a generated session and checks seeks, events and replay against a direct fold.
  @Test(arguments: [UInt64(1), 2, 3])
  func seekEqualsDirectFold(seed: UInt64) throws {
    let path = temporaryLogPath()
    defer {
      try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent)
    }
    var direct: [ListState] = [ListState()]
    var events: [Event] = []
    var options = Recorder.options(.never)
    options.maxEventsBetweenCheckpoints = 1_500
    options.minCheckpointSpacingBytes = 0
    let recorder = try Recorder.open(path: path, options: options)
    var state = ListState()
    SampleSession.generate(events: 8_000, seed: seed, maxItems: 1_000) { e in
      _ = try? recorder.record(e)
      try? state.apply(e)
      events.append(e)
      if events.count % 500 == 0 { direct.append(state) }
    }
    try recorder.close()
    let timeline = try Timeline(path: path)
    #expect(timeline.eventCount == events.count)
    #expect(timeline.damage == nil)
    for (i, expected) in direct.enumerated() {
      #expect(try timeline.state(at: i * 500) == expected)
    }
    var replayed: [Event] = []
    try timeline.forEachEvent { _, e in
      replayed.append(e)
      return true
    }
    #expect(replayed == events)
    #expect(try timeline.event(4_321) == events[4_320])
    var faults = 0
    let (final, stopped) = try timeline.replay(through: .max) { _, _, _ in
      faults += 1
      return true
    }
    #expect(stopped == events.count)
    #expect(final == state)
    #expect(faults > 0)
    let report = timeline.verify()
    #expect(report.intact, "\(String(describing: report.problem))")
    #expect(report.checkpoints > 0)
  }
}

@Suite struct VerifyCheckpointTests {
  /// A checkpoint whose state is not the fold of the events before it (here: with a section
  /// no event added) is reported by verify with its event number, even when the events
  /// before it are read on the second thread.
  @Test func verifyFindsACheckpointThatDisagreesWithTheFold() throws {
    let path = temporaryLogPath()
    defer {
      try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent)
    }
    var options = Recorder.options(.never)
    options.formatMajor = 1
    let writer = try LogWriter.open(path: path, options: options)
    var encoder = EventEncoder()
    var state = ListState()
    var n = 0
    SampleSession.generate(events: 30_000, seed: 6, maxItems: 1_000) { e in
      n += 1
      try? state.apply(e)
      try? writer.append(encoder.encode(e))
      if n == 10_000 || n == 30_000 {
        var saved = state
        if n == 30_000 { try? saved.appendSections(["not-in-the-log"]) }
        try? writer.appendCheckpoint(
          Checkpoint(state: saved, lastTime: encoder.lastTime).encoded())
      }
    }
    try writer.close()
    let report = try Timeline(path: path).verify()
    #expect(report.checkpoints == 2)
    guard case .checkpointDisagrees(event: 30_000)? = report.problem else {
      Issue.record(
        "expected the checkpoint at 30000 to disagree: \(String(describing: report.problem))")
      return
    }
    #expect(report.lastIntactEvent == 30_000)
  }
}

@Suite struct SalvageTests {
  /// A log damaged mid-file is salvaged into a new one whose lost range is known; scans skip
  /// the events that cannot be decoded after it and read every other event exactly.
  @Test func salvagedLogsReadAroundTheirGaps() throws {
    let path = temporaryLogPath()
    defer {
      try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent)
    }
    var options = Recorder.options(.never)
    options.formatMajor = 1  // 1.0 resumes at reset points; Format2Tests covers 2.0
    options.maxEventsPerFrame = 100
    options.maxEventsBetweenCheckpoints = 700
    options.minCheckpointSpacingBytes = 0
    let recorder = try Recorder.open(path: path, options: options)
    var events: [Event] = []
    SampleSession.generate(events: 3_000, seed: 4, maxItems: 500) { e in
      _ = try? recorder.record(e)
      events.append(e)
    }
    try recorder.close()
    // Flip a byte in the event frame holding event 1500: it becomes unreadable.
    var frame: UInt64 = 0
    try LogReader(path: path).forEachFrame(from: 1_500, through: 1_500) { view in
      frame = view.offset
      return false
    }
    var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
    bytes[Int(frame) + 40] ^= 0x5A
    try Data(bytes).write(to: URL(fileURLWithPath: path))
    let damaged = try Timeline(path: path)
    #expect(damaged.damage?.kind == .damaged)

    let out = path + "-salvaged"
    let summary = try Timeline.salvage(path, to: out)
    #expect(!summary.gaps.isEmpty)
    let salvaged = try Timeline(path: out)
    #expect(salvaged.eventCount == events.count)
    #expect(!salvaged.gaps.isEmpty)
    var read: [Int: Event] = [:]
    try salvaged.forEachEvent { n, e in
      read[n] = e
      return true
    }
    #expect(salvaged.skippedAfterGaps > 0)
    #expect(read.count < events.count)
    for (n, e) in read { #expect(e == events[n - 1], "event \(n)") }
    // Every event from the first reset point after the gap on reads back.
    let missing = (1...events.count).filter { read[$0] == nil }
    let lastMissing = try #require(missing.last)
    #expect((lastMissing + 1...events.count).allSatisfy { read[$0] != nil })
    let (_, stopped) = try salvaged.replay(through: .max) { _, _, _ in true }
    #expect(stopped == events.count)
  }
}

@Suite struct LiveLogTests {
  /// An incomplete last frame is damage once the recorder is gone, but not while a recorder
  /// holds the log: then it is a frame being written.
  @Test func aFrameBeingWrittenIsNotDamage() throws {
    let path = temporaryLogPath()
    defer {
      try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent)
    }
    let recorder = try Recorder.open(path: path, fsync: .never)
    var events: [Event] = []
    SampleSession.generate(events: 50, seed: 9, maxItems: 100) { events.append($0) }
    for e in events { _ = try recorder.record(e) }
    try recorder.sync()
    // Half a frame header at the end, as a concurrent reader may see mid-write.
    let handle = try #require(FileHandle(forWritingAtPath: path))
    try handle.seekToEnd()
    try handle.write(contentsOf: Data([0xF1, 0x46, 0x52, 0x4D, 0x01, 0x00]))
    try handle.close()
    let live = try Timeline(path: path)
    #expect(live.damage == nil)
    #expect(live.eventCount == 50)
    try recorder.close()
    // The writer's close flushed nothing new, so the garbage is still the tail: now damage.
    let after = try Timeline(path: path)
    #expect(after.damage != nil)
  }
}
