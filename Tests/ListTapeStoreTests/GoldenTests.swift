import Foundation
import ListTapeInvestigate
import ListTapeLog
import ListTapeModel
import ListTapeRead
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

extension String {
  fileprivate func leftPadded(_ n: Int) -> String {
    String(repeating: "0", count: max(0, n - count)) + self
  }
}
