import ListTapeLog
import ListTapeModel

/// What `verify` found: the verdict, where the damage is, and what was checked.
public struct VerifyReport: Sendable {
  /// Every frame, record and checkpoint checked out and nothing trails the last frame.
  public var intact: Bool
  public var events: Int
  public var frames: Int
  public var checkpoints: Int
  public var bytes: Int
  /// What is wrong (nil when intact).
  public var problem: String?
  /// Byte offset of the damage, when it is in the file's framing.
  public var offset: Int?
  /// The last event that reads back intact, when known.
  public var event: Int?
}

/// Counts for `stats`: events per op, faults, sizes and the time span.
public struct LogStats: Sendable {
  public var events: Int
  /// Events per op, most frequent first (ties by name).
  public var opCounts: [(op: String, count: Int)]
  public var faults: Int
  public var bytes: Int
  public var frames: Int
  public var checkpoints: Int
  /// Bytes of checkpoint frames (their payloads).
  public var checkpointBytes: Int
  public var firstTime: Int64?
  public var lastTime: Int64?
  public var marks: Int
  /// The log's format major version.
  public var format: Int = 1
  /// Size of the index file beside the log (2.0), when there is a valid one.
  public var indexBytes: Int?
}

extension Timeline {
  /// Checks the whole file: every frame's checksums and decompression (strictly: a torn tail
  /// counts as damage), every record's decoding, and every checkpoint against a fresh fold.
  public func verify(progress: ((Int, Int) -> Void)? = nil) -> VerifyReport {
    let log: ListTapeLog.VerifyReport
    do {
      log = try reader.verify()
    } catch {
      return VerifyReport(
        intact: false, events: 0, frames: 0, checkpoints: 0, bytes: fileBytes,
        problem: error.description, offset: error.offset.map(Int.init),
        event: error.lastGoodEvent.map(Int.init))
    }
    var report = VerifyReport(
      intact: true, events: Int(log.events), frames: log.frames, checkpoints: log.checkpointFrames,
      bytes: Int(log.fileBytes), problem: nil, offset: nil, event: nil)
    switch log.status {
    case .intact: break
    case .tornTail(let d), .damaged(let d):
      report.intact = false
      report.problem = d.description
      report.offset = Int(d.offset)
      report.event = Int(d.lastGoodEvent)
    }
    // Semantic pass over the readable prefix, one checkpoint interval at a time (the
    // reader cannot be used from inside its own record callback).
    let limit = min(eventCount, report.event ?? eventCount)
    let checkpointStops = reader.checkpointSeqs.map(Int.init).filter { $0 <= limit }
    let limitIsCheckpoint = checkpointStops.last == limit
    let stops = limitIsCheckpoint ? checkpointStops : checkpointStops + [limit]
    var state = ListState()
    var decoder = EventDecoder()
    var last = 0
    do throws(ReplayError) {
      for stop in stops {
        try foldEach(&state, &decoder, from: last + 1, through: stop) { seq, _, _, _ in
          last = seq
          if seq & 0xFFFF == 0 { progress?(seq, eventCount) }
          return true
        }
        guard stop < limit || limitIsCheckpoint,
          let cp = try logCheckpoint(atOrBefore: stop), cp.seq == stop
        else { continue }
        guard cp.state == state, cp.lastTime.map({ $0 == decoder.lastTime }) ?? true else {
          throw ReplayError(
            .damaged,
            "checkpoint after event \(stop) disagrees with the fold of events 1...\(stop) (\(path))"
          )
        }
      }
    } catch {
      report.intact = false
      report.problem = error.description
      report.offset = nil
      report.event = last
    }
    return report
  }

  /// Counts events per op, faults (by folding), marks, sizes and the time span.
  public func stats(progress: ((Int, Int) -> Void)? = nil) throws(ReplayError) -> LogStats {
    var counts: [String: Int] = [:]
    var faults = 0
    var marks = 0
    var first: Int64?
    var last: Int64?
    var state = ListState()
    var decoder = EventDecoder()
    let total = eventCount
    try foldEach(&state, &decoder, from: 1, through: total) { seq, e, fault, _ in
      counts[e.op, default: 0] += 1
      if let t = e.time {
        if first == nil { first = t }
        last = t
      }
      if case .mark = e.operation { marks += 1 }
      if fault != nil { faults += 1 }
      if seq & 0xFFFF == 0 { progress?(seq, total) }
      return true
    }
    let (frames, checkpoints, checkpointBytes) = reader.frameCounts
    return LogStats(
      events: total,
      opCounts: counts.map { (op: $0.key, count: $0.value) }.sorted {
        $0.count != $1.count ? $0.count > $1.count : $0.op < $1.op
      }, faults: faults, bytes: fileBytes, frames: frames, checkpoints: checkpoints,
      checkpointBytes: Int(checkpointBytes), firstTime: first, lastTime: last, marks: marks,
      format: formatMajor, indexBytes: indexBytes)
  }
}
