import Foundation
import ListTapeModel
import Testing

@testable import ListTapeReplay

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
    #expect(timeline.damageNote == nil)
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
    #expect(report.intact, "\(report.problem ?? "")")
    #expect(report.checkpoints > 0)
  }
}
