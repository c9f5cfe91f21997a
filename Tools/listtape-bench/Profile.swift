import Foundation
import ListTapeModel
import ListTapeReplay

/// Child modes for profiling: replay and seeks, or the encoded size per op.
enum ProfileMode {
  static func run(_ path: String) {
    guard let t = try? Timeline(path: path) else { return }
    if ProcessInfo.processInfo.environment["SKIP_REPLAY"] == nil {
      let start = Clock.now()
      _ = try? t.replay(through: .max) { _, _, _ in true }
      print("replay", Clock.now() - start)
    }
    var rng = Rng(seed: 3)
    let s2 = Clock.now()
    for _ in 0..<20 { _ = try? t.state(at: 1 + rng.below(t.eventCount)) }
    print("checkpoints", t.checkpointCount)
    print("seeks", (Clock.now() - s2) / 20)
  }

  static func sizes() {
    var encoder = EventEncoder()
    var bytes: [String: (count: Int, bytes: Int)] = [:]
    SampleSession.generate(events: 200_000, seed: 1) { e in
      let r = encoder.encode(e)
      bytes[e.op, default: (0, 0)].count += 1
      bytes[e.op, default: (0, 0)].bytes += r.count
    }
    for (op, v) in bytes.sorted(by: { $0.value.bytes > $1.value.bytes }) {
      print(op, v.count, v.bytes, Double(v.bytes) / Double(v.count))
    }
  }
}
