import Foundation
import ListTapeModel
import Testing

@testable import ListTapeLog

/// The writer under a simulated disk, crashed after every operation in every way a disk can
/// fail (docs/log-format.md, "Power loss"): what a returned call promised is read back, in
/// order, nothing else is ever read, and the next writer recovers and appends.
@Suite("Power loss: the writer on a simulated disk")
struct PowerLossTests {
  /// Policy and disk semantics; the barrier only differs from a full sync on Apple's disks.
  static let cases = [
    "always/linux", "always/darwin", "interval/linux", "interval/darwin", "never/linux",
  ]

  static func policy(_ name: String) -> FsyncPolicy {
    switch name.split(separator: "/")[0] {
    case "always": return .always
    case "interval": return .interval(seconds: 0.003)
    default: return .never
    }
  }

  static func semantics(_ name: String) -> SimulatedDisk.Semantics {
    name.hasSuffix("darwin") ? .darwin : .linux
  }

  @Test(
    "a new log recorded with flushes, syncs and checkpoints survives every crash", arguments: cases)
  func newLog(_ name: String) throws {
    let dir = ScratchDir("power-\(name.replacingOccurrences(of: "/", with: "-"))")
    let scratch = ScratchDir("power-judge")
    let disk = SimulatedDisk(semantics: Self.semantics(name))
    let run = try recordThroughDisk(
      disk, path: dir.file("session.ltape"), policy: Self.policy(name), count: 160, seed: 7)
    let sweep = crashEverywhere(
      run, seed: 11, scratch: scratch, mayRefuse: name.hasPrefix("never"))
    #expect(sweep.failures.isEmpty, "\(name): \(sweep.failures.joined(separator: "\n"))")
    #expect(sweep.states >= 300)
    print("power loss, new log, \(name): \(sweep.states) crash states, \(sweep.refused) refused")
  }

  @Test("a writer that recovers a torn tail and appends survives every crash", arguments: cases)
  func recovery(_ name: String) throws {
    let dir = ScratchDir("power-recover")
    let scratch = ScratchDir("power-judge")
    let path = dir.file("session.ltape")
    // A log of 40 events whose last frame was cut short by a crash.
    var rng = SplitMix64(seed: 5)
    let writer = try LogWriter.open(path: path, options: crashOptions(.never))
    var prior: [[UInt8]] = []
    for i in 0..<40 {
      prior.append(crashRecord(&rng, i + 1))
      try writer.append(prior[i])
    }
    try writer.close()
    let whole = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    let extra = try LogWriter.open(path: path, options: crashOptions(.never))
    try extra.append([1, 2, 3, 4, 5, 6, 7, 8])
    try extra.close()
    let longer = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    let torn = longer[..<(whole.count + (longer.count - whole.count) / 2)]
    try Data(torn).write(to: URL(fileURLWithPath: path))

    let disk = SimulatedDisk(semantics: Self.semantics(name))
    let run = try recordThroughDisk(
      disk, path: path, policy: Self.policy(name), count: 60, seed: 9, prior: prior)
    let sweep = crashEverywhere(
      run, seed: 13, scratch: scratch, mayRefuse: name.hasPrefix("never"))
    #expect(sweep.failures.isEmpty, "\(name): \(sweep.failures.joined(separator: "\n"))")
    #expect(sweep.states >= 150)
    print("power loss, recovery, \(name): \(sweep.states) crash states, \(sweep.refused) refused")
  }
}
