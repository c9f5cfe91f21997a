import Foundation
import ListTapeModel
import Testing

@Suite struct EventsTests {
  @Test func readableForm() throws {
    let dir = try TempDir()
    let path = try CLI.record(CLI.sample("form"), in: dir)
    let r = try CLI.run(["events", path, "--from", "20", "--to", "22", "--numbered"])
    #expect(r.code == 0)
    let lines = r.out.lines.filter { !$0.isEmpty }
    #expect(lines.count == 3)
    #expect(lines[0].hasPrefix("#20  2020-09-24T"))
    #expect(lines[0].hasSuffix("batch  3 events: select, update, collapse"))
    #expect(lines[1].hasSuffix("expand  favoriteColor"))
    let plain = try CLI.run(["events", path, "--to", "1"])
    #expect(plain.out.hasSuffix("Z  appendSections  personal, preferences, work\n"))
  }

  @Test func rangeAndOpFilter() throws {
    let dir = try TempDir()
    let path = try CLI.record(CLI.sample("contacts"), in: dir)
    let (events, _) = try CLI.foldedStates(CLI.sample("contacts"))
    let r = try CLI.run(["events", path, "--op", "deleteItems", "--json", "--numbered"])
    let lines = r.out.lines.filter { !$0.isEmpty }
    let expected = events.enumerated().filter { $0.element.op == "deleteItems" }
    #expect(lines.count == expected.count)
    for (line, (i, event)) in zip(lines, expected) {
      #expect(line.hasPrefix("{\"event\":\(i + 1),\"op\":\"deleteItems\","))
      #expect(try Event(jsonLine: String(line)) == event)
    }
    let window = try CLI.run(["events", path, "--from", "10", "--to", "12", "--json"])
    #expect(
      window.out.lines.filter { !$0.isEmpty }.map { try? Event(jsonLine: String($0)) }
        == Array(events[9..<12]))
    #expect(try CLI.run(["events", path, "--from", "12", "--to", "10"]).code == 64)
    #expect(try CLI.run(["events", path, "--from", "0"]).out == CLI.run(["events", path]).out)
    #expect(try CLI.run(["events", path, "--to", "76"]).code == 64)
  }
}
