import Foundation
import ListTapeLog
import ListTapeModel
import ListTapeRead
import ListTapeStore

/// One log's answer in a search of many logs.
package struct LogMatch: Sendable {
  /// The log.
  package var path: String
  /// The first event at which the expression holds (0: on the empty list before any
  /// event); nil when it never holds in what could be read.
  package var event: Int?
  /// That event (nil for event 0).
  package var op: Event?
  /// Events the log holds.
  package var events: Int
  /// Where and why reading stopped before the end of the file (the answer then covers what
  /// was read); nil when the whole log reads.
  package var damage: LogDamage?
  /// Whether the answer rests only on recorded states: no state that is not the recorded
  /// one (after events lost in a salvage, never judged) came before `event` (before the
  /// end, when it never holds).
  package var exact = true
}

/// A log among many that was read only in part, or not at all.
package struct LogProblem: Error, Sendable {
  /// The path given, or the log found under a directory given.
  package var path: String
  /// What went wrong.
  package var reason: Reason

  /// What went wrong with a log among many.
  package enum Reason: Sendable {
    /// Nothing exists at the path.
    case noSuchFile
    /// A directory that holds no `.ltape` file.
    case noLogs
    /// The log could not be opened or read at all.
    case unreadable(StoreError)
    /// Reading stopped at damage; what came before it was read.
    case damaged(LogDamage)
  }

  /// A problem with the log at `path`.
  package init(path: String, reason: Reason) {
    self.path = path
    self.reason = reason
  }
}

/// What `stats` counts over many logs.
package struct StatsTotals: Sendable {
  /// Logs read (in whole or up to their damage).
  package var logs = 0
  /// Events of the logs read.
  package var events = 0
  /// Events that faulted when folded.
  package var faults = 0
  /// Faults by kind, most frequent first (ties by name).
  package var faultsByKind: [(kind: FaultKind, count: Int)] = []
  /// Events per op, most frequent first (ties by name).
  package var opCounts: [(op: String, count: Int)] = []
  /// The logs' sizes in bytes.
  package var bytes = 0
  /// Mark events.
  package var marks = 0
  /// The earliest event time of any log, in Unix milliseconds.
  package var firstTime: Int64?
  /// The latest event time of any log, in Unix milliseconds.
  package var lastTime: Int64?
  /// Logs that are damaged (counted up to the damage) or could not be read (not counted),
  /// in the order of the paths.
  package var problems: [LogProblem] = []
}

/// Scans many logs at once, one log per core at a time, each folded on its worker's own
/// thread, so memory holds one state per worker whatever the number of logs.
package enum ManyLogs {
  /// The logs among `paths`: files as given, directories searched (recursively) for
  /// `.ltape` files, in path order; paths that do not exist, and directories without logs,
  /// are problems.
  package static func files(_ paths: [String]) -> (files: [String], missing: [LogProblem]) {
    var files: [String] = []
    var missing: [LogProblem] = []
    let fm = FileManager.default
    for path in paths {
      var isDirectory: ObjCBool = false
      guard fm.fileExists(atPath: path, isDirectory: &isDirectory) else {
        missing.append(LogProblem(path: path, reason: .noSuchFile))
        continue
      }
      guard isDirectory.boolValue else {
        files.append(path)
        continue
      }
      let base = path.hasSuffix("/") ? path : path + "/"
      let found = (fm.enumerator(atPath: path)?.allObjects as? [String] ?? [])
        .filter { $0.hasSuffix(".ltape") }
        .sorted()
        .map { base + $0 }
      if found.isEmpty {
        missing.append(LogProblem(path: path, reason: .noLogs))
      }
      files += found
    }
    return (files, missing)
  }

  /// Whether a path names a directory (the command line then means many logs).
  package static func isDirectory(_ path: String) -> Bool {
    var isDirectory: ObjCBool = false
    return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory)
      && isDirectory.boolValue
  }

  /// The first event at which `query` holds in each log, scanned `workers` at a time;
  /// `report` gets every log's answer in the order of `paths`, from the workers' threads
  /// one at a time. Returns how many logs matched.
  package static func find(
    _ query: Query, in paths: [String], workers: Int = ProcessInfo.processInfo.activeProcessorCount,
    report: (Result<LogMatch, LogProblem>) -> Void
  ) -> Int {
    var matched = 0
    inParallel(paths, workers: workers) { path -> Result<LogMatch, LogProblem> in
      do throws(StoreError) {
        let timeline = try Timeline(path: path)
        // A query of its own per log: evaluating a shared one retains and releases the same
        // nodes from every core at every event.
        let hit = try timeline.firstEvent(where: (try? Query(query.description)) ?? query)
        return .success(
          LogMatch(
            path: path, event: hit.first?.event, op: hit.first?.op, events: timeline.eventCount,
            damage: timeline.damage, exact: hit.exact))
      } catch {
        return .failure(LogProblem(path: path, reason: .unreadable(error)))
      }
    } report: { _, result in
      if case .success(let m) = result, m.event != nil { matched += 1 }
      report(result)
    }
    return matched
  }

  /// `Timeline.stats` of every log, `workers` at a time, added up; `report` gets each log's
  /// figures (or failure) in the order of `paths`.
  package static func stats(
    _ paths: [String], workers: Int = ProcessInfo.processInfo.activeProcessorCount,
    report: (String, Result<LogStats, LogProblem>) -> Void = { _, _ in }
  ) -> StatsTotals {
    var totals = StatsTotals()
    var ops: [String: Int] = [:]
    var kinds: [FaultKind: Int] = [:]
    inParallel(paths, workers: workers) { path -> Result<(LogStats, LogDamage?), LogProblem> in
      do throws(StoreError) {
        let timeline = try Timeline(path: path)
        return .success((try timeline.stats(), timeline.damage))
      } catch {
        return .failure(LogProblem(path: path, reason: .unreadable(error)))
      }
    } report: { i, result in
      switch result {
      case .success(let (s, damage)):
        totals.logs += 1
        totals.events += s.events
        totals.faults += s.faults
        totals.bytes += s.bytes
        totals.marks += s.marks
        for (op, n) in s.opCounts { ops[op, default: 0] += n }
        for (kind, n) in s.faultsByKind { kinds[kind, default: 0] += n }
        if let t = s.firstTime { totals.firstTime = min(totals.firstTime ?? t, t) }
        if let t = s.lastTime { totals.lastTime = max(totals.lastTime ?? t, t) }
        if let damage {
          totals.problems.append(LogProblem(path: paths[i], reason: .damaged(damage)))
        }
        report(paths[i], .success(s))
      case .failure(let problem):
        totals.problems.append(problem)
        report(paths[i], .failure(problem))
      }
    }
    totals.opCounts = ops.map { (op: $0.key, count: $0.value) }.sorted {
      $0.count != $1.count ? $0.count > $1.count : $0.op < $1.op
    }
    totals.faultsByKind = FaultKind.ranked(kinds)
    return totals
  }

  /// Runs `work` on every path, `workers` at a time, and hands each result to `report` in
  /// the paths' order as soon as it and every result before it are ready.
  static func inParallel<R>(
    _ paths: [String], workers: Int, _ work: (String) -> R, report: (Int, R) -> Void
  ) {
    let threads = max(1, min(workers, paths.count))
    if threads == 1 {
      for (i, path) in paths.enumerated() { report(i, work(path)) }
      return
    }
    let shared = Shared<R>(count: paths.count)
    withoutActuallyEscaping(work) { work in
      withoutActuallyEscaping(report) { report in
        let box = Unchecked((work, report))
        DispatchQueue.concurrentPerform(iterations: threads) { _ in
          while let i = shared.take() {
            let result = box.value.0(paths[i])
            shared.finish(i, result, box.value.1)
          }
        }
      }
    }
  }
}

/// The work queue and the in-order hand-off of `ManyLogs.inParallel`.
private final class Shared<R>: @unchecked Sendable {
  private let lock = NSLock()
  private var next = 0
  private let count: Int
  private var ready: [Int: R] = [:]
  private var reported = 0

  init(count: Int) { self.count = count }

  func take() -> Int? {
    lock.lock()
    defer { lock.unlock() }
    guard next < count else { return nil }
    next += 1
    return next - 1
  }

  /// Stores result `i` and reports every result that is now next in order (under the lock,
  /// so reports never overlap).
  func finish(_ i: Int, _ result: R, _ report: (Int, R) -> Void) {
    lock.lock()
    defer { lock.unlock() }
    ready[i] = result
    while let r = ready.removeValue(forKey: reported) {
      report(reported, r)
      reported += 1
    }
  }
}

/// A value handed to worker threads that only ever use it under `Shared`'s rules.
private struct Unchecked<T>: @unchecked Sendable {
  let value: T
  init(_ value: T) { self.value = value }
}

extension Timeline {
  /// The first event after which `query` holds (0 when it holds on the empty list), with
  /// that event; nil when it never holds. Folds on the calling thread only, so many logs can
  /// be searched at once, one per core. After events lost in a salvage, states that are not
  /// the recorded ones are never judged (the fold re-anchors at recovery points), and
  /// `exact` says whether any came before the answer (or the end).
  package func firstEvent(where query: Query) throws(StoreError) -> (
    first: (event: Int, op: Event?)?, exact: Bool
  ) {
    var state = ListState()
    var evaluation = Query.Evaluation(query)
    if evaluation.holds(in: state) { return ((0, nil), true) }
    var decoder = startDecoder()
    var found: (event: Int, op: Event?)?
    let steps = exactSteps
    var exact = true
    try fold(&state, &decoder, from: 1, through: eventCount, readAhead: false) { ops, i, _, s in
      let seq = ops.seqs[i]
      guard steps.stateIsExact(at: seq) else {
        exact = false
        return true
      }
      guard evaluation.holds(in: s) else { return true }
      found = (seq, ops.event(i, s.ids))
      return false
    }
    // Lost events at the end (no state after them folded) also leave the answer unjudged.
    if found == nil && !steps.stateIsExact(at: eventCount) { exact = false }
    return (found, exact)
  }
}
