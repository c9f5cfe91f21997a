import ListTapeModel
import ListTapeRead
import ListTapeStore

/// What `Shrink.run` kept of a log.
package struct ShrinkResult: Sendable {
  /// The kept events' numbers in the original log, in order.
  package var kept: [Int]
  /// The kept events themselves (times and content as recorded).
  package var events: [Event]
  /// Events in the original log.
  package var original: Int
  /// Candidates whose final state was judged.
  package var tests: Int
  /// Events folded to build the candidates' states.
  package var folded: Int
  /// Events in the slice of events that name the predicate's items (and their parents,
  /// anchors and sections, transitively), when one was tried; whether it kept the
  /// predicate true (then the search started from it instead of the whole log).
  package var slice: (events: Int, held: Bool)?
  /// Whether the search rested on the recorded history. False for a log that lost events
  /// in a salvage: the search then shrinks the events that remain, folded from the empty
  /// list without the lost ones, which is not the recorded history (the kept events still
  /// keep their numbers in the log, and their own fold satisfies the predicate).
  package var exact = true
}

/// How far a shrink has come, for a progress line.
package struct ShrinkProgress: Sendable {
  /// Candidates judged so far.
  package var tests: Int
  /// Events kept so far in this pass.
  package var kept: Int
  /// Events of the list being shrunk still to be tried in this pass.
  package var remaining: Int
  /// Passes over the list so far (the search ends after a pass that removes nothing).
  package var pass: Int
}

/// Why a shrink stopped without a result: the log failed, or the predicate did.
package enum ShrinkError<CheckError: Error>: Error {
  /// The log could not be read where the search needed it.
  case timeline(StoreError)
  /// The predicate threw.
  case check(CheckError)
}

/// What a predicate's outcome can depend on, for trying irrelevant events away first.
package struct Relevance: Sendable {
  /// Items the predicate names.
  package var items: [String]
  /// Whether it reads the selection (then every select and deselect may matter).
  package var selection: Bool

  /// What an opaque predicate can depend on: these items, and the selection or not.
  package init(items: [String], selection: Bool) {
    self.items = items
    self.selection = selection
  }
}

/// Delta debugging over a log's events: a subsequence, in order, whose final state still
/// satisfies a predicate and from which no single event can be removed.
///
/// The search removes events from the end backwards, each time the longest run before the
/// events kept so far that can go (found by doubling, then halving), keeping the event
/// before it; then repeats over what it kept until a pass removes nothing, which proves
/// every single removal breaks the predicate (1-minimal). A candidate is the original
/// prefix before the chunk plus the events kept after it, so its state is the prefix's
/// (from the log's checkpoints, and states cached while folding between them) with the few
/// kept events folded on. With a `Relevance`, the events that cannot touch the named items
/// are tried away in one step first.
package enum Shrink {
  /// Shrinks `timeline`'s events to a 1-minimal list whose final state satisfies `query`
  /// (a boolean expression), trying first the events that name its items; `progress` hears
  /// after every test. Nil when the log's own final state does not satisfy it.
  package static func run(
    _ timeline: Timeline, where query: Query, progress: ((ShrinkProgress) -> Void)? = nil
  ) throws(StoreError) -> ShrinkResult? {
    do {
      return try run(
        timeline, relevance: query.relevance, predicate: { state, _ in query.holds(in: state) },
        progress: progress)
    } catch {
      switch error {
      case .timeline(let e): throw e
      case .check(let never): switch never {}
      }
    }
  }

  /// Shrinks `timeline`'s events to a 1-minimal list whose final state satisfies
  /// `predicate` (given the state and the candidate's number of events); `progress` hears
  /// after every test. Nil when the log's own final state does not satisfy it; a predicate
  /// that throws ends the search with its error. The states it saves along the way to fold
  /// less hold `savedBytes` at most.
  package static func run<CheckError: Error>(
    _ timeline: Timeline, relevance: Relevance? = nil,
    predicate: @escaping (_ state: ListState, _ events: Int) throws(CheckError) -> Bool,
    progress: ((ShrinkProgress) -> Void)? = nil, savedBytes: Int = LogPrefixes.savedBytes
  ) throws(ShrinkError<CheckError>) -> ShrinkResult? {
    let total = timeline.eventCount
    var search = Search(predicate: predicate, progress: progress, savedBytes: savedBytes)
    if !timeline.gaps.isEmpty {
      return try runOverRemaining(timeline, &search)
    }
    let last = try Search<CheckError>.reading { () throws(StoreError) in
      try timeline.state(at: total)
    }
    guard try search.judge(last, total) else { return nil }
    var result = ShrinkResult(kept: [], events: [], original: total, tests: 1, folded: 0)
    var units: [Unit]
    if let relevance,
      let slice = try Search<CheckError>.reading({ () throws(StoreError) in
        try Self.slice(timeline, relevance)
      }),
      slice.count < total
    {
      let held = try search.test(ListState(), 0, slice.map(\.event))
      result.slice = (slice.count, held)
      units = held ? slice : try search.pass(overLog: timeline)
    } else {
      units = try search.pass(overLog: timeline)
    }
    while true {
      let kept = try search.pass(over: units)
      if kept.count == units.count { break }
      units = kept
    }
    result.kept = units.map(\.number)
    result.events = units.map(\.event)
    result.tests += search.tests
    result.folded = search.folded
    return result
  }

  /// A log that lost events in a salvage: its lost events cannot be replayed, so the search
  /// works on the events that remain, in memory, folded from the empty list (whose final
  /// state must satisfy the predicate); the result says it is not exact.
  static func runOverRemaining<CheckError: Error>(
    _ timeline: Timeline, _ search: inout Search<CheckError>
  ) throws(ShrinkError<CheckError>) -> ShrinkResult? {
    var units: [Unit] = []
    try Search<CheckError>.reading { () throws(StoreError) in
      try timeline.forEachEvent { n, event in
        units.append(Unit(number: n, event: event))
        return true
      }
    }
    var state = ListState()
    for u in units { try? state.apply(u.event) }
    guard try search.judge(state, units.count) else { return nil }
    var result = ShrinkResult(
      kept: [], events: [], original: timeline.eventCount, tests: 1, folded: units.count)
    result.exact = false
    while true {
      let kept = try search.pass(over: units)
      if kept.count == units.count { break }
      units = kept
    }
    result.kept = units.map(\.number)
    result.events = units.map(\.event)
    result.tests += search.tests
    result.folded += search.folded
    return result
  }

  /// One event of the list being shrunk: its number in the original log and the event.
  struct Unit {
    var number: Int
    var event: Event
  }

  /// The events that name the relevant items, or items named with them by such events, to
  /// a fixed point (parents, anchors, moved-next-to items), with every event that edits
  /// sections, deletes every item, or changes the selection wholesale (and, when the
  /// selection matters, every select and deselect). Nil when the log is too long to hold
  /// the slice in memory.
  static func slice(_ timeline: Timeline, _ relevance: Relevance) throws(StoreError) -> [Unit]? {
    var items = Set(relevance.items.map(IdentifierKey.init))
    func global(_ op: ListOperation) -> Bool {
      switch op {
      case .appendSections, .insertSections, .deleteSections, .moveSection, .deleteAllItems,
        .applySectionSnapshot, .configure, .deselect(nil):
        return true
      case .select, .deselect: return relevance.selection
      case .batch(let events): return events.contains { global($0.operation) }
      default: return false
      }
    }
    var slice: [Unit] = []
    for _ in 0..<12 {
      let before = items.count
      slice = []
      var tooLong = false
      try timeline.forEachEvent { n, event in
        let ids = event.operation.itemIDs
        if ids.contains(where: { items.contains(IdentifierKey($0)) }) {
          for id in ids { items.insert(IdentifierKey(id)) }
        } else if !global(event.operation) {
          return true
        }
        slice.append(Unit(number: n, event: event))
        tooLong = slice.count > 2_000_000
        return !tooLong
      }
      if tooLong { return nil }
      if items.count == before { break }
    }
    return slice
  }

  /// Candidates, their states, and the predicate.
  struct Search<CheckError: Error> {
    typealias Failure = ShrinkError<CheckError>
    let predicate: (ListState, Int) throws(CheckError) -> Bool
    let progress: ((ShrinkProgress) -> Void)?
    var tests = 0
    var folded = 0
    var passes = 0
    /// Bytes the states saved along a pass may hold in all.
    let savedBytes: Int

    init(
      predicate: @escaping (_ state: ListState, _ events: Int) throws(CheckError) -> Bool,
      progress: ((ShrinkProgress) -> Void)?, savedBytes: Int
    ) {
      self.predicate = predicate
      self.progress = progress
      self.savedBytes = savedBytes
    }

    /// Runs a read of the log, its error as a shrink's.
    static func reading<T>(_ body: () throws(StoreError) -> T) throws(Failure) -> T {
      do {
        return try body()
      } catch {
        throw .timeline(error)
      }
    }

    /// The predicate's verdict on a state after `events` events.
    func judge(_ state: ListState, _ events: Int) throws(Failure) -> Bool {
      do {
        return try predicate(state, events)
      } catch {
        throw .check(error)
      }
    }

    /// Whether `state` (after a prefix of `length` events) with `events` folded on
    /// satisfies the predicate.
    mutating func test(_ state: ListState, _ length: Int, _ events: [Event]) throws(Failure)
      -> Bool
    {
      var state = state
      for e in events { try? state.apply(e) }
      folded += events.count
      tests += 1
      return try judge(state, length + events.count)
    }

    /// One backward pass over the units of a list whose prefix states `prefix` gives:
    /// returns the units it kept. From the end, it finds the longest run of units before
    /// those kept that can go (doubling the run while removals hold, then halving the gap
    /// between the longest that held and the shortest that did not), removes it, and keeps
    /// the unit before it, whose removal with the run is known to break the predicate.
    mutating func pass(
      count: Int, unit: (Int) throws(Failure) -> Unit,
      prefix: (Int) throws(Failure) -> ListState
    ) throws(Failure) -> [Unit] {
      passes += 1
      var kept: [Unit] = []
      var keptEvents: [Event] = []
      var p = count
      // Whether the prefix of length n, then what was kept, satisfies the predicate.
      func holds(_ n: Int) throws(Failure) -> Bool {
        defer {
          progress?(ShrinkProgress(tests: tests, kept: kept.count, remaining: p, pass: passes))
        }
        return try test(try prefix(n), n, keptEvents)
      }
      while p > 0 {
        var removable = 0
        var failed: Int?
        var step = 1
        while failed == nil && removable < p {
          let m = min(p, removable + step)
          if try holds(p - m) {
            removable = m
            step *= 2
          } else {
            failed = m
          }
        }
        while let f = failed, f - removable > 1 {
          let m = (removable + f) / 2
          if try holds(p - m) { removable = m } else { failed = m }
        }
        p -= removable
        guard p > 0 else { break }
        let u = try unit(p - 1)
        kept.insert(u, at: 0)
        keptEvents.insert(u.event, at: 0)
        p -= 1
      }
      return kept
    }

    /// A pass over the whole log: prefixes come from its checkpoints and cached states.
    mutating func pass(overLog timeline: Timeline) throws(Failure) -> [Unit] {
      var prefixes = LogPrefixes(timeline, savedBytes: savedBytes)
      defer { folded += prefixes.folded }
      return try pass(count: timeline.eventCount) { i throws(Failure) in
        Unit(
          number: i + 1,
          event: try Self.reading { () throws(StoreError) in
            try timeline.event(i + 1)
          })
      } prefix: { n throws(Failure) in
        try Self.reading { () throws(StoreError) in try prefixes.state(at: n) }
      }
    }

    /// A pass over units in memory: prefixes come from states saved along one fold.
    mutating func pass(over units: [Unit]) throws(Failure) -> [Unit] {
      // About 32 states saved along the units, every `spacing`; when they hold more than
      // eight times `savedBytes` (no checkpoint lies between them, as in a log: a salvaged
      // log's search with less folded 1.2-2.4 times as long), every other one goes and the
      // spacing doubles.
      var spacing = max(64, units.count / 32)
      var saved: [ListState] = []
      var bytes = 0
      var state = ListState()
      for (i, u) in units.enumerated() {
        if i % spacing == 0 {
          saved.append(state)
          bytes += state.heldBytes
          while bytes > 8 * savedBytes && saved.count > 1 {
            saved = stride(from: 0, to: saved.count, by: 2).map { saved[$0] }
            spacing *= 2
            bytes = saved.reduce(0) { $0 + $1.heldBytes }
          }
        }
        try? state.apply(u.event)
      }
      folded += units.count
      var extra = 0
      defer { folded += extra }
      return try pass(count: units.count) { i throws(Failure) in
        units[i]
      } prefix: { n throws(Failure) in
        var s = saved[n / spacing]
        for u in units[(n / spacing * spacing)..<n] { try? s.apply(u.event) }
        extra += n % spacing
        return s
      }
    }
  }
}

/// States after the first n events of a log, for prefixes that move backwards: from the
/// checkpoint at or before n, or a state saved while folding from it.
struct LogPrefixes {
  let timeline: Timeline
  /// States saved within the current checkpoint interval, by event number, ascending.
  var saved: [(n: Int, state: ListState, decoder: EventDecoder)] = []
  var interval = -1
  var folded = 0
  /// Bytes the saved states may hold in all, and hold.
  let savedBytes: Int
  var savedHeld = 0

  init(_ timeline: Timeline, savedBytes: Int = Self.savedBytes) {
    self.timeline = timeline
    self.savedBytes = savedBytes
  }

  mutating func state(at n: Int) throws(StoreError) -> ListState {
    let checkpoint = timeline.checkpointSeq(atOrBefore: n)
    if checkpoint != interval {
      saved = []
      savedHeld = 0
      interval = checkpoint
    }
    var (state, decoder, from): (ListState, EventDecoder, Int)
    if let s = saved.last(where: { $0.n <= n }) {
      (state, decoder, from) = (s.state, s.decoder, s.n)
    } else {
      let seek = try timeline.seek(to: checkpoint, cache: true)
      (state, decoder, from) = (seek.state, seek.decoder, checkpoint)
    }
    guard from < n else { return state }
    // Save a few states on the way, so the next (earlier) prefixes fold less: up to 32 per
    // checkpoint interval, as many as `savedBytes` holds (each is a whole state and decoder
    // apart once the fold has written on).
    let room = savedBytes / max(1, state.heldBytes + decoder.heldBytes)
    let spacing = max(
      1_024, (nextCheckpoint(after: checkpoint) - checkpoint) / max(2, min(32, room)))
    // Fold up to each multiple of `spacing`, where the decoder stands right after it.
    var at = from
    while at < n {
      let stop = min(n, (at / spacing + 1) * spacing)
      try timeline.fold(&state, &decoder, from: at + 1, through: stop) { _, _, _, _ in true }
      at = stop
      if at < n && !saved.contains(where: { $0.n == at })
        && savedHeld + state.heldBytes + decoder.heldBytes <= savedBytes
      {
        saved.append((at, state, decoder))
        saved.sort { $0.n < $1.n }
        savedHeld += state.heldBytes + decoder.heldBytes
      }
    }
    folded += n - from
    return state
  }

  /// Bytes the states saved along a search may hold by default: a state or two of a
  /// 100k-item list, which searches as fast as four times more (docs/performance.md).
  package static let savedBytes = 64 << 20

  /// The first checkpoint after event `n`, or the log's end.
  func nextCheckpoint(after n: Int) -> Int {
    timeline.checkpointSeqs.first { $0 > n } ?? timeline.eventCount
  }
}

extension Shrink {
  /// Writes the kept events to a new log at `output` (which must not exist).
  package static func write(_ result: ShrinkResult, to output: String) throws(StoreError) {
    try writeLog(output) { recorder throws(StoreError) in
      for e in result.events { _ = try recorder.record(e) }
    }
  }
}

extension Query {
  /// What the expression's value can depend on: the items it names and whether it reads
  /// the selection; nil when it counts items or rows, which every event can change.
  package var relevance: Relevance? {
    var items: [String] = []
    var selection = false
    func walk(_ node: Node) -> Bool {
      switch node {
      case .literal, .countSections: return true
      case .visible(let r), .expanded(let r), .exists(let r), .level(let r), .parent(let r):
        items.append(r.id)
        return true
      case .row: return false
      case .selected(let r):
        items.append(r.id)
        selection = true
        return true
      case .countSelected:
        selection = true
        return true
      case .countVisible, .countItems: return false
      case .not(let a): return walk(a)
      case .and(let operands), .or(let operands): return operands.allSatisfy(walk)
      case .compare(_, let a, let b): return walk(a) && walk(b)
      }
    }
    return walk(root) ? Relevance(items: items, selection: selection) : nil
  }
}
