import ListTapeModel
import ListTapeRead
import ListTapeStore

/// What a check says about the state at one event (git bisect's vocabulary).
public enum Verdict: String, Sendable {
  /// The bug is not there yet (the predicate does not hold).
  case good
  /// The bug is there (the predicate holds).
  case bad
  /// This state cannot be judged; try a neighbour.
  case skip
}

/// Why a bisect probed an event.
public enum ProbePurpose: Sendable, Equatable {
  /// The ends: the last event (bad, else nothing to find) and the empty state.
  case boundary
  /// A step of the binary search.
  case search
  /// The pair of events around the answer, found by a forward scan of one interval.
  case scan
  /// A probe after the answer that checks the predicate keeps holding.
  case monotonicCheck
}

/// One evaluated event of a bisect session, logged so the session can be replayed.
public struct BisectProbe: Sendable {
  /// The event probed.
  public var event: Int
  /// What the check said about the state after it.
  public var verdict: Verdict
  /// Why the search probed it.
  public var purpose: ProbePurpose
  /// Whether the state probed is the recorded one. One that is not (after events lost in
  /// a salvage) is never judged: its verdict is `.skip`.
  package var exact = true
}

/// Why a bisect stopped without an answer: the log failed, or the check did.
package enum BisectError<CheckError: Error>: Error {
  /// The log could not be read where the search needed it.
  case timeline(StoreError)
  /// The check threw.
  case check(CheckError)
}

/// The outcome of a bisect.
public struct BisectResult: Sendable {
  /// The first bad event (0 when the empty state is already bad); nil when the last event
  /// is good, i.e. the predicate never holds.
  public var first: Int?
  /// When skipped events hide the answer: it lies in `candidates` (the first bad is one of
  /// them), and `first` is the earliest bad event known.
  public var candidates: ClosedRange<Int>?
  /// Every probe, in the order made.
  public var probes: [BisectProbe]
  /// Probes that contradict monotonicity (a good event after a bad one).
  public var contradictions: [Int]
  /// States built from checkpoints.
  public var seeks: Int
  /// Events folded forward between probes.
  public var folded: Int
  /// The event `first` (nil when `first` is nil or 0).
  public var eventAtFirst: Event?
  /// The state after event `first` (nil when `first` is nil).
  package var stateAtFirst: ListState?
  /// Whether the answer rests only on recorded states: the pair around `first` (or, when
  /// the predicate never holds, the last event) is exact, and no state that is not the
  /// recorded one hides it among `candidates`. States after events lost in a salvage are
  /// skipped, never judged (docs/cli.md, "Damaged logs").
  package var exact = true

  /// The verdict of the probe at event `n`, if it was probed.
  public func verdict(at n: Int) -> Verdict? { probes.first { $0.event == n }?.verdict }
}

/// Binary search over event numbers for the first event whose state is bad, assuming it
/// stays bad after: O(log n) checkpoint seeks, then a few extra probes after the answer to
/// catch predicates that are not monotonic.
public enum Bisect {
  /// Bisects for the first event at which `query` holds (a boolean expression): bad where
  /// it holds. The last interval is scanned forward, since evaluating is cheap.
  public static func run(
    _ timeline: Timeline, where query: Query, extraChecks: Int = 3,
    onProbe: (BisectProbe) -> Void = { _ in }
  ) throws(StoreError) -> BisectResult {
    var evaluation = Query.Evaluation(query)
    do {
      return try run(
        timeline, extraChecks: extraChecks, scanInterval: true,
        check: { _, state in evaluation.holds(in: state) ? .bad : .good }, onProbe: onProbe)
    } catch {
      switch error {
      case .timeline(let e): throw e
      case .check(let never): switch never {}
      }
    }
  }

  /// Bisects with any check (another program, a test's closure); a check that throws ends
  /// the search with its error. With `scanInterval` (for cheap checks), the search ends
  /// with one forward fold through the last checkpoint interval, checking every event,
  /// instead of a binary search whose backward steps would each re-fold the interval.
  package static func run<CheckError: Error>(
    _ timeline: Timeline, extraChecks: Int = 3, scanInterval: Bool = false,
    check: (Int, ListState) throws(CheckError) -> Verdict,
    onProbe: (BisectProbe) -> Void = { _ in }
  ) throws(BisectError<CheckError>) -> BisectResult {
    var cursor = Cursor(timeline)
    var probes: [BisectProbe] = []
    var known: [Int: Verdict] = [:]
    // After events lost in a salvage: the states that are not the recorded ones, skipped.
    let steps = timeline.exactSteps
    func judgeable(_ n: Int) -> Bool { steps.stateIsExact(at: n) }
    func move(to n: Int) throws(BisectError<CheckError>) {
      do {
        try cursor.move(to: n)
      } catch {
        throw .timeline(error)
      }
    }
    func probe(_ n: Int, _ purpose: ProbePurpose) throws(BisectError<CheckError>) -> Verdict {
      if let v = known[n] { return v }
      let v: Verdict
      if judgeable(n) {
        try move(to: n)
        do {
          v = try check(n, cursor.state)
        } catch {
          throw .check(error)
        }
      } else {
        v = .skip
      }
      known[n] = v
      let p = BisectProbe(event: n, verdict: v, purpose: purpose, exact: judgeable(n))
      probes.append(p)
      onProbe(p)
      return v
    }
    func result(_ first: Int?, _ candidates: ClosedRange<Int>? = nil, _ contradictions: [Int] = [])
      throws(BisectError<CheckError>) -> BisectResult
    {
      var r = BisectResult(
        first: first, candidates: candidates, probes: probes, contradictions: contradictions,
        seeks: cursor.seeks, folded: cursor.folded)
      if steps.hasGaps {
        let around = first.map { [$0 - 1, $0] } ?? [total]
        r.exact =
          around.allSatisfy { $0 < 0 || judgeable($0) }
          && (candidates.map { c in c.allSatisfy(judgeable) } ?? true)
      }
      guard let first else { return r }
      do throws(StoreError) {
        // The state at the answer, without a seek when the search ended standing on it.
        if let answerState {
          r.stateAtFirst = answerState
        } else {
          r.stateAtFirst = try timeline.state(at: first)
        }
        // A salvaged log's answer may be a recovery point whose own event was lost.
        if first > 0 {
          r.eventAtFirst = steps.hasGaps ? try? timeline.event(first) : try timeline.event(first)
        }
      } catch {
        throw .timeline(error)
      }
      return r
    }
    var answerState: ListState?
    let total = timeline.eventCount
    // The last event must be bad, else the predicate never holds (under monotonicity).
    var hi = total
    while hi >= 0 {
      let v = try probe(hi, .boundary)
      if v == .bad { break }
      if v == .good { return try result(nil) }
      hi = judgeable(hi) ? hi - 1 : steps.previousExact(before: hi)
    }
    guard hi >= 0 else { return try result(nil) }
    var lo = -1
    if hi > 0 {
      switch try probe(0, .boundary) {
      case .bad: hi = 0
      case .good: lo = 0
      case .skip: lo = -1
      }
    }
    // Invariant: lo is good (or -1: before the log), hi is bad, skipped ones in between.
    var skipped = Set<Int>()
    // First narrow to one checkpoint interval probing only checkpoints (a decode, no fold),
    // then search inside it, folding forward from the interval's start.
    var marks = timeline.checkpointSeqs.filter { $0 > lo && $0 < hi }
    while !marks.isEmpty {
      let mid = marks.count / 2
      let n = marks[mid]
      switch try probe(n, .search) {
      case .good:
        lo = n
        marks = Array(marks[(mid + 1)...])
      case .bad:
        hi = n
        marks = Array(marks[..<mid])
      case .skip:
        skipped.insert(n)
        marks.remove(at: mid)
      }
    }
    if scanInterval && hi - lo > 1 {
      try move(to: max(lo, 0))
      var failure: CheckError?
      let hit: Int?
      // The last state the scan judged good: the boundary pair is logged only when the
      // event before the hit was judged (not a state after lost events).
      var lastGood = lo
      do {
        hit = try cursor.advance(through: hi - 1) { n, s in
          guard judgeable(n) else { return false }
          do throws(CheckError) {
            if try check(n, s) == .bad { return true }
            lastGood = n
            return false
          } catch {
            failure = error
            return true
          }
        }
      } catch {
        throw .timeline(error)
      }
      if let failure { throw .check(failure) }
      // The scan checked every event it passed: log the boundary pair it found.
      let found = hit ?? hi
      for (n, v) in [(lastGood, Verdict.good), (found, Verdict.bad)]
      where n >= 0 && known[n] == nil {
        known[n] = v
        let p = BisectProbe(event: n, verdict: v, purpose: .scan)
        probes.append(p)
        onProbe(p)
      }
      hi = found
      lo = lastGood
    }
    while hi - lo > 1 {
      let mid = lo + (hi - lo) / 2
      guard let n = nearestUnskipped(mid, lo: lo, hi: hi, skipped, steps: steps) else {
        return try result(hi, (lo + 1)...hi)
      }
      switch try probe(n, .search) {
      case .good: lo = n
      case .bad: hi = n
      case .skip: skipped.insert(n)
      }
    }
    if cursor.position == hi { answerState = cursor.state }
    // Extra probes after the answer: a good one there means the predicate comes and goes.
    var contradictions: [Int] = []
    if hi < total && extraChecks > 0 {
      // Each probe lands on a checkpoint when one is near (a decode, no fold).
      let checkpoints = timeline.checkpointSeqs.filter { $0 > hi && $0 < total }
      for k in 1...extraChecks {
        var n = hi + (total - hi) * k / (extraChecks + 1)
        if let near = checkpoints.min(by: { abs($0 - n) < abs($1 - n) }),
          abs(near - n) <= (total - hi) / (2 * (extraChecks + 1))
        {
          n = near
        }
        guard n > hi && n < total else { continue }
        if try probe(n, .monotonicCheck) == .good { contradictions.append(n) }
      }
    }
    for (n, v) in known where v == .good && n > hi { contradictions.append(n) }
    return try result(hi, nil, Array(Set(contradictions)).sorted())
  }

  /// The event strictly between lo and hi closest to `mid` (the later one on a tie) that
  /// is neither skipped nor after events lost in a salvage without a recovery point
  /// between (a run of those is passed over at once).
  static func nearestUnskipped(
    _ mid: Int, lo: Int, hi: Int, _ skipped: Set<Int>, steps: ExactSteps = .none
  ) -> Int? {
    var up = mid
    while up < hi, skipped.contains(up) || !steps.stateIsExact(at: up) {
      up = steps.stateIsExact(at: up) ? up + 1 : steps.nextExact(after: up) ?? hi
    }
    var down = mid - 1
    while down > lo, skipped.contains(down) || !steps.stateIsExact(at: down) {
      down = steps.stateIsExact(at: down) ? down - 1 : steps.previousExact(before: down)
    }
    switch (up < hi, down > lo) {
    case (true, true): return up - mid <= mid - down ? up : down
    case (true, false): return up
    case (false, true): return down
    case (false, false): return nil
    }
  }
}
