import Foundation
import Testing

@Suite struct DivergeTests {
  @Test func locatesThePlantedBugExactly() throws {
    let logs = try Planted.logs.get()
    let r = try CLI.run(["diverge", logs.buggy, logs.clean])
    #expect(r.code == 0, "\(r.err)")
    let lines = r.out.lines.map(String.init)
    #expect(lines.first == "\(logs.buggy) and \(logs.clean) diverge at event 12345")
    #expect(lines.dropFirst().first?.hasPrefix("  \(logs.buggy): #12345  ") == true)
    #expect(lines.dropFirst().first?.hasSuffix("appendSections  zzz-bug") == true)
    #expect(lines.dropFirst(2).first?.hasPrefix("  \(logs.clean): #12345  ") == true)
    #expect(lines.contains("records identical through event 12344"))
    #expect(lines.contains("- section zzz-bug"))
    let json = try CLI.run(["diverge", logs.buggy, logs.clean, "--json"])
    let object = try #require(
      try JSONSerialization.jsonObject(with: Data(json.out.utf8)) as? [String: Any])
    #expect(object["event"] as? Int == Planted.event)
    #expect(object["firstDifferentRecord"] as? Int == Planted.event)
    #expect((object["a"] as? [String: Any])?["events"] as? Int == 20_001)
    #expect((object["a"] as? [String: Any])?["op"] as? String == "appendSections")
    let a = try #require((object["a"] as? [String: Any])?["recorded"] as? [String: Any])
    #expect(a["op"] as? String == "appendSections")
    let diff = try #require(object["diff"] as? [String: Any])
    #expect((diff["sections"] as? [String: Any])?["deleted"] as? [String] == ["zzz-bug"])
  }

  @Test func aLogNeverDivergesFromItsReRecordedCopy() throws {
    let dir = try TempDir()
    let path = try Handmade.record(in: dir)
    let events = try CLI.run(["events", path, "--json"])
    let copy = dir.path("copy.ltape")
    #expect(try CLI.run(["record", copy], input: Data(events.out.utf8)).code == 0)
    let r = try CLI.run(["diverge", path, copy])
    #expect(r.code == 1)
    #expect(r.out == "\(path) and \(copy) never diverge: the states are equal at every event\n")
    let json = try CLI.run(["diverge", path, path, "--json"])
    #expect(json.code == 1)
    #expect(json.out.hasPrefix(#"{"event":null,"#))
  }

  @Test func aLongerLogDivergesPastTheShortOnesEnd() throws {
    let dir = try TempDir()
    let a = try Handmade.record(in: dir, name: "a.ltape")
    let b = try Handmade.record(in: dir, name: "b.ltape", lines: Array(Handmade.lines.prefix(11)))
    let r = try CLI.run(["diverge", a, b])
    #expect(r.code == 0)
    #expect(r.out.contains("diverge at event 12\n"))
    #expect(r.out.contains("  \(b): (past its last event, 11)\n"))
    #expect(r.out.contains("selection {keyboard} → {}\n"))
  }

  @Test func selectionModeAloneIsADivergence() throws {
    let dir = try TempDir()
    let a = try Handmade.record(in: dir, name: "a.ltape")
    let b = try Handmade.record(
      in: dir, name: "b.ltape",
      lines: Handmade.lines + [#"{"op":"configure","multipleSelection":true}"#])
    let r = try CLI.run(["diverge", a, b])
    #expect(r.code == 0)
    #expect(r.out.contains("selection mode single → multiple\n"))
  }
}
