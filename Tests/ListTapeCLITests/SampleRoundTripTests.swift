import Foundation
import ListTapeModel
import Testing

/// Recording every sample and reading it back gives the states the model computes directly.
@Suite struct SampleRoundTripTests {
  @Test(arguments: CLI.sampleNames)
  func recordedSampleShowsTheFoldedStates(_ name: String) throws {
    let dir = try TempDir()
    let path = try CLI.record(CLI.sample(name), in: dir)
    let (events, states) = try CLI.foldedStates(CLI.sample(name))
    #expect(events.count >= 30)
    #expect(events.contains { if case .mark = $0.operation { true } else { false } })
    #expect(events.allSatisfy { $0.time != nil })
    // Every event number, so checkpoint seeks are crossed wherever they fall.
    for n in 0...events.count {
      let r = try CLI.run(["show", path, "--at", String(n), "--json"])
      #expect(r.code == 0)
      #expect(r.out == states[n] + "\n", "\(name) at \(n)")
    }
    #expect(try CLI.run(["show", path, "--json"]).out == (states.last ?? "") + "\n")
  }

  @Test(arguments: CLI.sampleNames)
  func marksResolveToTheirEvents(_ name: String) throws {
    let dir = try TempDir()
    let path = try CLI.record(CLI.sample(name), in: dir)
    let (events, states) = try CLI.foldedStates(CLI.sample(name))
    var seen = Set<String>()
    for (i, event) in events.enumerated() {
      guard case .mark(let label) = event.operation, seen.insert(label).inserted else { continue }
      let r = try CLI.run(["show", path, "--at", "mark:\(label)", "--json"])
      #expect(r.out == states[i + 1] + "\n", "mark \(label)")
    }
    #expect(!seen.isEmpty)
  }

  @Test(arguments: CLI.sampleNames)
  func eventsJSONRecordedAgainGivesTheSameStates(_ name: String) throws {
    let dir = try TempDir()
    let path = try CLI.record(CLI.sample(name), in: dir)
    let dump = try CLI.run(["events", path, "--json"])
    #expect(dump.code == 0)
    let copy = dir.path("copy.ltape")
    let again = try CLI.run(["record", copy], input: Data(dump.out.utf8))
    #expect(again.code == 0)
    // Same events, times included, so the same states everywhere.
    #expect(try CLI.run(["events", copy, "--json"]).out == dump.out)
    let (events, states) = try CLI.foldedStates(CLI.sample(name))
    for n in [0, events.count / 3, events.count / 2, events.count] {
      #expect(try CLI.run(["show", copy, "--at", String(n), "--json"]).out == states[n] + "\n")
    }
    // The numbered form records the same way: the extra key is ignored.
    let numbered = try CLI.run(["events", path, "--json", "--numbered"])
    let third = dir.path("third.ltape")
    #expect(try CLI.run(["record", third], input: Data(numbered.out.utf8)).code == 0)
    #expect(try CLI.run(["show", third, "--json"]).out == (states.last ?? "") + "\n")
  }
}

/// The committed sample logs hold exactly their JSON Lines sources: the 2.0 ones in
/// Logs/samples and the 1.0 ones kept as golden logs.
@Suite struct CommittedSampleTests {
  @Test(arguments: CLI.sampleNames, [2, 1])
  func committedLogMatchesItsSource(_ name: String, _ format: Int) throws {
    let directory =
      format == 2 ? CLI.samples : CLI.packageRoot.appendingPathComponent("Logs/golden/samples-v1")
    let log = directory.appendingPathComponent(name + ".ltape").path
    let header = try [UInt8](Data(contentsOf: URL(fileURLWithPath: log)).prefix(10))
    #expect(Int(header[8]) == format, "\(log) is not format \(format).x")
    #expect(try CLI.run(["verify", log]).code == 0)
    let (events, states) = try CLI.foldedStates(CLI.sample(name))
    let dump = try CLI.run(["events", log, "--json"])
    #expect(
      dump.out.lines.filter { !$0.isEmpty }.map { try? Event(jsonLine: String($0)) } == events)
    #expect(try CLI.run(["show", log, "--json"]).out == (states.last ?? "") + "\n")
  }
}
