import Foundation
import ListTapeModel
import ListTapeRead
import ListTapeStore

/// A fault present in one history and not in the other.
package struct FaultChange: Sendable {
  /// The event's number in the real log.
  package var event: Int
  /// The event.
  package var op: Event
  /// Its fault in the history that has it.
  package var fault: ListFault
  /// Whether the event is one of those left out (its fault vanishes with it).
  package var removed: Bool
}

/// What leaving some events out of a log would have changed.
package struct WhatIfReport: Sendable {
  /// The events left out, sorted and merged.
  package var without: [ClosedRange<Int>]
  /// How many events that is.
  package var removedCount: Int
  /// The checkpoint the replay started from (0: the start of the log).
  package var start: Int
  /// The first event after which the real and the counterfactual states differ (always one
  /// of the removed events); nil when they never differ.
  package var firstDifference: Int?
  /// That event.
  package var firstDifferenceOp: Event?
  /// Faults the counterfactual history has and the real one does not, by event.
  package var appeared: [FaultChange] = []
  /// Faults of the real history the counterfactual one does not have, by event.
  package var vanished: [FaultChange] = []
  /// The point compared, and the diff from the real state there to the counterfactual one.
  package var at: Int
  /// What differs there, from the real state to the counterfactual one.
  package var diff: StateDiff
  /// Whether the report rests only on recorded states: the replay, from the state before
  /// the first removed event through the last event it folded, crossed no events lost in a
  /// salvage (docs/cli.md, "Damaged logs").
  package var exact = true
}

/// Counterfactual replay: the log with some events left out, compared with the real one.
package enum WhatIf {
  /// Ranges sorted, overlapping and touching ones merged.
  package static func merged(_ ranges: [ClosedRange<Int>]) -> [ClosedRange<Int>] {
    var out: [ClosedRange<Int>] = []
    for r in ranges.sorted(by: { $0.lowerBound < $1.lowerBound }) {
      if let last = out.last, r.lowerBound <= last.upperBound + 1 {
        out[out.count - 1] = last.lowerBound...max(last.upperBound, r.upperBound)
      } else {
        out.append(r)
      }
    }
    return out
  }

  /// Replays `timeline` without the events in `ranges` next to the real history, from the
  /// checkpoint before the first of them. The two agree until a removed event changes the
  /// state, so until then one state stands for both and only removed events are checked
  /// (through the items they touch); after, both are folded to the end for their faults,
  /// unless they agree again past the last removed event. Every range must lie within
  /// 1...eventCount, and `point` within 0...eventCount (else `.eventOutOfRange`); the diff
  /// counts runs of more than `context` unchanged rows.
  /// - Complexity: a seek, then one fold per history from the first removed event on (the
  ///   real one on the log's records, the other on events while it differs), plus one copy
  ///   of the state per run of removed events.
  package static func run(
    _ timeline: Timeline, without ranges: [ClosedRange<Int>], at point: Int, context: Int = 2
  ) throws(StoreError) -> WhatIfReport {
    let total = timeline.eventCount
    let without = merged(ranges)
    guard (0...total).contains(point) else {
      throw .eventOutOfRange(point, lowest: 0, last: total, path: timeline.path)
    }
    guard let first = without.first?.lowerBound, let last = without.last?.upperBound else {
      // Nothing left out: one history.
      let s = try timeline.state(at: point)
      return WhatIfReport(
        without: [], removedCount: 0, start: 0, at: point,
        diff: Differ.diff(s, s, touched: TouchedItems(), context: context))
    }
    for n in [first, last] where n < 1 || n > total {
      throw .eventOutOfRange(n, lowest: 1, last: total, path: timeline.path)
    }
    var report = WhatIfReport(
      without: without, removedCount: without.reduce(0) { $0 + $1.count },
      start: timeline.checkpointSeq(atOrBefore: first - 1), at: point, diff: StateDiff())
    var (real, decoder) = try timeline.seek(to: first - 1)
    if point < first {
      // Before the first removed event the histories are one.
      let s = point == first - 1 ? real : try timeline.state(at: point)
      report.diff = Differ.diff(s, s, touched: TouchedItems(), context: context)
    }
    let limit = max(4_096, real.numberOfAllItems / 4)
    // Whether `other` holds the counterfactual state: while one state stands for both, it
    // does not. It folds events made from the log's records (it may hold ids the log no
    // longer defines after a dictionary restart).
    var differs = false
    var other = ListState()
    // During a run of removed events that began while they agreed, the state before it.
    var holding = false
    var held = ListState()
    // What the events since the histories last agreed touched, in either history.
    var touched = TouchedItems(limit: limit)
    var range = 0
    var folded = first - 1
    // The event being folded, made only while the histories are followed apart (a removed
    // event, or while they differ), whether it is removed, and what it changes.
    var event: Event?
    var removed = false
    var effect: Effect?
    // A run of removed events ends (`real` is the state after it): the histories agree
    // again, or differ from here on.
    func endRun(_ real: inout ListState) {
      guard holding else { return }
      holding = false
      if !Differ.diff(held, real, touched: touched, context: 0).isEmpty {
        swap(&other, &held)
        differs = true
      }
      held = ListState()
    }
    // Notes what `e` touches in a state read in place (a captured one would be copied).
    func note(_ e: Event, in state: inout ListState) { touched.note(e, before: state) }
    // Event `n`, which `make` gives from the real state it is about to be applied to.
    func step(_ n: Int, _ make: (ListState) -> Event, _ real: inout ListState) {
      while range < without.count && without[range].upperBound < n { range += 1 }
      removed = range < without.count && without[range].contains(n)
      event = nil
      if removed {
        if !differs && !holding {
          held = real
          holding = true
          touched = TouchedItems(limit: limit)
        }
        let e = make(real)
        effect = report.firstDifference == nil ? Effect(of: e, on: real) : nil
        touched.note(e, before: real)
        event = e
      } else {
        endRun(&real)
        if differs {
          let e = make(real)
          touched.note(e, before: real)
          note(e, in: &other)
          event = e
        }
      }
    }
    // Event `n` applied to the real state with `fault`; false once nothing is left to learn.
    func stepped(_ n: Int, _ fault: ListFault?, _ real: inout ListState) -> Bool {
      folded = n
      if removed, let e = event {
        if let fault {
          report.vanished.append(FaultChange(event: n, op: e, fault: fault, removed: true))
        }
        if let effect, effect.changed(real) {
          report.firstDifference = n
          report.firstDifferenceOp = e
        }
      } else if differs, let e = event {
        switch (fault, apply(e, to: &other)) {
        case (let f?, nil):
          report.vanished.append(FaultChange(event: n, op: e, fault: f, removed: false))
        case (nil, let f?):
          report.appeared.append(FaultChange(event: n, op: e, fault: f, removed: false))
        default: break
        }
        // Past the last removed event, histories that agree again agree for good.
        if n > last, !touched.overflowed, n == last + 1 || n & 0x1FFF == 0,
          Differ.diff(real, other, touched: touched, context: 0).isEmpty
        {
          differs = false
          other = ListState()
        }
      }
      if n == point {
        let counterfactual = differs ? other : holding ? held : nil
        report.diff = Differ.diff(
          real, counterfactual ?? real, touched: counterfactual == nil ? TouchedItems() : touched,
          context: context)
      }
      return n <= last || differs || n < point
    }
    if timeline.foldIsExact(from: first - 1, through: total) {
      // The real history folds on the log's records. The items the events touch are asked
      // about by id in it: its ids keep a string table (built again after a dictionary
      // restart drops it).
      real.indexIDs()
      func each(_ ops: FoldOps, _ i: Int, _ fault: ListFault?, _ real: inout ListState) -> Bool {
        if !real.ids.hasStringTable { real.indexIDs() }
        return stepped(ops.seqs[i], fault, &real)
      }
      try timeline.fold(
        &real, &decoder, from: first, through: total,
        before: { ops, i, real in step(ops.seqs[i], { ops.event(i, $0.ids) }, &real) }, each)
    } else {
      // Across events a salvage lost, both histories go on without them, on events: a fold
      // of records would re-anchor the real one at the recovery point after the gap (the
      // recorded state, the lost events' changes in it), where the counterfactual one
      // cannot follow.
      var ids = ListState()
      try timeline.forEachEvent(from: first, through: total, ids: &ids, decoder: &decoder) {
        n, e in
        step(n, { _ in e }, &real)
        let fault = apply(e, to: &real)
        return stepped(n, fault, &real)
      }
    }
    report.exact = timeline.foldIsExact(from: first - 1, through: max(folded, point))
    return report
  }

  /// Whether one event changed a state: its touched items' facts and selection, the
  /// sections, the selection count and mode, taken before it.
  private struct Effect {
    let items: TouchedItems
    let facts: [(ItemFacts?, Bool)]
    let sections: [String]
    let selected: Int
    let multiple: Bool

    init(of event: Event, on state: ListState) {
      var items = TouchedItems()
      items.note(event, before: state)
      self.items = items
      facts = items.ids.map { (itemFacts(state, $0), state.isSelected($0)) }
      sections = state.sectionIdentifiers
      selected = state.numberOfSelectedItems
      multiple = state.allowsMultipleSelection
    }

    func changed(_ state: ListState) -> Bool {
      guard state.numberOfSelectedItems == selected, state.allowsMultipleSelection == multiple,
        state.sectionIdentifiers == sections
      else { return true }
      for (id, (f, selected)) in zip(items.ids, facts) {
        let g = itemFacts(state, id)
        guard state.isSelected(id) == selected, f?.place == g?.place, f?.expanded == g?.expanded,
          f?.title == g?.title, f?.fields == g?.fields
        else { return true }
      }
      return false
    }
  }

  /// Applies an event; returns its fault (the state is then unchanged).
  private static func apply(_ event: Event, to state: inout ListState) -> ListFault? {
    do throws(ListFault) {
      try state.apply(event)
      return nil
    } catch {
      return error
    }
  }

  /// Writes the counterfactual log at `output` (which must not exist): every event but the
  /// removed ones, times kept, each removed one replaced by a mark labelled `label` (saying
  /// what was left out), so that event N of the new log is event N of this one (events a
  /// salvage lost stay a gap). Returns the number of events written.
  @discardableResult
  package static func write(
    _ timeline: Timeline, without ranges: [ClosedRange<Int>], mark label: String,
    to output: String
  ) throws(StoreError) -> Int {
    let without = merged(ranges)
    var written = 0
    try writeLog(output) { recorder throws(StoreError) in
      var range = 0
      written = try timeline.copyEvents(
        through: timeline.eventCount, into: recorder,
        replacing: { n, event in
          while range < without.count && without[range].upperBound < n { range += 1 }
          guard range < without.count && without[range].contains(n) else { return event }
          return Event(.mark(label), time: event.time)
        },
        // A recovery point restores the counterfactual state only before any removal.
        adopts: { point in point < (without.first?.lowerBound ?? Int.max) })
    }
    return written
  }
}

/// Records a new log at `output` (which must not exist) through `body`, closing it whether
/// or not `body` succeeds.
func writeLog(_ output: String, _ body: (Recorder) throws(StoreError) -> Void)
  throws(StoreError)
{
  guard !FileManager.default.fileExists(atPath: output) else {
    throw .outputExists(path: output)
  }
  let recorder = try Recorder.open(path: output)
  do throws(StoreError) {
    try body(recorder)
    try recorder.close()
  } catch {
    try? recorder.close()
    throw error
  }
}
