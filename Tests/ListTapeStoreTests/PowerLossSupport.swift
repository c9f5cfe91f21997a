import Foundation
import ListTapeModel
import ListTapeSamples
import Testing

@testable import ListTapeLog

/// A scratch directory removed at deinit.
final class ScratchDir: @unchecked Sendable {
  let path: String

  init(_ label: String) {
    path = NSTemporaryDirectory() + "/listtape-\(label)-\(UUID().uuidString)"
    try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
  }

  func file(_ name: String) -> String { "\(path)/\(name)" }

  /// Deletes everything in the directory.
  func empty() {
    for name in (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? [] {
      try? FileManager.default.removeItem(atPath: file(name))
    }
  }

  /// Replaces the directory's contents with `files`, keyed by full paths elsewhere: each is
  /// written here under its own file name.
  func restore(_ files: [String: [UInt8]]) {
    empty()
    for (path, bytes) in files {
      let name = String(path.split(separator: "/").last ?? "")
      _ = FileManager.default.createFile(atPath: file(name), contents: Data(bytes))
    }
  }

  deinit { try? FileManager.default.removeItem(atPath: path) }
}

/// "From operation `op` of the disk on, the first `events` events are durable": what a
/// returned call promises under a policy, per docs/log-format.md.
struct Acknowledgement {
  var op: Int
  var events: UInt64
}

/// What one recording did: the records in order, the checkpoints, the promises, and the
/// disk's snapshots to crash at.
struct Recording {
  var path: String
  var records: [[UInt8]]
  var checkpoints: [UInt64: [UInt8]] = [:]
  var acks: [Acknowledgement] = []
  var snapshots: [SimulatedDisk.Snapshot] = []

  /// Events promised durable at a snapshot.
  func durable(at snapshot: SimulatedDisk.Snapshot) -> UInt64 {
    acks.reduce(0) { $1.op <= snapshot.index ? max($0, $1.events) : $0 }
  }
}

/// Writer options that make many frames, checkpoints and syncs out of a few hundred events;
/// the flusher runs on `clock` (nil: a clock never advanced, so no batch is cut by time).
func crashOptions(_ policy: FsyncPolicy, clock: ManualClock? = nil) -> LogWriterOptions {
  var o = LogWriterOptions()
  o.clock = clock ?? ManualClock()
  o.fsync = policy
  o.maxEventsPerFrame = 5
  o.batchDelay = 0.002
  o.maxEventsBetweenCheckpoints = 40
  o.minCheckpointSpacingBytes = 300
  o.checkpointBytesRatio = 2
  return o
}

/// A record that compresses like an event: an op byte, small numbers, sometimes a word.
func crashRecord(_ rng: inout SplitMix64, _ n: Int) -> [UInt8] {
  var out: [UInt8] = [UInt8(rng.below(12)), UInt8(truncatingIfNeeded: n), UInt8(n >> 8)]
  for _ in 0..<rng.below(24) { out.append(UInt8(truncatingIfNeeded: rng.next() & 0x3F)) }
  if rng.chance(30) { out += Array("item-\(rng.below(500))".utf8) }
  return out
}

/// The promise a returned call makes under `policy` (docs/log-format.md, "Guarantees"):
/// `.always` makes every written frame durable, `sync()` and `close()` everything appended
/// (except under `.never`), nothing else is promised.
func promised(_ policy: FsyncPolicy, _ writer: LogWriter, call: String) -> UInt64? {
  switch (policy, call) {
  case (.never, _): return nil
  case (_, "sync"), (_, "close"): return writer.eventCount
  case (.always, _): return writer.eventCount - UInt64(writer.unwrittenEvents)
  default: return nil
  }
}

/// Records `count` events through a writer on `disk`, with flushes, syncs and checkpoints
/// in between, continuing `prior` (the records already in the log at `path`). Time is a
/// `ManualClock` moved by the seeded generator (half a millisecond per event, sometimes
/// 4 ms), so the flusher cuts and syncs at the same points, and the disk sees the same
/// operations, every run.
func recordThroughDisk(
  _ disk: SimulatedDisk, path: String, policy: FsyncPolicy, count: Int, seed: UInt64,
  prior: [[UInt8]] = []
) throws -> Recording {
  var run = Recording(path: path, records: prior)
  run.acks.append(Acknowledgement(op: 0, events: UInt64(prior.count)))
  var rng = SplitMix64(seed: seed)
  let clock = ManualClock()
  let writer = try LogWriter.open(
    path: path, options: crashOptions(policy, clock: clock), files: disk)
  #expect(writer.eventCount == UInt64(prior.count))
  func ack(_ call: String) {
    if let n = promised(policy, writer, call: call) {
      run.acks.append(Acknowledgement(op: disk.operationCount, events: n))
    }
  }
  for i in 0..<count {
    let record = crashRecord(&rng, run.records.count + 1)
    try writer.append(record)
    run.records.append(record)
    ack("append")
    clock.advance(by: 0.0005)
    ack("time")
    if writer.checkpointDue {
      let state = Array("state after \(writer.eventCount)".utf8) + [UInt8(i & 0xFF)]
      try writer.appendCheckpoint(state)
      run.checkpoints[writer.eventCount] = state
      ack("checkpoint")
    }
    switch rng.below(40) {
    case 0, 1, 2:
      try writer.flush()
      ack("flush")
    case 3:
      try writer.sync()
      ack("sync")
    case 4:
      clock.advance(by: 0.004)  // the flusher cuts the batch and runs the interval sync
      ack("time")
    default: break
    }
  }
  try writer.close()
  ack("close")
  run.snapshots = disk.snapshots
  return run
}

/// The operations a recording made, as the disk saw them (temporary names made the same).
func trace(_ run: Recording) -> [String] {
  run.snapshots.map {
    $0.label.replacingOccurrences(of: #"\.new-[^ ]+"#, with: ".new-*", options: .regularExpression)
  }
}

/// How a crash state was judged.
enum Verdict {
  /// Read back as promised; the next writer recovered and appended.
  case recovered
  /// As promised, but the next writer refused with a clear error, which docs/log-format.md
  /// allows under `.never` only (a header or frames that no sync protected).
  case refused
  /// A broken promise, described.
  case failed(String)
}

/// Judges the files a crash left, as docs/log-format.md promises: the log reads back a
/// prefix of what was written, in order, at least every promised event, with every
/// checkpoint it shows as written; and the next writer recovers and appends (or, when
/// `mayRefuse`, refuses with `.damaged` or `.notALog`).
func judgeCrash(
  _ files: [String: [UInt8]], run: Recording, durable: UInt64, scratch: ScratchDir,
  mayRefuse: Bool
) -> Verdict {
  guard let bytes = files[run.path] else {
    if durable > 0 { return .failed("the log is missing, \(durable) events were promised") }
    return reopenAndAppend(nil, run: run, readable: 0, scratch: scratch, mayRefuse: mayRefuse)
  }
  let reader: LogReader
  do {
    reader = try LogReader(bytes: bytes)
  } catch {
    if durable > 0 {
      return .failed("the log does not open (\(error)), \(durable) events were promised")
    }
    return reopenAndAppend(
      files, run: run, readable: nil, scratch: scratch, mayRefuse: mayRefuse,
      openError: "\(error)")
  }
  if let problem = readsAsWritten(reader, run: run, durable: durable) { return .failed(problem) }
  return reopenAndAppend(
    files, run: run, readable: reader.eventCount, scratch: scratch, mayRefuse: mayRefuse)
}

/// What is wrong with the events and checkpoints a reader shows, or nil.
private func readsAsWritten(_ reader: LogReader, run: Recording, durable: UInt64) -> String? {
  let n = reader.eventCount
  if n < durable { return "read \(n) events, \(durable) were promised (stop: \(stopText(reader)))" }
  if n > UInt64(run.records.count) { return "read \(n) events, only \(run.records.count) written" }
  var mismatch: UInt64?
  do {
    try reader.forEachRecord(from: 1, through: n) { seq, p in
      if mismatch == nil, !run.records[Int(seq) - 1].elementsEqual(p) { mismatch = seq }
    }
  } catch {
    return "reading the \(n) events failed: \(error)"
  }
  if let mismatch { return "event \(mismatch) reads back different from what was written" }
  for seq in reader.checkpointSeqs {
    let found = try? reader.checkpoint(atOrBefore: seq)
    guard let found, found.seq == seq, run.checkpoints[seq] == found.state else {
      return "the checkpoint at event \(seq) is not the one written"
    }
  }
  return nil
}

private func stopText(_ reader: LogReader) -> String {
  reader.stop.map { "\($0)" } ?? "none"
}

/// Opens a writer on the crashed files (recovering a torn tail), appends three records,
/// closes, and checks that the log then holds the readable prefix and the new records.
private func reopenAndAppend(
  _ files: [String: [UInt8]]?, run: Recording, readable: UInt64?, scratch: ScratchDir,
  mayRefuse: Bool, openError: String? = nil
) -> Verdict {
  scratch.restore(files ?? [:])
  let path = scratch.file(String(run.path.split(separator: "/").last ?? ""))
  let writer: LogWriter
  do {
    writer = try LogWriter.open(path: path, options: crashOptions(.never))
  } catch {
    if mayRefuse && (error.kind == .damaged || error.kind == .notALog) { return .refused }
    return .failed(
      "the next writer cannot open the log: \(error)"
        + (openError.map { " (a reader said: \($0))" } ?? ""))
  }
  let kept = writer.eventCount
  if let readable, kept != readable {
    return .failed("the next writer kept \(kept) events, the reader read \(readable)")
  }
  let extra: [[UInt8]] = [[0xA1, 1], [0xA2, 2, 2], [0xA3]]
  do {
    for r in extra { try writer.append(r) }
    try writer.close()
    let reader = try LogReader(path: path)
    guard reader.eventCount == kept + 3, reader.stop == nil else {
      return .failed(
        "after recovery and 3 appends the log reads \(reader.eventCount) events, "
          + "expected \(kept + 3) (stop: \(stopText(reader)))")
    }
    var wrong = false
    try reader.forEachRecord(from: 1) { seq, p in
      let expected = seq <= kept ? run.records[Int(seq) - 1] : extra[Int(seq - kept) - 1]
      if !expected.elementsEqual(p) { wrong = true }
    }
    if wrong {
      return .failed("after recovery the log does not hold the prefix and the new records")
    }
  } catch {
    return .failed("appending after recovery failed: \(error)")
  }
  return .recovered
}

/// What crashing a recording everywhere found.
struct CrashSweep {
  var states = 0
  var refused = 0
  var failures: [String] = []
}

/// Crashes `run` at every snapshot in each of its fixed crash states
/// (`SimulatedDisk.states(at:)`; entries of unsynced directories lost in every other state)
/// and judges each.
func crashEverywhere(
  _ run: Recording, scratch: ScratchDir, mayRefuse: Bool = false,
  judge: ((_ files: [String: [UInt8]], _ durable: UInt64) -> Verdict)? = nil
) -> CrashSweep {
  var sweep = CrashSweep()
  for snapshot in run.snapshots {
    let durable = run.durable(at: snapshot)
    for mode in SimulatedDisk.states(at: snapshot) {
      let lose = sweep.states % 2 == 1
      let files = SimulatedDisk.crash(snapshot, mode, loseEntries: lose)
      sweep.states += 1
      let verdict =
        judge?(files, durable)
        ?? judgeCrash(files, run: run, durable: durable, scratch: scratch, mayRefuse: mayRefuse)
      switch verdict {
      case .recovered: break
      case .refused: sweep.refused += 1
      case .failed(let problem):
        if sweep.failures.count < 8 {
          sweep.failures.append(
            "after op \(snapshot.index) (\(snapshot.label)), \(mode)"
              + "\(lose ? ", unsynced entries lost" : ""): \(problem)")
        }
      }
    }
  }
  return sweep
}
