import Foundation
import ListTapeModel
import ListTapeRead
import ListTapeSamples
import Testing

@testable import ListTapeStore

#if canImport(Glibc)
import Glibc
#endif

/// What an app simulator run said: the events and state hashes it reported.
private struct SimReport {
  var ready: (events: Int, hash: UInt64)?
  /// The last `ack` line: every event up to `events` was acknowledged by `sync()`.
  var acked: (events: Int, hash: UInt64)?
  var final: (events: Int, hash: UInt64)?

  init(_ text: String) {
    for line in text.split(separator: "\n") {
      let f = line.split(separator: " ")
      guard f.count == 3, let n = Int(f[1]), let h = UInt64(f[2]) else { continue }
      switch f[0] {
      case "ready": ready = (n, h)
      case "ack": acked = (n, h)
      case "final": final = (n, h)
      default: break
      }
    }
  }
}

/// Starts the app simulator on `arguments`; its standard output comes through the pipe.
private func startSim(_ arguments: [String]) throws -> (Process, Pipe) {
  let p = Process()
  p.executableURL = Bundle.main.bundleURL.appendingPathComponent("listtape-app-sim")
  p.arguments = arguments
  let out = Pipe()
  p.standardOutput = out
  try p.run()
  return (p, out)
}

/// Issue 18, point 4: an app recording through `StoreCore` dies by `kill -9` at random
/// points; after each death the log opens, holds every event `sync()` acknowledged with the
/// state the app had then, and the next store resumes from the log's last state.
@Suite struct StoreKillTests {
  @Test func appKilledAtRandomKeepsAcknowledgedEventsAndResumes() throws {
    let (dir, path) = temporaryStorePath()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    var rng = SplitMix64(seed: 18)
    var lastCount = 0
    var lastHash = ListState().stateHash
    var killedAfterAck = 0
    var resumedNonEmpty = 0
    let kills = 110
    for iteration in 0..<kills {
      let (p, out) = try startSim(
        [path, "--seed", "\(iteration + 1)", "--sync-every", "\(1 + rng.below(30))"])
      var text = ""
      if iteration % 3 != 0 {
        // A third of the kills land anywhere, opening and recovery included; a third while
        // recording; a third after the first acknowledgement.
        let awaited = iteration % 3 == 1 ? "ready" : "ack"
        while !text.contains(awaited) {
          let chunk = out.fileHandleForReading.availableData
          if chunk.isEmpty { break }
          text += String(decoding: chunk, as: UTF8.self)
        }
      }
      usleep(UInt32(rng.below(100_000)))
      kill(p.processIdentifier, SIGKILL)
      p.waitUntilExit()
      text += String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
      let report = SimReport(text)
      #expect(p.terminationReason == .uncaughtSignal, "iteration \(iteration): \(text)")
      if let ready = report.ready {
        // The new store resumed exactly where the last read of the log ended.
        #expect(ready.events == lastCount, "iteration \(iteration): resumed at \(ready.events)")
        #expect(ready.hash == lastHash, "iteration \(iteration): resumed from another state")
        if ready.events > 0 { resumedNonEmpty += 1 }
      }
      guard FileManager.default.fileExists(atPath: path) else { continue }
      let opened = Result { () throws(StoreError) in try Timeline(path: path) }
      if case .failure(.log(let error)) = opened, lastCount == 0, report.ready == nil,
        error.kind == .incompleteHeader || error.kind == .notALog
      {
        // Killed while creating the file, before any event could be acknowledged.
        continue
      }
      let timeline = try opened.get()
      if let stop = timeline.damage {
        #expect(stop.kind == .tornTail, "iteration \(iteration): \(stop)")
      }
      if let acked = report.acked {
        killedAfterAck += 1
        #expect(timeline.eventCount >= acked.events, "iteration \(iteration): lost acknowledged")
        let state = try timeline.state(at: acked.events)
        #expect(state.stateHash == acked.hash, "iteration \(iteration): acknowledged state differs")
      }
      #expect(timeline.eventCount >= lastCount, "iteration \(iteration): events went back")
      lastCount = timeline.eventCount
      lastHash = try timeline.state(at: lastCount).stateHash
    }
    print(
      "app kills: \(kills), after an ack: \(killedAfterAck), resumed a non-empty log: "
        + "\(resumedNonEmpty), events: \(lastCount)")
    #expect(killedAfterAck >= kills / 3 && resumedNonEmpty >= kills / 2)

    // A last run that ends by itself: it resumes, records, closes; the log replays to the
    // state it computed, and verifies clean.
    let (p, out) = try startSim([path, "--seed", "999", "--events", "300"])
    p.waitUntilExit()
    let report = SimReport(
      String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self))
    #expect(p.terminationStatus == 0)
    let ready = try #require(report.ready)
    let final = try #require(report.final)
    #expect(ready.events == lastCount && ready.hash == lastHash)
    let timeline = try Timeline(path: path)
    #expect(timeline.eventCount == final.events && final.events == lastCount + 300)
    #expect(try timeline.state(at: timeline.eventCount).stateHash == final.hash)
    #expect(try timeline.reader.verify().status == .intact)
  }
}
