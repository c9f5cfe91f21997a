import Foundation
import ListTapeInvestigate
import ListTapeLog
import ListTapeModel
import ListTapeParquet
import ListTapeRead
import ListTapeStore

/// What exporting one log found: the figures of its `sessions` row.
package struct SessionSummary: Sendable {
  package var log: String
  package var events = 0
  package var faults = 0
  /// Faults by kind, every kind (zeros included), in `FaultKind.allCases` order.
  package var faultsByKind = [Int](repeating: 0, count: FaultKind.allCases.count)
  package var marks = 0
  package var firstTime: Int64?
  package var lastTime: Int64?
  package var bytes = 0
  package var format = 0
  /// Where reading stopped early: the framing's damage (the rest of the file is not read).
  package var damage: LogDamage?
  /// An event that did not decode: the export of this log stopped before it.
  package var undecodable: StoreError?
  /// Events a salvage lost, and events after such a gap that could not be decoded.
  package var lostEvents = 0
  package var skippedEvents = 0
  /// Rows whose state is not the recorded one (after events lost in a salvage).
  package var inexactRows = 0
  /// The list after the last event exported.
  package var sections = 0
  package var items = 0
  package var visible = 0
  package var selected = 0
  package var depth: Int?

  /// Whether only part of the log was exported.
  package var damaged: Bool { damage != nil || undecodable != nil }
}

/// Writes `events.parquet` and `sessions.parquet` into a directory, one log after another:
/// each log is folded once, and every event becomes a row with the list's counts after it.
/// Memory holds one state and one row group per table, whatever the logs' lengths.
package final class FleetExport {
  package static let eventsFile = "events.parquet"
  package static let sessionsFile = "sessions.parquet"

  private let events: ParquetWriter
  private let sessions: ParquetWriter
  /// The rows `add(_:as:progress:)` fills, and the thread that encodes them when full.
  private var rows: ParquetRows
  private let pipeline: RowGroupPipeline
  /// How a decoding error reads in the `damage` column (the command line's wording).
  private let describe: (StoreError) -> String

  /// Creates both files in `directory`, which must exist; neither file may.
  package init(
    directory: String, options: ParquetOptions = .init(),
    describe: @escaping (StoreError) -> String = { "\($0)" }
  ) throws(ParquetError) {
    let base = directory.hasSuffix("/") ? directory : directory + "/"
    events = try ParquetWriter(
      path: base + Self.eventsFile, columns: FleetTables.events, options: options)
    var small = options
    small.rowGroupRows = min(options.rowGroupRows, 65_536)
    sessions = try ParquetWriter(
      path: base + Self.sessionsFile, columns: FleetTables.sessions, options: small)
    self.describe = describe
    rows = events.rows
    let events = self.events
    pipeline = RowGroupPipeline(spare: try events.makeRows()) { group throws(ParquetError) in
      try events.append(group)
    }
  }

  /// Event rows written so far (all of them once `close()` returned).
  package var eventRows: Int64 { events.rowCount }

  /// Folds `timeline` and writes a row per readable event and its `sessions` row, under
  /// the name `log`. A log that stops early (damage, an event that does not decode) is
  /// exported up to there; the summary says where it stopped.
  package func add(
    _ timeline: Timeline, as log: String, progress: ((Int, Int) -> Void)? = nil
  ) throws(ParquetError) -> SessionSummary {
    let pipeline = self.pipeline
    let (summary, rows) = try Self.fold(timeline, as: log, into: rows, progress: progress) {
      full throws(ParquetError) in try pipeline.hand(full)
    }
    self.rows = rows
    try writeSession(summary)
    return summary
  }

  /// Exports the logs at `paths`, `workers` at a time, each folded on a worker's own
  /// thread into row groups of its own; the groups and the sessions rows go into the files
  /// as they are done, so rows of different logs come in no particular order (a log's own
  /// rows stay in event order). `open` opens a log (or says why not); `report` gets each
  /// log's summary or failure, one at a time, in the order they finish. Memory holds a
  /// state and a row group per worker.
  package func add(
    _ paths: [String], workers: Int,
    open: @escaping (String) throws(StoreError) -> Timeline,
    report: @escaping (Int, Result<SessionSummary, StoreError>) -> Void
  ) throws(ParquetError) {
    let shared = Workers(export: self, paths: paths, open: open, report: report)
    DispatchQueue.concurrentPerform(iterations: max(1, min(workers, paths.count))) { _ in
      shared.work()
    }
    if let failure = shared.failure { throw failure }
  }

  /// One worker: logs one after another into rows of its own, until none is left.
  fileprivate func work(_ shared: Workers) throws(ParquetError) {
    let events = self.events
    var rows = try events.makeRows()
    let pipeline = RowGroupPipeline(spare: try events.makeRows()) { group throws(ParquetError) in
      try shared.locked { () throws(ParquetError) in try events.append(group) }
    }
    // A failure below leaves no group being encoded behind.
    defer { _ = try? pipeline.finish() }
    while let i = shared.next() {
      let opened: Result<Timeline, StoreError>
      do throws(StoreError) {
        opened = .success(try shared.open(shared.paths[i]))
      } catch {
        opened = .failure(error)
      }
      guard case .success(let timeline) = opened else {
        if case .failure(let error) = opened { shared.locked { shared.report(i, .failure(error)) } }
        continue
      }
      let summary: SessionSummary
      (summary, rows) = try Self.fold(timeline, as: shared.paths[i], into: rows, progress: nil) {
        full throws(ParquetError) in try pipeline.hand(full)
      }
      try shared.locked { () throws(ParquetError) in
        try writeSession(summary)
        shared.report(i, .success(summary))
      }
    }
    try pipeline.finish()
    let last = try rows.encode()
    try shared.locked { () throws(ParquetError) in try events.append(last) }
  }

  /// Folds one log into `rows`, handing them to `flush` whenever they fill a row group
  /// (which gives back rows to fill on); returns the log's summary and the rows it ended
  /// with.
  private static func fold(
    _ timeline: Timeline, as log: String, into rows: ParquetRows,
    progress: ((Int, Int) -> Void)?,
    flush: (ParquetRows) throws(ParquetError) -> ParquetRows
  ) throws(ParquetError) -> (SessionSummary, ParquetRows) {
    var summary = SessionSummary(log: log)
    summary.bytes = timeline.fileBytes
    summary.format = timeline.formatMajor
    summary.damage = timeline.damage
    summary.lostEvents = timeline.gaps.reduce(0) { $0 + Int($1.count) }
    let skippedBefore = timeline.skippedAfterGaps
    let staged = StagedRows()
    var eventRows = EventRows(rows: rows, log: log, staged: staged)
    // After events lost in a salvage: which rows hold states that are not the recorded ones.
    let steps = timeline.exactSteps
    var failure: ParquetError?
    var state = ListState()
    var decoder = timeline.startDecoder()
    var last = 0
    // The rows being filled, for the fold's `beforeIds`, which cannot share `eventRows`
    // with the callback (a variable captured by an escaping closure is checked at every
    // access).
    let filling = Filling(rows)
    let resolve: (ListState) -> Void = {
      EventRows.resolve(filling.rows, staged, log: log, $0)
    }
    let beforeIds: (ListState) -> Void = {
      resolve($0)
      // Until the next swap or restart (at most one dictionary kept).
      filling.earlierIds = $0.ids
    }
    do throws(StoreError) {
      try timeline.fold(
        &state, &decoder, from: 1, through: timeline.eventCount, progress: progress,
        beforeIds: beforeIds
      ) { ops, i, fault, state in
        let seq = ops.seqs[i]
        eventRows.op(
          ops, i, &state, earlier: ops.isKept(i) ? filling.earlierIds : nil, into: &summary)
        let full = eventRows.add(seq, fault, &state, step: steps.at(seq), into: &summary)
        last = seq
        guard full else { return true }
        resolve(state)
        do throws(ParquetError) {
          eventRows.writer = try flush(eventRows.writer)
          filling.rows = eventRows.writer
          return true
        } catch {
          failure = error
          return false
        }
      }
    } catch {
      summary.undecodable = error
    }
    resolve(state)
    progress?(last, timeline.eventCount)
    if let failure { throw failure }
    summary.skippedEvents = timeline.skippedAfterGaps - skippedBefore
    return (summary, eventRows.writer)
  }

  /// Writes both footers and closes the files.
  package func close() throws(ParquetError) {
    try pipeline.finish()
    if rows !== events.rows && rows.count > 0 { try events.append(try rows.encode()) }
    try events.close()
    try sessions.close()
  }

  private func writeSession(_ s: SessionSummary) throws(ParquetError) {
    let w = sessions
    var c = 0
    func next() -> Int {
      c += 1
      return c - 1
    }
    w.append(next(), string: s.log)
    w.append(next(), int64: Int64(s.events))
    w.append(next(), int64: Int64(s.faults))
    for n in s.faultsByKind { w.append(next(), int64: Int64(n)) }
    w.append(next(), int64: Int64(s.marks))
    optional(w, next(), s.firstTime)
    optional(w, next(), s.lastTime)
    w.append(next(), int64: Int64(s.bytes))
    w.append(next(), int32: Int32(s.format))
    w.append(next(), bool: s.damaged)
    let damage = s.damage.map { "\($0)" } ?? s.undecodable.map(describe)
    if let damage { w.append(next(), string: damage) } else { w.appendNull(next()) }
    w.append(next(), int64: Int64(s.lostEvents + s.skippedEvents))
    w.append(next(), int32: Int32(clamping: s.sections))
    w.append(next(), int32: Int32(clamping: s.items))
    w.append(next(), int32: Int32(clamping: s.visible))
    w.append(next(), int32: Int32(clamping: s.selected))
    if let d = s.depth { w.append(next(), int32: Int32(d)) } else { w.appendNull(next()) }
    try w.endRow()
  }

  private func optional(_ w: ParquetWriter, _ c: Int, _ v: Int64?) {
    if let v { w.append(c, int64: v) } else { w.appendNull(c) }
  }
}

/// The rows one log's fold fills (`FleetExport.fold`), as its `beforeIds` finds them.
private final class Filling {
  var rows: ParquetRows
  /// The ids of the state `beforeIds` saw last: those a record the fold kept across a swap
  /// of the state numbers (`EventRows.op`'s `earlier`).
  var earlierIds: IdSpace?
  init(_ rows: ParquetRows) { self.rows = rows }
}

/// The shared state of `FleetExport.add(_:workers:open:report:)`'s workers: what they
/// export, the next log, the lock every file append and report takes, and the first
/// failure (which stops them). Its fields are only used under its lock, or never change.
private final class Workers: @unchecked Sendable {
  let export: FleetExport
  let paths: [String]
  let open: (String) throws(StoreError) -> Timeline
  let report: (Int, Result<SessionSummary, StoreError>) -> Void
  private let lock = NSLock()
  private var taken = 0
  private(set) var failure: ParquetError?

  init(
    export: FleetExport, paths: [String], open: @escaping (String) throws(StoreError) -> Timeline,
    report: @escaping (Int, Result<SessionSummary, StoreError>) -> Void
  ) {
    self.export = export
    self.paths = paths
    self.open = open
    self.report = report
  }

  func work() {
    do throws(ParquetError) {
      try export.work(self)
    } catch {
      locked { if failure == nil { failure = error } }
    }
  }

  /// The next log to export; nil when none is left or a worker failed.
  func next() -> Int? {
    locked {
      guard taken < paths.count, failure == nil else { return nil }
      taken += 1
      return taken - 1
    }
  }

  func locked<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
    lock.lock()
    defer { lock.unlock() }
    return try body()
  }
}
