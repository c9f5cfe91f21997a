import Foundation
import Testing

@Suite struct SalvageCommandTests {
  static let golden = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Logs/golden/session-30k.ltape")

  @Test func salvagesADamagedLogAndReadersWarnAboutTheGap() throws {
    let dir = try TempDir()
    var bytes = try [UInt8](Data(contentsOf: Self.golden))
    bytes[bytes.count / 3] ^= 0x55
    let damaged = dir.path("damaged.ltape")
    try Data(bytes).write(to: URL(fileURLWithPath: damaged))
    #expect(try CLI.run(["verify", damaged]).code == 2)

    let out = dir.path("salvaged.ltape")
    let r = try CLI.run(["salvage", damaged, "-o", out])
    #expect(r.code == 0, "\(r.err)")
    #expect(r.err.contains("lost"))
    let replay = try CLI.run(["replay", out])
    #expect(replay.err.contains("salvaged log: events"))
    #expect(replay.out.contains("replayed 30,000 events"))

    let again = try CLI.run(["salvage", damaged, "-o", out])
    #expect(again.code == 73)
    #expect(try CLI.run(["salvage", damaged]).code == 64)
    #expect(try CLI.run(["salvage", dir.path("missing.ltape"), "-o", dir.path("x")]).code == 66)
  }
}
