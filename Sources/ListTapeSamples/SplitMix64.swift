/// SplitMix64: a tiny, fast generator, identical everywhere; sample sessions, benches and
/// tests draw their seeded randomness from it. It lives with the samples, not in the model:
/// no library an app links needs a generator.
package struct SplitMix64: RandomNumberGenerator, Sendable {
  package var state: UInt64

  package init(seed: UInt64) { state = seed }

  package mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }

  /// Uniform in 0..<n (n > 0).
  package mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }

  package mutating func chance(_ percent: Int) -> Bool { below(100) < percent }
}
