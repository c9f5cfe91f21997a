import Foundation
import ListTapeSamples
import Testing

@testable import ListTapeLog

/// The torture tool's record stream (Tools/listtape-torture/main.swift computes the same).
private func mix(_ x: UInt64) -> UInt64 {
  var z = x &+ 0x9E37_79B9_7F4A_7C15
  z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
  z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
  return z ^ (z >> 31)
}

private func tortureRecord(seed: UInt64, seq: UInt64) -> [UInt8] {
  var s = mix(seed ^ (seq &* 0x2545_F491_4F6C_DD1D))
  let n = 5 + Int(s % 36)
  var out = [UInt8]()
  for i in 0..<n {
    if i % 8 == 0 { s = mix(s) }
    out.append(UInt8(truncatingIfNeeded: s >> (8 * UInt64(i % 8))))
  }
  return out
}

private func tortureCheckpoint(seed: UInt64, seq: UInt64) -> [UInt8] {
  var out = withUnsafeBytes(of: seq.littleEndian) { Array($0) }
  let n = 1024 + Int(mix(seed ^ seq) % (23 * 1024))
  for i in 0..<n { out.append(UInt8(truncatingIfNeeded: (seq &+ UInt64(i / 7)) &* 131)) }
  return out
}

private let tortureURL = Bundle.main.bundleURL.appendingPathComponent("listtape-torture")

/// Checks records `from...` of `reader` against the torture stream; returns the first problem.
private func checkRecords(_ reader: LogReader, seed: UInt64, from: UInt64) throws -> String? {
  var problem: String?
  var expect = from
  try forEachRecord(reader, from: from) { seq, r in
    guard problem == nil else { return }
    if seq != expect {
      problem = "seq \(seq), expected \(expect)"
    } else if Array(r) != tortureRecord(seed: seed, seq: seq) {
      problem = "record \(seq) differs"
    }
    expect += 1
  }
  return problem
}

/// A reader tailing the log from another thread while the writer is being killed.
private final class TailReader: @unchecked Sendable {
  let lock = NSLock()
  var stopRequested = false
  var problems: [String] = []
  var seen: UInt64 = 0
  var refreshes = 0
  let done = DispatchSemaphore(value: 0)
  var joined = false

  /// Asks the thread to stop and waits for it, once.
  func stopAndWait() {
    let wait: Bool = lock.withLock {
      stopRequested = true
      defer { joined = true }
      return !joined
    }
    if wait { done.wait() }
  }

  func run(path: String, seed: UInt64) {
    var reader: LogReader?
    while !lock.withLock({ stopRequested }) {
      do {
        if reader == nil { reader = try? LogReader(path: path) }
        guard let r = reader else {
          usleep(2000)
          continue
        }
        try r.refresh()
        if let stop = r.stop, stop.kind == .damaged {
          lock.withLock { problems.append("tail reader saw damage: \(stop)") }
          break
        }
        if r.eventCount < seen {
          lock.withLock { problems.append("tail reader went back: \(r.eventCount) < \(seen)") }
          break
        }
        if let p = try checkRecords(r, seed: seed, from: seen + 1) {
          lock.withLock { problems.append("tail reader: \(p)") }
          break
        }
        lock.withLock {
          seen = r.eventCount
          refreshes += 1
        }
      } catch {
        lock.withLock { problems.append("tail reader: \(error)") }
        break
      }
      usleep(1000)
    }
    done.signal()
  }
}

/// Appends a prefix of the frame the writer would write next (the next 50 records): the shape
/// of a write() cut short by a crash.
private func appendTornFrame(
  path: String, seed: UInt64, after last: UInt64, rng: inout SplitMix64
) throws {
  let bytes = try readBytes(path)
  let header = try bytes.withUnsafeBytes { p throws(LogError) in
    try FileHeader.decode(UnsafeRawBufferPointer(rebasing: p[0..<64]), path: path)
  }
  var raw: [UInt8] = []
  for seq in (last + 1)...(last + 50) {
    let r = tortureRecord(seed: seed, seq: seq)
    raw.append(UInt8(r.count))
    raw += r
  }
  let d = try #require(Deflater(level: 3))
  var payload = [UInt8](repeating: 0, count: d.bound(raw.count))
  let n = try #require(
    raw.withUnsafeBytes { r in payload.withUnsafeMutableBytes { d.compress(r, into: $0) } })
  payload.removeSubrange(n...)
  let h = FrameHeader(
    type: Format.typeEvents, flags: Format.flagCompressed, eventCount: 50, firstSeq: last + 1,
    payloadLength: UInt32(n), rawLength: UInt32(raw.count),
    offsetLow: UInt32(truncatingIfNeeded: bytes.count),
    payloadCRC: payload.withUnsafeBytes { crc32Bytes(0, $0) })
  var frame = [UInt8](repeating: 0, count: 36) + payload
  frame.withUnsafeMutableBytes { h.encode(into: $0, salt: header.salt) }
  let keep = Int.random(in: 1..<frame.count, using: &rng)
  let handle = try #require(FileHandle(forWritingAtPath: path))
  try handle.seekToEnd()
  try handle.write(contentsOf: frame[0..<keep])
  try handle.close()
}

/// Opens a reader, or nil when the file header itself is incomplete.
private func openUnlessHeaderTorn(_ path: String) throws -> LogReader? {
  do {
    return try LogReader(path: path)
  } catch {
    if error.kind == .incompleteHeader { return nil }
    throw error
  }
}

@Suite("Crash tests with a real writer process")
struct KillTests {
  @Test(
    "kill -9 of the writer never loses an acknowledged record nor shows a different one",
    arguments: [1, 2])
  func killLoop(format: Int) throws {
    let dir = TempDir()
    let path = dir.file("kill.log")
    let seed: UInt64 = 77
    var rng = SplitMix64(seed: 1234)
    let tail = TailReader()
    let thread = Thread { tail.run(path: path, seed: seed) }
    thread.start()
    defer { tail.stopAndWait() }
    var verified: UInt64 = 0
    var killsAfterAck = 0
    var recoveries = 0
    for iteration in 0..<200 {
      let p = Process()
      p.executableURL = tortureURL
      p.arguments = [
        "write", path, "--seed", "\(seed)", "--max-records", "3000", "--format", "\(format)",
      ]
      let out = Pipe()
      p.standardOutput = out
      try p.run()
      var text = ""
      if iteration % 2 == 1 {
        // Half the kills land while writing: wait for "ready" first. The rest land anywhere,
        // including during open and recovery.
        while !text.contains("ready") {
          let chunk = out.fileHandleForReading.availableData
          if chunk.isEmpty { break }
          text += String(decoding: chunk, as: UTF8.self)
        }
      }
      usleep(UInt32.random(in: 0...30_000, using: &rng))
      if iteration % 25 == 5 {
        // While it runs, a second writer is refused.
        do {
          let w = try LogWriter.open(path: path)
          try w.close()
        } catch {
          #expect(error.kind == .locked || error.kind == .io, "\(error)")
        }
      }
      kill(p.processIdentifier, SIGKILL)
      p.waitUntilExit()
      text += String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
      let lines = text.split(separator: "\n")
      let acked = lines.compactMap { $0.hasPrefix("ack ") ? UInt64($0.dropFirst(4)) : nil }.max()
      if acked != nil { killsAfterAck += 1 }
      guard FileManager.default.fileExists(atPath: path) else { continue }
      // nil: killed while creating the file, before any event could be acknowledged.
      guard let reader = try openUnlessHeaderTorn(path) else { continue }
      if let stop = reader.stop {
        #expect(stop.kind == .tornTail, "iteration \(iteration): \(stop)")
      }
      if text.contains(" recovered ") { recoveries += 1 }
      #expect(reader.eventCount >= (acked ?? 0), "iteration \(iteration): lost acknowledged")
      #expect(reader.eventCount >= verified, "iteration \(iteration): events went back")
      let from = iteration % 50 == 49 ? 1 : verified + 1
      let problem = try checkRecords(reader, seed: seed, from: from)
      #expect(problem == nil, "iteration \(iteration): \(problem ?? "")")
      if let cp = try reader.checkpoint(atOrBefore: reader.eventCount) {
        #expect(cp.state == tortureCheckpoint(seed: seed, seq: cp.seq), "iteration \(iteration)")
      }
      verified = reader.eventCount
      if iteration % 10 == 9 {
        try appendTornFrame(path: path, seed: seed, after: reader.eventCount, rng: &rng)
      }
      if problem != nil || tail.lock.withLock({ !tail.problems.isEmpty }) { break }
    }
    tail.stopAndWait()
    tail.lock.withLock {
      #expect(tail.problems.isEmpty, "\(tail.problems)")
      #expect(tail.seen > 0 && tail.refreshes > 10)
    }
    // kill -9 rarely tears a small write(); the simulated torn frames make sure recovery ran.
    #expect(killsAfterAck >= 80 && recoveries >= 10, "acks \(killsAfterAck), torn \(recoveries)")
    // A final writer recovers and the log verifies clean.
    let w = try LogWriter.open(path: path)
    try w.close()
    let final = try LogReader(path: path)
    #expect(final.formatVersion.major == UInt16(format))
    #expect(try final.verify().status == .intact)
  }

  @Test("a failed write poisons the writer; the log stays readable")
  func writeFailurePoisons() throws {
    let dir = TempDir()
    let path = dir.file("fsize.log")
    let p = Process()
    p.executableURL = tortureURL
    p.arguments = ["fsize", path, "30000"]
    let out = Pipe()
    p.standardOutput = out
    try p.run()
    p.waitUntilExit()
    let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    #expect(text.contains("error poisoned") && text.contains("then poisoned"), "\(text)")
    let r = try LogReader(path: path)
    #expect(r.stop == nil && r.eventCount > 0)
    #expect(try checkRecords(r, seed: 9, from: 1) == nil)
  }
}
