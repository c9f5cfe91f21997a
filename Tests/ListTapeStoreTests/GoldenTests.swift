import Foundation
import ListTapeInvestigate
import ListTapeModel
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

  @Test func everyOpReadsBackToTheSameEventsAndStates() throws {
    let timeline = try Timeline(path: path("every-op.ltape"))
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

  @Test func longSessionKeepsItsStates() throws {
    let timeline = try Timeline(path: path("session-30k.ltape"))
    #expect(timeline.eventCount == 30_000)
    #expect(timeline.checkpointCount >= 2)
    for line in try lines("session-30k.state-hashes") {
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
