import Foundation
import ListTapeModel
import Testing

@Suite struct ShowTests {
  @Test func textRenderingOfTheForm() throws {
    let dir = try TempDir()
    let path = try CLI.record(CLI.sample("form"), in: dir)
    let r = try CLI.run(["show", path, "--at", "mark:name entered"])
    #expect(r.code == 0)
    #expect(r.err.isEmpty)
    let lines = r.out.lines.map(String.init)
    #expect(lines.first?.hasPrefix("event 10 of 41  mark  2020-09-24T") == true, "\(r.out)")
    #expect(lines.first?.hasSuffix("“name entered”") == true)
    #expect(lines.contains("personal  7 items, 3 visible"))
    #expect(lines.contains("  ▸ fullName  \"Jane Appleseed\""))
    #expect(lines.contains("  ▸ favoriteSport  \"Favorite sport\""))
    // Hidden rows are left out by default...
    #expect(!r.out.contains("firstName"))
    // ...and shown, marked, with --all.
    let all = try CLI.run(["show", path, "--at", "10", "--all"])
    #expect(
      all.out.contains("    firstName  \"First name\"  [kind=textfield, value=Jane]  (hidden)"))
    #expect(!all.out.contains("\u{1B}["))
  }

  @Test func expandedParentsAndSelection() throws {
    let dir = try TempDir()
    let path = try CLI.record(CLI.sample("languages"), in: dir)
    let r = try CLI.run(["show", path])
    #expect(r.out.contains("  ▾ Programming Languages\n"))
    #expect(r.out.contains("      Rust\n"))
    #expect(r.out.contains("  ▾ Query Languages\n      SQL ✓\n"))
    #expect(r.out.contains("1 selected · single selection"))
  }

  @Test func emptyStateAtZero() throws {
    let dir = try TempDir()
    let path = try CLI.record(CLI.sample("contacts"), in: dir)
    let r = try CLI.run(["show", path, "--at", "0"])
    #expect(r.code == 0)
    #expect(r.out.hasPrefix("event 0 of 75  (the empty list before the first event)\n"))
    #expect(r.out.contains("(no sections)"))
  }

  @Test func prettyJSONIsTheSameDocument() throws {
    let dir = try TempDir()
    let path = try CLI.record(CLI.sample("symbols"), in: dir)
    let compact = try CLI.run(["show", path, "--json", "--at", "30"]).out
    let pretty = try CLI.run(["show", path, "--json", "--pretty", "--at", "30"]).out
    #expect(pretty.lines.count > 10)
    #expect(pretty.hasPrefix("{\n  \"event\": 30,"))
    let a = try JSONSerialization.jsonObject(with: Data(compact.utf8)) as? NSDictionary
    let b = try JSONSerialization.jsonObject(with: Data(pretty.utf8)) as? NSDictionary
    #expect(a != nil && a == b)
  }

  @Test func timePoints() throws {
    let dir = try TempDir()
    let path = try CLI.record(CLI.sample("languages"), in: dir)
    let (events, states) = try CLI.foldedStates(CLI.sample("languages"))
    let fifth = try #require(events[4].time)
    let iso = Date(timeIntervalSince1970: Double(fifth) / 1000)
      .formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    let r = try CLI.run(["show", path, "--at", "time:\(iso)", "--json"])
    #expect(r.out == states[5] + "\n", "\(iso): \(r.err)")
    let before = try CLI.run(["show", path, "--at", "time:2001-01-01T00:00:00Z", "--json"])
    #expect(before.out == states[0] + "\n")
  }

  @Test func badPoints() throws {
    let dir = try TempDir()
    let path = try CLI.record(CLI.sample("languages"), in: dir)
    let past = try CLI.run(["show", path, "--at", "9999"])
    #expect(past.code == 64)
    #expect(past.err.hasPrefix("Error: --at 9999 is out of range: \(path) has 52 events (0...52)"))
    #expect(try CLI.run(["show", path, "--at", "-1"]).code == 64)
    #expect(try CLI.run(["show", path, "--at", "twelve"]).code == 64)
    #expect(try CLI.run(["show", path, "--at", "time:yesterday"]).code == 64)
    let noMark = try CLI.run(["show", path, "--at", "mark:no such mark"])
    #expect(noMark.code == 64)
    #expect(
      noMark.err.hasPrefix(
        "Error: --at mark:no such mark: no mark \"no such mark\" in \(path); its marks: \"loaded\", "
          + "\"more languages\", \"bug: Swift added twice\", \"end\""))
    let huge = try CLI.run(["show", path, "--at", "99999999999999999999"])
    #expect(huge.code == 64)
    #expect(
      huge.err.hasPrefix(
        "Error: The value '99999999999999999999' for '--at <point>' is out of range"))
    let pretty = try CLI.run(["show", path, "--pretty"])
    #expect(pretty.code == 64)
    #expect(pretty.err.hasPrefix("Error: '--pretty' indents the JSON: use it with '--json'"))
  }
}
