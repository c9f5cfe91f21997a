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

  /// A generated session big enough to span several frames.
  private func bigLog(in dir: TempDir) throws -> String {
    let gen = try CLI.run(["generate", "--events", "5000", "--seed", "3"])
    let path = dir.path("big.ltape")
    #expect(try CLI.run(["record", path], input: Data(gen.out.utf8)).code == 0)
    return path
  }

  private func copy(_ path: String, to name: String, in dir: TempDir, _ edit: (inout Data) -> Void)
    throws -> String
  {
    var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
    edit(&bytes)
    let out = dir.path(name)
    try bytes.write(to: URL(fileURLWithPath: out))
    return out
  }

  @Test func flippedByteIsReportedWithOffsetAndEvent() throws {
    let dir = try TempDir()
    let path = try bigLog(in: dir)
    var flipped = 0
    let damaged = try copy(path, to: "damaged.ltape", in: dir) { bytes in
      flipped = bytes.count / 3
      bytes[flipped] ^= 0x5A
    }
    let r = try CLI.run(["verify", damaged])
    #expect(r.code == 2)
    let lines = r.out.lines.map(String.init)
    let first = try #require(lines.first)
    #expect(first.hasPrefix("\(damaged): damaged at byte "), "\(r.out)")
    #expect(first.hasSuffix(")"))
    #expect(first.contains(" (event "))
    let json = try CLI.run(["verify", damaged, "--json"])
    #expect(json.code == 2)
    let object = try #require(
      try JSONSerialization.jsonObject(with: Data(json.out.utf8)) as? [String: Any])
    #expect(object["intact"] as? Bool == false)
    let offset = try #require(object["offset"] as? Int)
    #expect(offset <= flipped)
    let event = try #require(object["event"] as? Int)
    #expect(object["lastIntactEvent"] as? Int == event - 1)
    #expect(first == "\(damaged): damaged at byte \(offset) (event \(event))")
    // Reading commands serve what comes before the damage, say so, and exit 2.
    let show = try CLI.run(["show", damaged])
    #expect(show.code == 2)
    #expect(show.err.hasPrefix("listtape: warning: "))
    let replay = try CLI.run(["replay", damaged])
    #expect(replay.code == 2)
    #expect(replay.err.contains("byte \(offset)"))
  }

  @Test func tornTailIsDamageForEveryReaderUntilRecordRecoversIt() throws {
    let dir = try TempDir()
    let path = try bigLog(in: dir)
    let torn = try copy(path, to: "torn.ltape", in: dir) { bytes in
      bytes.removeLast(7)
    }
    #expect(try CLI.run(["verify", torn]).code == 2)
    let replay = try CLI.run(["replay", torn])
    #expect(replay.code == 2)
    #expect(replay.err.hasPrefix("listtape: warning: "))
    // Recording onward recovers the tail and says so.
    let rec = try CLI.run(["record", torn], input: Data(#"{"op":"mark","label":"after"}"#.utf8))
    #expect(rec.code == 0)
    #expect(rec.err.hasPrefix("listtape: warning: "), "\(rec.err)")
    #expect(try CLI.run(["verify", torn]).code == 0)
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
