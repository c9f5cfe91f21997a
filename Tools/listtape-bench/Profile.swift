import Foundation
import ListTapeReplay

/// Child mode for profiling: replays a log and seeks to random events.
enum ProfileMode {
  static func run(_ path: String) {
    guard let t = try? Timeline(path: path) else { return }
    let start = Clock.now()
    if ProcessInfo.processInfo.environment["SKIP_REPLAY"] == nil { _ = try? t.replay(through: .max) { _, _, _ in true } }
    print("replay", Clock.now() - start)
    var rng = Rng(seed: 3)
    let s2 = Clock.now()
    for _ in 0..<20 { _ = try? t.state(at: 1 + rng.below(t.eventCount)) }
    print("checkpoints", t.checkpointCount)
    print("seeks", (Clock.now() - s2) / 20)
  }
}
