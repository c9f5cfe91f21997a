import Foundation
import Testing

@Suite struct FindTests {
  @Test func findsThePlantedBugExactly() throws {
    let logs = try Planted.logs.get()
    let r = try CLI.run(["find", logs.buggy, "--where", "count(sections) == 6"])
    #expect(r.code == 0)
    let lines = r.out.lines.filter { !$0.isEmpty }.map(String.init)
    #expect(lines.count == 3, "\(r.out)")
    #expect(lines.first == "count(sections) == 6 is false at event 0")
    #expect(lines.dropFirst().first?.hasPrefix("event 12345: false → true  ") == true)
    #expect(lines.dropFirst().first?.hasSuffix("  appendSections  zzz-bug") == true)
    #expect(lines.last == "1 change in 20,001 events")
  }

  @Test func jsonLinesForAnIntegerExpression() throws {
    let logs = try Planted.logs.get()
    let r = try CLI.run(["find", logs.buggy, "--where", "count(sections)", "--json"])
    #expect(r.code == 0)
    let objects = try r.out.lines.filter { !$0.isEmpty }.map {
      try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
    }
    #expect(objects.count == 3)
    #expect(objects[0]["from"] as? Int == 0)
    #expect(objects[0]["to"] as? Int == 5)
    #expect(objects[1]["event"] as? Int == Planted.event)
    #expect(objects[1]["from"] as? Int == 5)
    #expect(objects[1]["to"] as? Int == 6)
    #expect(objects[1]["op"] as? String == "appendSections")
    #expect(objects[2]["changes"] as? Int == 2)
    #expect(objects[2]["initial"] as? Int == 0)
    #expect(objects[2]["events"] as? Int == 20_001)
  }

  @Test func everyChangeOfANonMonotonicPredicate() throws {
    let dir = try TempDir()
    let path = try CLI.record(CLI.sample("symbols"), in: dir)
    let r = try CLI.run(["find", path, "--where", #"expanded("header.communication")"#])
    #expect(r.code == 0)
    let events = r.out.lines.filter { $0.hasPrefix("event ") }.map {
      $0.split(separator: ":").first.map(String.init) ?? ""
    }
    #expect(
      events == [3, 7, 9, 70, 72, 73, 89, 96, 103].map { "event \($0)" }, "\(r.out)")
  }

  @Test func exitsOneWhenTheValueNeverChanges() throws {
    let logs = try Planted.logs.get()
    let r = try CLI.run(["find", logs.clean, "--where", #"exists("zzz-nothing")"#])
    #expect(r.code == 1)
    #expect(r.out == "exists(\"zzz-nothing\") is false at event 0\n0 changes in 20,000 events\n")
  }

  @Test func faults() throws {
    let dir = try TempDir()
    let path = try CLI.record(CLI.sample("form"), in: dir)
    let r = try CLI.run(["find", path, "--faults"])
    #expect(r.code == 0)
    let lines = r.out.lines.filter { !$0.isEmpty }
    #expect(lines.count == 2)
    #expect(lines.first?.hasPrefix("event 26: ") == true)
    #expect(lines.last == "1 fault in 41 events")
    let json = try CLI.run(["find", path, "--faults", "--json"])
    let object = try #require(
      try JSONSerialization.jsonObject(with: Data(json.out.utf8)) as? [String: Any])
    #expect(object["event"] as? Int == 26)
    #expect(object["op"] is String)
    #expect(object["reason"] is String)
    // None: exit 1.
    let clean = try Handmade.record(in: dir)
    let none = try CLI.run(["find", clean, "--faults"])
    #expect(none.code == 1)
    #expect(none.out == "0 faults in 12 events\n")
  }

  @Test func usageErrors() throws {
    #expect(try CLI.run(["find", "x.ltape"]).code == 64)
    #expect(try CLI.run(["find", "x.ltape", "--faults", "--where", "count(items)"]).code == 64)
    let bad = try CLI.run(["find", "x.ltape", "--where", "count(items) >"])
    #expect(bad.code == 64)
    #expect(
      bad.err.hasPrefix("Error: The expression for '--where <expr>' is malformed: column 15: "))
  }
}
