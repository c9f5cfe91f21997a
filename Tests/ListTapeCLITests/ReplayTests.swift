import Foundation
import Testing

@Suite struct ReplayTests {
  @Test func reportsEveryFaultAndExitsThree() throws {
    let dir = try TempDir()
    let path = try CLI.record(CLI.sample("symbols"), in: dir)
    let r = try CLI.run(["replay", path])
    #expect(r.code == 3)
    let lines = r.out.lines.filter { !$0.isEmpty }
    #expect(
      lines.first == "event 98: select: item \"message\" is not visible (an ancestor is collapsed)")
    #expect(
      lines.last?.hasPrefix(
        "replayed 105 events: 1 fault; 1 section, 22 items (22 visible, 1 selected) in ") == true)
  }

  @Test func stopsBeforeTheFault() throws {
    let dir = try TempDir()
    let path = try CLI.record(CLI.sample("symbols"), in: dir)
    let r = try CLI.run(["replay", path, "--to", "97"])
    #expect(r.code == 0)
    #expect(r.out.hasPrefix("replayed 97 events of 105: no faults;"))
    let mark = try CLI.run(["replay", path, "--to", "mark:more categories loaded"])
    #expect(mark.code == 0)
    #expect(try CLI.run(["replay", path, "--to", "106"]).code == 64)
  }

  @Test func strictStopsAtTheFirstFault() throws {
    let dir = try TempDir()
    let path = dir.path("log.ltape")
    let input = [
      #"{"op":"appendSections","sections":["s"]}"#, #"{"op":"select","items":["a"]}"#,
      #"{"op":"appendItems","items":["a"]}"#, #"{"op":"deleteSections","sections":["x"]}"#,
      #"{"op":"moveItem","item":"a","before":"a"}"#,
    ].joined(separator: "\n")
    #expect(try CLI.run(["record", path], input: Data(input.utf8)).code == 0)
    let all = try CLI.run(["replay", path])
    #expect(all.code == 3)
    #expect(all.out.contains("event 2: select: no item \"a\"\n"))
    #expect(all.out.contains("event 5: moveItem: cannot move \"a\" next to itself\n"))
    #expect(all.out.contains(": 2 faults;"))
    let strict = try CLI.run(["replay", path, "--strict"])
    #expect(strict.code == 3)
    #expect(!strict.out.contains("event 5:"))
    #expect(strict.out.contains("replayed 2 events of 5: 1 fault (stopped at the first, --strict)"))
  }

  /// A log with no events replays to the empty list, which is the recorded state at 0 (it
  /// said "the state at event 0 is not the recorded one" and `"exact": false`).
  @Test func anEmptyLogReplaysToTheEmptyList() throws {
    let dir = try TempDir()
    let path = dir.path("empty.ltape")
    #expect(try CLI.run(["record", path], input: Data()).code == 0)
    let r = try CLI.run(["replay", path])
    #expect(r.code == 0)
    #expect(r.out.hasPrefix("replayed 0 events: no faults; 0 sections, 0 items (0 visible, "))
    let json = try CLI.run(["replay", path, "--json"])
    let object = try #require(
      try JSONSerialization.jsonObject(with: Data(json.out.utf8)) as? [String: Any])
    #expect(object["exact"] as? Bool == true)
    #expect(object["events"] as? Int == 0)
  }

  @Test func jsonSummary() throws {
    let dir = try TempDir()
    let path = try CLI.record(CLI.sample("contacts"), in: dir)
    let r = try CLI.run(["replay", path, "--json"])
    #expect(r.code == 3)
    let object = try #require(
      try JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [String: Any])
    #expect(object["events"] as? Int == 75)
    #expect(object["faults"] as? Int == 1)
    let faults = try #require(object["faultsFound"] as? [[String: Any]])
    #expect(faults.first?["event"] as? Int == 71)
    #expect(faults.first?["op"] as? String == "reconfigureItems")
  }

  @Test(arguments: CLI.sampleNames)
  func everySampleHasADeliberateFault(_ name: String) throws {
    let dir = try TempDir()
    let path = try CLI.record(CLI.sample(name), in: dir)
    let r = try CLI.run(["replay", path])
    #expect(r.code == 3)
    #expect(r.out.lines.filter { $0.hasPrefix("event ") }.count == 1)
  }
}
