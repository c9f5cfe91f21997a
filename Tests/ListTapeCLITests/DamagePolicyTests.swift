import Foundation
import Testing

/// The one damaged-log policy of docs/cli.md ("Damaged logs"), held by every reading
/// command: a torn tail, damage in the middle and a salvaged gap, each × what the commands
/// print, exit with, and which states they call exact.
@Suite struct DamagePolicyTests {
  static let golden = CLI.packageRoot.appendingPathComponent("Logs/golden/session-30k.ltape")
  static let goldenV2 = CLI.packageRoot.appendingPathComponent("Logs/golden/session-30k.v2.ltape")

  /// The golden log with one byte flipped a third of the way in, salvaged: 1.0 loses events
  /// 8969...10113 and has a checkpoint after event 18049 that restores the states after it.
  static func salvaged(_ source: URL, in dir: TempDir) throws -> String {
    var bytes = try [UInt8](Data(contentsOf: source))
    bytes[bytes.count / 3] ^= 0x55
    let damaged = dir.path("damaged.ltape")
    try Data(bytes).write(to: URL(fileURLWithPath: damaged))
    let out = dir.path("salvaged.ltape")
    let r = try CLI.run(["salvage", damaged, "-o", out])
    #expect(r.code == 0, "\(r.err)")
    return out
  }

  static func torn(in dir: TempDir) throws -> String {
    let bytes = try Data(contentsOf: CLI.samples.appendingPathComponent("symbols.ltape"))
    let path = dir.path("torn.ltape")
    try bytes.dropLast(7).write(to: URL(fileURLWithPath: path))
    return path
  }

  @Test func showGivesTheExactStateOrSaysItIsNotTheRecordedOne() throws {
    let dir = try TempDir()
    let log = try Self.salvaged(Self.golden, in: dir)
    let original = Self.golden.path
    // Before the gap: exact, exit 0, the same state as the original log's.
    let before = try CLI.run(["show", log, "--at", "8000", "--json"])
    #expect(before.code == 0)
    #expect(before.out == (try CLI.run(["show", original, "--at", "8000", "--json"])).out)
    // A lost event: said plainly, exit 2, never a decoding error.
    let lost = try CLI.run(["show", log, "--at", "9000"])
    #expect(lost.code == 2)
    #expect(
      lost.err.contains("the state at event 9000 is not the recorded one: event 9000 was lost"))
    #expect(lost.out.hasPrefix("event 9000 of 30000  (lost in a salvage"))
    #expect(!lost.err.contains("cannot be decoded"))
    // After the gap, before the checkpoint that restores it: the fold without the lost
    // events, labelled in text and JSON.
    let after = try CLI.run(["show", log, "--at", "12500", "--json"])
    #expect(after.code == 2)
    #expect(after.err.contains("states are exact again from event 18049"), "\(after.err)")
    #expect(after.out.hasSuffix(",\"exact\":false}\n"))
    let text = try CLI.run(["show", log, "--at", "12500"])
    #expect(text.out.lines[0].hasSuffix("(not the recorded state)"))
    // From the checkpoint on: exact again, equal to the original's.
    for n in ["18049", "20000", "30000"] {
      let restored = try CLI.run(["show", log, "--at", n, "--json"])
      #expect(restored.code == 0, "\(n): \(restored.err)")
      #expect(restored.out == (try CLI.run(["show", original, "--at", n, "--json"])).out)
    }
  }

  @Test func aFormat2LogWithoutCheckpointsSaysSoForEveryStateAfterTheGap() throws {
    let dir = try TempDir()
    let log = try Self.salvaged(Self.goldenV2, in: dir)
    let r = try CLI.run(["show", log, "--at", "20000"])
    #expect(r.code == 2)
    #expect(r.err.contains("no checkpoint after the gap restores them"), "\(r.err)")
    #expect(r.err.contains("the state at event 20000 is not the recorded one"))
    #expect(!r.err.contains("cannot be decoded"))
    let export = try CLI.run(["export", log, "--at", "20000", "--swift"])
    #expect(export.code == 2)
    #expect(export.err.contains("is not the recorded one"))
  }

  @Test func diffAcrossAGapSaysWhichSideIsNotRecorded() throws {
    let dir = try TempDir()
    let log = try Self.salvaged(Self.golden, in: dir)
    let across = try CLI.run(["diff", log, "--from", "8000", "--to", "12000"])
    #expect(across.code == 2)
    #expect(across.err.contains("the state at event 12000 is not the recorded one"))
    let restored = try CLI.run(["diff", log, "--from", "18049", "--to", "20000"])
    #expect(restored.code == 0, "\(restored.err)")
    let original = try CLI.run(["diff", Self.golden.path, "--from", "18049", "--to", "20000"])
    #expect(
      restored.out.lines.dropFirst(2) == original.out.lines.dropFirst(2),
      "the same changes as in the original log")
  }

  @Test func verifyAndReplayReportTheGaps() throws {
    let dir = try TempDir()
    let log = try Self.salvaged(Self.golden, in: dir)
    let verify = try CLI.run(["verify", log])
    #expect(verify.code == 2)
    #expect(verify.out.contains("\(log): salvaged: 1,145 events lost in 1 gap"), "\(verify.out)")
    #expect(verify.out.contains("events 8969...10113 lost"))
    let json = try CLI.run(["verify", log, "--json"])
    #expect(json.out.contains(#""intact":false"#))
    #expect(json.out.contains(#""lost":[[8969,10113]]"#))

    let replay = try CLI.run(["replay", log])
    #expect(replay.code == 2)
    #expect(replay.out.contains("not replayed (states after lost events): 8969...18049"))
    // Faults of the fold across the gap are not the app's: only the exact stretches count.
    let original = try CLI.run(["replay", Self.golden.path, "--json"])
    let salvagedJSON = try CLI.run(["replay", log, "--json"])
    #expect(original.out.contains(#""faults":281"#))
    #expect(!salvagedJSON.out.contains(#""faults":281"#))
    #expect(salvagedJSON.out.contains(#""exact":true"#))
  }

  @Test func upgradeRefusesATornTailAndALossPointingToSalvage() throws {
    let dir = try TempDir()
    let torn = try Self.torn(in: dir)
    let r = try CLI.run(["upgrade", torn, "-o", dir.path("up.ltape")])
    #expect(r.code == 2)
    #expect(r.err.contains("cannot upgrade a damaged log: torn tail"), "\(r.err)")
    #expect(r.err.contains("'listtape salvage'"))
    #expect(!FileManager.default.fileExists(atPath: dir.path("up.ltape")))
    let log = try Self.salvaged(Self.golden, in: dir)
    let lost = try CLI.run(["upgrade", log, "-o", dir.path("up2.ltape")])
    #expect(lost.code == 2)
    #expect(lost.err.contains("lost 1,145 events in a salvage"), "\(lost.err)")
  }

  @Test func aTornTailIsWarnedAboutAndExits2Everywhere() throws {
    let dir = try TempDir()
    let log = try Self.salvaged(Self.golden, in: dir)
    let torn = try Self.torn(in: dir)
    for args in [
      ["show", torn], ["events", torn], ["stats", torn], ["replay", torn],
      ["html", torn, "-o", dir.path("torn.html")], ["export", torn, "--swift"],
      ["history", log, "--item", "x"], ["events", log], ["stats", log],
      ["find", log, "--faults"],
    ] {
      let r = try CLI.run(args)
      #expect(r.code == 2, "\(args): \(r.code) \(r.err)")
      #expect(r.err.contains("listtape: warning: "), "\(args)")
    }
    // A torn single-frame log has nothing readable: html says so (2), not "no events" (1).
    let html = try CLI.run(["html", torn, "-o", dir.path("torn2.html")])
    #expect(html.err.contains("no event of \(torn) is readable"), "\(html.err)")
    // Every reading command says so, never "only events 1...0 are read".
    for args in [["show", torn], ["events", torn], ["stats", torn], ["replay", torn]] {
      let r = try CLI.run(args)
      #expect(r.err.contains("; no event is readable"), "\(args): \(r.err)")
      #expect(!r.err.contains("1...0"), "\(args): \(r.err)")
    }
  }

  @Test func statsTimeSpanIsNeverNegative() throws {
    let dir = try TempDir()
    let log = dir.path("times.ltape")
    // The first events are stamped by the recorder (now); a later one carries an old time.
    let lines = """
      {"op":"appendSections","sections":["s"]}
      {"op":"appendItems","items":["a"]}
      {"op":"appendItems","items":["b"],"t":1000}
      """
    #expect(try CLI.run(["record", log], input: Data(lines.utf8)).code == 0)
    let r = try CLI.run(["stats", log])
    #expect(r.code == 0)
    let span = r.out.lines.first { $0.contains("time span") } ?? ""
    #expect(span.contains("1970-01-01T00:00:01.000Z → "), "\(span)")
    #expect(!span.contains("(-"), "\(span)")
  }
}
