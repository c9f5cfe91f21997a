import Foundation
import ListTapeInvestigate
import ListTapeLog
import ListTapeModel
import ListTapeRead
import ListTapeSamples
import Testing

@testable import ListTapeStore

/// The golden logs in Logs/golden must keep reading back to the same events and states.
@Suite struct GoldenTests {
  static let golden = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Logs/golden")

  func path(_ name: String) -> String { Self.golden.appendingPathComponent(name).path }

  func lines(_ name: String) throws -> [String] {
    let text = try String(contentsOfFile: path(name), encoding: .utf8)
    return text.split(separator: "\n").map(String.init)
  }

  /// A golden 2.0 log copied to a scratch directory (seeks there may write an index file,
  /// which must not land in Logs/golden).
  func scratchCopy(_ name: String) throws -> String {
    let copy = temporaryLogPath()
    try FileManager.default.copyItem(atPath: path(name), toPath: copy)
    return copy
  }

  func removeScratch(_ file: String) {
    try? FileManager.default.removeItem(atPath: (file as NSString).deletingLastPathComponent)
  }

  @Test(arguments: [("every-op.ltape", 1), ("every-op.v2.ltape", 2)])
  func everyOpReadsBackToTheSameEventsAndStates(_ name: String, _ major: Int) throws {
    let file = major == 1 ? path(name) : try scratchCopy(name)
    defer { if major != 1 { removeScratch(file) } }
    let timeline = try Timeline(path: file)
    #expect(timeline.formatMajor == major)
    let source = try lines("every-op.jsonl").map { try Event(jsonLine: $0) }
    #expect(timeline.eventCount == source.count)
    var read: [Event] = []
    try timeline.forEachEvent { _, e in
      read.append(e)
      return true
    }
    #expect(read == source)
    let expected = try lines("every-op.states.jsonl")
    #expect(expected.count == source.count + 1)
    for (n, json) in expected.enumerated() {
      #expect(try timeline.state(at: n).json(event: n) == json, "event \(n)")
    }
    #expect(timeline.verify().intact)
  }

  @Test(arguments: [
    ("session-30k.ltape", "session-30k.state-hashes", 1, 30_000),
    ("session-30k.v2.ltape", "session-30k.state-hashes", 2, 30_000),
    ("churn-80k.v2.ltape", "churn-80k.state-hashes", 2, 80_000),
  ])
  func longSessionKeepsItsStates(_ name: String, _ hashes: String, _ major: Int, _ events: Int)
    throws
  {
    let file = major == 1 ? path(name) : try scratchCopy(name)
    defer { if major != 1 { removeScratch(file) } }
    let timeline = try Timeline(path: file)
    // Through an index file with a seek point every 10,000 events, too (2.0).
    timeline.indexSpacing = 10_000
    #expect(timeline.formatMajor == major)
    #expect(timeline.eventCount == events)
    #expect(timeline.checkpointCount >= (name.hasPrefix("churn") ? 2 : major == 1 ? 2 : 0))
    if name.hasPrefix("churn") {
      #expect(try LogReader(path: path(name)).dictionaryFrameCount == 2)
    }
    for line in try lines(hashes) {
      let parts = line.split(separator: " ")
      let n = try #require(Int(parts[0]))
      let json = try timeline.state(at: n).json(event: n)
      var h: UInt64 = 0xcbf2_9ce4_8422_2325
      for b in json.utf8 {
        h ^= UInt64(b)
        h = h &* 0x100_0000_01b3
      }
      #expect(String(h, radix: 16).leftPadded(16) == String(parts[1]), "event \(n)")
    }
    let report = timeline.verify()
    #expect(report.intact, "\(String(describing: report.problem))")
  }
}

extension GoldenTests {
  /// A log with sites in layout 2 (`churn-sites-80k.v2.ltape`, written by the release
  /// before layout 3), the same events recorded now (layout 3: one site model across
  /// frames, started over at each of 18 dictionary restarts) and the golden log upgraded:
  /// each reads back to the generator's events, sites included, from its start and from
  /// seeks before and after its index exists.
  @Test func sitedLogsOfEitherLayoutReadBackTheSameEvents() throws {
    var source: [Event] = []
    SampleSession.generate(
      events: 80_000, seed: 7, maxItems: 300, opening: .outline(items: 200, shape: .path),
      sites: .init(count: 40)
    ) { source.append($0) }
    let old = try scratchCopy("churn-sites-80k.v2.ltape")
    defer { removeScratch(old) }
    let restarts = try LogReader(path: old).dictionaryFrameCount
    #expect(restarts == 18, "\(restarts) restarts")
    let recorded = old + ".recorded.ltape"
    let recorder = try Recorder.open(path: recorded, options: Recorder.options(.never))
    for e in source { _ = try recorder.record(e) }
    try recorder.close()
    let upgraded = old + ".upgraded.ltape"
    _ = try Timeline(path: old).upgrade(to: upgraded)
    for (file, layout) in [(old, 2), (recorded, 3), (upgraded, 3)] {
      var layouts = Set<UInt8>()
      try LogReader(path: file).forEachFrame(from: 1) { view in
        if view.kind == .events, let b = view.payload.first { layouts.insert(b) }
        return true
      }
      #expect(layouts == [UInt8(layout)], "\(file)")
      var read: [Event] = []
      try Timeline(path: file).forEachEvent { _, e in
        read.append(e)
        return true
      }
      #expect(read == source, "\(file)")
      for indexed in [false, true] {
        let timeline = try Timeline(path: file)
        timeline.indexSpacing = 10_000
        if indexed { try timeline.buildIndex() }
        for n in [2, 9_999, 10_003, 35_001, 61_234, 79_990] {
          var got: [Event] = []
          try timeline.forEachEvent(from: n, through: n + 5) { _, e in
            got.append(e)
            return true
          }
          #expect(got == Array(source[(n - 1)..<(n + 5)]), "\(file) from \(n), index \(indexed)")
        }
      }
    }
  }
}

extension String {
  fileprivate func leftPadded(_ n: Int) -> String {
    String(repeating: "0", count: max(0, n - count)) + self
  }
}
