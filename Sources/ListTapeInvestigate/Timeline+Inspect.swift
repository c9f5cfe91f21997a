import ListTapeLog
import ListTapeModel
import ListTapeRead
import ListTapeStore

/// What `verify` found: what was checked, and what is wrong (nil when intact).
package struct VerifyReport: Sendable {
  /// Events readable in order.
  package var events: Int
  /// Valid frames of every type.
  package var frames: Int
  /// Valid checkpoint frames.
  package var checkpoints: Int
  /// The file's size.
  package var bytes: Int
  /// What is wrong; nil when every frame, record and checkpoint checked out and nothing
  /// trails the last frame.
  package var problem: VerifyProblem?
  /// Byte offset of the damage, when it is in the file's framing.
  package var offset: Int?
  /// The last event that reads back intact, when something is wrong and it is known.
  package var lastIntactEvent: Int?

  /// Whether nothing is wrong.
  package var intact: Bool { problem == nil }
}

/// What `verify` found wrong.
package enum VerifyProblem: Sendable {
  /// The file could not be checked (it cannot be read, or is not a log).
  case unreadable(LogError)
  /// The framing: a torn tail, or a bad frame (readable frames may follow it).
  case damage(LogDamage)
  /// A record or checkpoint that passed its checksums does not decode.
  case undecodable(StoreError)
  /// The checkpoint after `event` is not the fold of events `1...event`.
  case checkpointDisagrees(event: Int)
}

/// Counts for `stats`: events per op, faults, sizes and the time span.
package struct LogStats: Sendable {
  /// Events in the log's numbering (a salvaged log's lost and undecodable events among
  /// them, counted apart too).
  package var events: Int
  /// Event ranges a salvage lost.
  package var lost: [ClosedRange<Int>] = []
  /// Events kept by a salvage that cannot be decoded (they name ids lost with a gap).
  package var undecodable = 0
  /// Events whose faults are not counted: lost, or folded onto a state that is not the
  /// recorded one (after a gap, through the point that restores the states).
  package var inexact: [ClosedRange<Int>] = []
  /// Events per op, most frequent first (ties by name).
  package var opCounts: [(op: String, count: Int)]
  /// Events that faulted when folded from a recorded state.
  package var faults: Int
  /// Faults by kind, most frequent first (ties by name).
  package var faultsByKind: [(kind: FaultKind, count: Int)] = []
  /// The file's size.
  package var bytes: Int
  /// Frames of every type.
  package var frames: Int
  /// Checkpoint frames.
  package var checkpoints: Int
  /// Bytes of checkpoint frames (their payloads).
  package var checkpointBytes: Int
  /// The earliest time an event carries, in Unix milliseconds (nil when none has one). Not
  /// always the first event's: a front end may send old times after events the recorder
  /// stamped with its clock.
  package var firstTime: Int64?
  /// The latest time an event carries, in Unix milliseconds (nil when none has one).
  package var lastTime: Int64?
  /// Mark events.
  package var marks: Int
  /// The log's format major version.
  package var format: Int = 1
  /// Size of the index file beside the log (2.0), when there is a valid one.
  package var indexBytes: Int?
}

extension Timeline {
  /// Checks the whole file: every frame's checksums and decompression (strictly: a torn tail
  /// counts as damage), every record's decoding, and every checkpoint against a fresh fold.
  /// `progress` gets the events checked so far and the total, now and then.
  package func verify(progress: ((Int, Int) -> Void)? = nil) -> VerifyReport {
    let log: ListTapeLog.VerifyReport
    do {
      log = try reader.verify()
    } catch {
      return VerifyReport(
        events: 0, frames: 0, checkpoints: 0, bytes: fileBytes, problem: .unreadable(error),
        offset: error.offset.map(Int.init), lastIntactEvent: error.lastGoodEvent.map(Int.init))
    }
    var report = VerifyReport(
      events: Int(log.events), frames: log.frames, checkpoints: log.checkpointFrames,
      bytes: Int(log.fileBytes))
    switch log.status {
    case .intact: break
    case .tornTail(let d), .damaged(let d):
      report.problem = .damage(d)
      report.offset = Int(d.offset)
      report.lastIntactEvent = Int(d.lastGoodEvent)
    }
    // Semantic pass over the readable prefix, one checkpoint interval at a time (the
    // reader cannot be used from inside its own record callback).
    let limit = min(eventCount, report.lastIntactEvent ?? eventCount)
    let checkpointStops = reader.checkpointSeqs.map(Int.init).filter { $0 <= limit }
    let limitIsCheckpoint = checkpointStops.last == limit
    let stops = limitIsCheckpoint ? checkpointStops : checkpointStops + [limit]
    let total = eventCount
    let overall = progress.map { p in { (seq: Int, _: Int) in p(seq, total) } }
    var state = ListState()
    var decoder = startDecoder()
    var last = 0
    // After events lost in a salvage the fold is not the recorded state: a self-contained
    // checkpoint after the gap is adopted, not compared (Timeline+Damage.swift).
    var exactSince = 0
    do throws(StoreError) {
      for stop in stops {
        try fold(&state, &decoder, from: last + 1, through: stop, progress: overall) {
          ops, i, _, _ in
          last = ops.seqs[i]
          return true
        }
        guard stop < limit || limitIsCheckpoint else { continue }
        if lostRanges.contains(where: { $0.lowerBound > exactSince && $0.lowerBound <= stop }) {
          // Only a self-contained point is decoded: another checkpoint after a gap may name
          // dictionary entries the gap lost.
          guard case .exact(let point?) = exactness(at: stop), point == stop,
            let cp = try logCheckpoint(atOrBefore: stop), cp.seq == stop
          else { continue }
          (state, decoder, exactSince) = (cp.state, cp.decoder, stop)
          continue
        }
        guard let cp = try logCheckpoint(atOrBefore: stop), cp.seq == stop else { continue }
        guard cp.state == state, cp.lastTime.map({ $0 == decoder.lastTime }) ?? true else {
          report.problem = .checkpointDisagrees(event: stop)
          report.offset = nil
          report.lastIntactEvent = last
          return report
        }
      }
    } catch {
      report.problem = .undecodable(error)
      report.offset = nil
      report.lastIntactEvent = last
    }
    return report
  }

  /// Counts events per op, faults (by folding), marks, sizes and the time span.
  package func stats(progress: ((Int, Int) -> Void)? = nil) throws(StoreError) -> LogStats {
    var counts: [String: Int] = [:]
    var faults = 0
    var kinds: [FaultKind: Int] = [:]
    var marks = 0
    var first: Int64?
    var last: Int64?
    var state = ListState()
    var decoder = startDecoder()
    let total = eventCount
    let steps = exactSteps
    let skippedBefore = skippedAfterGaps
    try fold(&state, &decoder, from: 1, through: total, progress: progress) { ops, i, fault, _ in
      let op = ops.name(i)
      counts[op, default: 0] += 1
      let step = steps.at(ops.seqs[i])
      if let t = ops.time(i) {
        first = min(first ?? t, t)
        last = max(last ?? t, t)
      }
      if op == "mark" { marks += 1 }
      if let fault, step == .exact {
        faults += 1
        kinds[fault.kind, default: 0] += 1
      }
      return true
    }
    let (frames, checkpoints, checkpointBytes) = reader.frameCounts
    var stats = LogStats(
      events: total,
      opCounts: counts.map { (op: $0.key, count: $0.value) }.sorted {
        $0.count != $1.count ? $0.count > $1.count : $0.op < $1.op
      }, faults: faults,
      faultsByKind: FaultKind.ranked(kinds),
      bytes: fileBytes, frames: frames, checkpoints: checkpoints,
      checkpointBytes: Int(checkpointBytes), firstTime: first, lastTime: last, marks: marks,
      format: formatMajor, indexBytes: indexBytes)
    stats.lost = lostRanges
    stats.undecodable = skippedAfterGaps - skippedBefore
    stats.inexact = notReplayed(through: total)
    return stats
  }
}
