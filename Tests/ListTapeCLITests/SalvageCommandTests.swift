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

  /// A crafted tail: a frame header valid under the log's salt (docs/log-format.md) every 36
  /// bytes, each claiming the rest of the file as its payload. Salvage keeps every event,
  /// stops checking after its budget and says where, instead of reading about 250 GB (the
  /// limit stands for that, not for a busy machine: alone this takes seconds).
  @Test(.timeLimit(.minutes(5)))
  func salvageGivesUpOnAForgedTailAndKeepsEveryEvent() throws {
    let dir = try TempDir()
    var bytes = try [UInt8](Data(contentsOf: Self.golden))
    let salt = Self.crc32(0, bytes[16..<32])
    let start = bytes.count
    bytes += [UInt8](repeating: 0, count: 4 << 20)
    for at in stride(from: start, to: bytes.count - 36, by: 36) {
      let payload = UInt32(bytes.count - at - 36)
      var h: [UInt8] = [0xF1, 0x46, 0x52, 0x4D, 1, 1]  // magic, EVENTS, compressed
      func le<T: FixedWidthInteger>(_ v: T) { withUnsafeBytes(of: v.littleEndian) { h += $0 } }
      le(UInt16(1))  // event_count
      le(UInt64(1))  // first_seq
      le(payload)
      le(min(payload * 4, 1 << 20))  // raw_len
      le(UInt32(at))  // frame_offset
      le(UInt32(0))  // payload_crc: never right
      le(Self.crc32(salt, h[...]))
      bytes.replaceSubrange(at..<at + 36, with: h)
    }
    let forged = dir.path("forged.ltape")
    try Data(bytes).write(to: URL(fileURLWithPath: forged))
    let out = dir.path("salvaged.ltape")
    let r = try CLI.run(["salvage", forged, "-o", out])
    #expect(r.code == 0, "\(r.err)")
    #expect(r.err.contains("kept 30,000 events"), "\(r.err)")
    #expect(r.err.contains("gave up at byte"), "\(r.err)")
    let verify = try CLI.run(["verify", out])
    #expect(verify.code == 0, "\(verify.out)")
    #expect(try CLI.run(["replay", out]).out.contains("replayed 30,000 events"))
  }

  /// CRC-32 (IEEE, as zlib's `crc32(seed, …)`), continuing from `seed`.
  static func crc32(_ seed: UInt32, _ bytes: ArraySlice<UInt8>) -> UInt32 {
    var crc = ~seed
    for b in bytes {
      crc ^= UInt32(b)
      for _ in 0..<8 { crc = crc & 1 != 0 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
    }
    return ~crc
  }
}
