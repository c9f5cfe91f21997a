import Foundation
import ListTapeLog
import Testing

/// Issue 31.2: damage costs a bounded stretch in the 2.0 logs `listtape record` writes, a
/// 100k-event session included (docs/log-format.md, "Damage and recovery points"):
/// recovery points come by bytes (every 4 × a restart's size) and by events, so damage
/// that parity cannot mend leaves at most that much of the log inexact after it. (A session
/// whose live ids are most of its bytes gets none: one would cost more than the log it
/// protects; the page says so.)
@Suite struct RecoveryBoundTests {
  /// Recovery points (a dictionary frame and the checkpoint right after it) of a log: the
  /// offset of each dictionary frame and the size of the pair.
  static func restarts(_ path: String) throws -> [(offset: Int, cost: Int, seq: Int)] {
    let reader = try LogReader(path: path)
    var out: [(offset: Int, cost: Int, seq: Int)] = []
    var offset = reader.firstFrameOffset
    var open: (offset: Int, cost: Int, seq: Int)?
    while offset < reader.validEnd {
      let f = try reader.frameSummary(at: offset)
      if f.kind == .dictionary {
        open = (Int(offset), Int(f.length), Int(f.firstSeq))
      } else if f.kind == .checkpoint, let o = open {
        out.append((o.offset, o.cost + Int(f.length), o.seq))
        open = nil
      } else {
        open = nil
      }
      offset += f.length
    }
    return out
  }

  @Test func aRecordedHundredThousandEventSessionHasBoundedDamage() throws {
    let dir = try TempDir()
    let lines = dir.path("session.jsonl")
    let log = dir.path("session.ltape")
    let generated = try CLI.run([
      "generate", "--events", "100000", "--seed", "5", "--outline", "2000", "--shape", "uuid",
      "--max-items", "5000", "-o", lines,
    ])
    #expect(generated.code == 0)
    let recorded = try CLI.run(
      ["record", "--quiet", log], input: try Data(contentsOf: URL(fileURLWithPath: lines)))
    #expect(recorded.code == 0, "\(recorded.err)")
    let size = try Int(FileManager.default.attributesOfItem(atPath: log)[.size] as? Int ?? 0)
    let points = try Self.restarts(log)
    #expect(points.count >= 2, "a 100k-event session has recovery points")
    guard !points.isEmpty else { return }
    // The spacing: after each recovery point (and from the start, where 16 B per live id
    // stands for the first one's size), the next comes within 4 × its size of frames, plus
    // the frame that crossed the line.
    var previous = (offset: 64, cost: points[0].cost)
    for p in points {
      #expect(p.offset - previous.offset <= 4 * previous.cost + (300 << 10), "restart at \(p.seq)")
      previous = (p.offset, p.cost)
    }
    #expect(size - previous.offset <= 4 * previous.cost + (300 << 10))

    // Damage parity cannot mend (three parity widths) a tenth of the way in: the states are
    // exact again at the first recovery point after it, within that bound.
    var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: log)))
    let at = bytes.count / 10
    for i in at..<(at + 3 * (64 << 10)) { bytes[i] ^= 0x5A }
    let damaged = dir.path("damaged.ltape")
    try Data(bytes).write(to: URL(fileURLWithPath: damaged))
    let salvaged = dir.path("salvaged.ltape")
    #expect(try CLI.run(["salvage", damaged, "-o", salvaged]).code == 0)
    let reader = try LogReader(path: salvaged)
    let gap = try #require(reader.gaps.first)
    let from = try #require(
      reader.exactFrom(through: reader.eventCount), "no recovery point after the damage")
    let point = try #require(points.first { $0.seq - 1 == Int(from) })
    let before = points.last { $0.offset < at }
    let cost = before?.cost ?? points[0].cost
    #expect(point.offset - (at + 3 * (64 << 10)) <= 4 * cost + (300 << 10))
    #expect(Int(from) > Int(gap.firstEvent + gap.count - 1))
    // And from there on the salvaged log's states are the original's.
    let n = Int(from) + 100
    #expect(
      try CLI.run(["show", salvaged, "--at", "\(n)", "--json"]).out
        == (try CLI.run(["show", log, "--at", "\(n)", "--json"])).out)
  }
}
