import Foundation
import Testing

@Suite struct VerifyStatsTests {
  @Test func intactLog() throws {
    let dir = try TempDir()
    let path = try CLI.record(CLI.sample("symbols"), in: dir)
    let r = try CLI.run(["verify", path])
    #expect(r.code == 0)
    #expect(r.out.hasPrefix("\(path): intact: 105 events in "))
    let json = try CLI.run(["verify", path, "--json"])
    let object = try #require(
      try JSONSerialization.jsonObject(with: Data(json.out.utf8)) as? [String: Any])
    #expect(object["intact"] as? Bool == true)
    #expect(object["events"] as? Int == 105)
    #expect(object["offset"] is NSNull)
  }

  @Test func flippedByteIsReportedWithOffsetAndEvent() throws {
    let dir = try TempDir()
    let path = try CLI.record(CLI.sample("contacts"), in: dir)
    var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
    let middle = bytes.count / 2
    bytes[middle] ^= 0xFF
    let damaged = dir.path("damaged.ltape")
    try bytes.write(to: URL(fileURLWithPath: damaged))
    let r = try CLI.run(["verify", damaged])
    #expect(r.code == 2)
    let first = try #require(r.out.lines.first.map(String.init))
    #expect(first.hasPrefix("\(damaged): damaged at byte "), "\(r.out)")
    #expect(first.contains("(event "))
    let json = try CLI.run(["verify", damaged, "--json"])
    #expect(json.code == 2)
    let object = try #require(
      try JSONSerialization.jsonObject(with: Data(json.out.utf8)) as? [String: Any])
    #expect(object["intact"] as? Bool == false)
    let offset = try #require(object["offset"] as? Int)
    #expect(offset <= middle)
    #expect(object["event"] as? Int != nil)
    // Reading commands still serve what comes before the damage, and say so.
    let show = try CLI.run(["show", damaged])
    #expect(show.err.hasPrefix("listtape: warning: "))
    #expect(try CLI.run(["replay", damaged]).code == 2)
  }

  @Test func notALog() throws {
    let dir = try TempDir()
    let path = dir.path("notes.txt")
    try Data("hello, this is not a log\n".utf8).write(to: URL(fileURLWithPath: path))
    for command in ["verify", "show", "replay", "events", "stats"] {
      let r = try CLI.run([command, path])
      #expect(r.code == 2, "\(command)")
      #expect(r.err.hasPrefix("listtape: error: "))
    }
  }

  @Test(arguments: ["show", "replay", "events", "verify", "stats"])
  func missingFileExits66(_ command: String) throws {
    let dir = try TempDir()
    let r = try CLI.run([command, dir.path("absent.ltape")])
    #expect(r.code == 66)
    #expect(r.out.isEmpty)
    #expect(r.err.hasPrefix("listtape: error: "))
    #expect(r.err.contains("absent.ltape"))
    #expect(r.err.lines.filter { !$0.isEmpty }.count == 1)
  }

  @Test func recordIntoAnUnwritablePlace() throws {
    let dir = try TempDir()
    let r = try CLI.run(["record", dir.path("no/such/dir/log.ltape")])
    #expect(r.code == 66)
    #expect(r.err.hasPrefix("listtape: error: "))
  }

  @Test func statsText() throws {
    let dir = try TempDir()
    let path = try CLI.record(CLI.sample("contacts"), in: dir)
    let r = try CLI.run(["stats", path])
    #expect(r.code == 0)
    #expect(r.out.contains("  events       75\n"))
    #expect(r.out.contains("  faults       1\n"))
    #expect(r.out.contains("bytes/event)"))
    #expect(r.out.contains("  time span    2020-06-26T14:40:"))
    #expect(r.out.contains("    select   "))
  }

  @Test func statsJSON() throws {
    let dir = try TempDir()
    let path = try CLI.record(CLI.sample("symbols"), in: dir)
    let (events, _) = try CLI.foldedStates(CLI.sample("symbols"))
    let r = try CLI.run(["stats", path, "--json"])
    let object = try #require(
      try JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [String: Any])
    #expect(object["events"] as? Int == events.count)
    #expect(object["faults"] as? Int == 1)
    let ops = try #require(object["ops"] as? [String: Int])
    #expect(ops.values.reduce(0, +) == events.count)
    #expect(ops["select"] == events.filter { $0.op == "select" }.count)
    #expect(object["firstTime"] as? Int == events.first?.time.map(Int.init))
    #expect(object["lastTime"] as? Int == events.last?.time.map(Int.init))
    #expect((object["bytes"] as? Int ?? 0) > 0)
  }
}
