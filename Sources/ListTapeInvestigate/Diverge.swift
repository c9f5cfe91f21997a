import ListTapeLog
import ListTapeModel
import ListTapeRead
import ListTapeStore

/// Where two recordings first disagree.
package struct Divergence: Sendable {
  /// The first event after which the states differ; nil when they never do.
  package var event: Int?
  /// The events at that point in each recording (nil past a recording's end).
  package var eventA: Event?
  /// The event at that point in the second recording.
  package var eventB: Event?
  /// The states after it in each recording.
  package var stateA: ListState?
  /// The second recording's state after it.
  package var stateB: ListState?
  /// The first event whose stored bytes differ (before it, the recordings are identical).
  package var firstDifferentRecord: Int?
  /// Events folded and state fingerprints compared while searching.
  package var comparedStates: Int
  /// The events whose states were not compared, in order: those after events lost in a
  /// salvage (in either recording) until a recovery point restores them. Empty when every
  /// state was compared.
  package var notCompared: [ClosedRange<Int>] = []

  /// Whether the answer rests only on recorded states: no state before `event` (before the
  /// end, when the states never differ) went uncompared. When `event` is nil and some did,
  /// the recordings are only known to agree where they were compared.
  package var exact: Bool {
    guard let first = notCompared.first else { return true }
    guard let event else { return false }
    return first.lowerBound > event
  }
}

/// Finds the first event where two recordings' states differ without diffing every state:
/// identical records cannot make equal states differ, so it compares stored bytes until
/// they disagree, then folds both and fingerprints the states only at events whose
/// operations differ.
package enum Diverge {
  /// Where recordings `a` and `b` first disagree. After events lost in a salvage (in either),
  /// only states both recordings hold as recorded are compared (`findAcrossGaps`).
  package static func find(_ a: Timeline, _ b: Timeline) throws(StoreError) -> Divergence {
    if !a.gaps.isEmpty || !b.gaps.isEmpty { return try findAcrossGaps(a, b) }
    let common = min(a.eventCount, b.eventCount)
    guard
      let first = try a.firstDifferentEvent(b, through: common)
        ?? (a.eventCount != b.eventCount ? common + 1 : nil)
    else {
      return Divergence(comparedStates: 0)
    }
    var (stateA, decoderA) = try a.seek(to: first - 1)
    var stateB = stateA
    var eventsA = EventStream(a, decoder: decoderA, from: first, through: a.eventCount)
    var eventsB = EventStream(
      b, decoder: try b.seek(to: first - 1).decoder, from: first, through: b.eventCount)
    var compared = 0
    var n = first
    while true {
      let ea = try eventsA.next()
      let eb = try eventsB.next()
      if ea == nil && eb == nil { break }
      if let ea { try? stateA.apply(ea) }
      if let eb { try? stateB.apply(eb) }
      if ea?.operation != eb?.operation {
        compared += 1
        if stateA != stateB {
          return Divergence(
            event: n, eventA: ea, eventB: eb, stateA: stateA, stateB: stateB,
            firstDifferentRecord: first, comparedStates: compared)
        }
      }
      n += 1
    }
    return Divergence(firstDifferentRecord: first, comparedStates: compared)
  }

  /// One recording's events in order, read a window at a time: at most `window` events, and
  /// no more than name `windowIDs` item ids beside the last one (a window of 4,096 events
  /// of 2M items each held gigabytes of `String`s).
  struct EventStream {
    static let window = 4_096
    static let windowIDs = 1 << 20

    let timeline: Timeline
    /// Item ids a window names at most beside its last event.
    let windowIDs: Int
    var decoder: EventDecoder
    /// A state that only follows the log's ids (`Timeline.forEachEvent(from:through:ids:…)`).
    var ids = ListState()
    /// The next event to read from the log, and the last.
    var from: Int
    let through: Int
    var window: [Event] = []
    var taken = 0

    /// Events `from...through` of `timeline` (those it has), read with `decoder` (standing
    /// after event `from - 1`).
    init(
      _ timeline: Timeline, decoder: EventDecoder, from: Int, through: Int,
      windowIDs: Int = Self.windowIDs
    ) {
      self.timeline = timeline
      self.decoder = decoder
      self.from = from
      self.through = min(through, timeline.eventCount)
      self.windowIDs = windowIDs
    }

    /// The next event, or nil after the last.
    mutating func next() throws(StoreError) -> Event? {
      while taken == window.count {
        window.removeAll(keepingCapacity: true)
        taken = 0
        guard from <= through else { return nil }
        var named = 0
        var stoppedAfter: Int?
        let ask = min(through, from + Self.window - 1)
        try timeline.forEachEvent(from: from, through: ask, ids: &ids, decoder: &decoder) {
          seq, e in
          window.append(e)
          named += e.operation.itemIDCount
          if named < windowIDs { return true }
          stoppedAfter = seq
          return false
        }
        // The decoder stands after the last event handed, or after `ask` (a window whose
        // events a salvage lost hands none of them).
        from = (stoppedAfter ?? ask) + 1
      }
      taken += 1
      return window[taken - 1]
    }
  }

  /// `find` when either recording lost events in a salvage: the states both hold as the
  /// recorded ones come in runs (`comparable`); each run starts from both recordings'
  /// exact states (compared there) and folds on, comparing where the events differ. The
  /// first difference found is the answer; when there is none, the first state that could
  /// not be compared is where they part, and the answer says so (`exact` false).
  /// - Complexity: a seek per run and recording, then a fold of both through the runs.
  static func findAcrossGaps(_ a: Timeline, _ b: Timeline) throws(StoreError) -> Divergence {
    let end = max(a.eventCount, b.eventCount)
    let runs = comparable(a, b, through: end)
    var result = Divergence(comparedStates: 0)
    var covered = 0
    for run in runs {
      if run.lowerBound > covered { result.notCompared.append(covered...(run.lowerBound - 1)) }
      covered = run.upperBound + 1
    }
    if covered <= end { result.notCompared.append(covered...end) }
    result.firstDifferentRecord = result.notCompared.first?.lowerBound
    for run in runs {
      var (stateA, decoderA) = try a.seek(to: min(run.lowerBound, a.eventCount))
      var (stateB, decoderB) = try b.seek(to: min(run.lowerBound, b.eventCount))
      result.comparedStates += 1
      if stateA != stateB {
        result.event = run.lowerBound
        result.eventA = try? a.event(run.lowerBound)
        result.eventB = try? b.event(run.lowerBound)
        (result.stateA, result.stateB) = (stateA, stateB)
        return result
      }
      let from = run.lowerBound + 1
      var eventsA = EventStream(a, decoder: decoderA, from: from, through: run.upperBound)
      var eventsB = EventStream(b, decoder: decoderB, from: from, through: run.upperBound)
      for n in from..<(run.upperBound + 1) {
        let ea = try eventsA.next()
        let eb = try eventsB.next()
        if ea != eb, result.firstDifferentRecord.map({ $0 > n }) ?? true {
          result.firstDifferentRecord = n
        }
        if let ea { try? stateA.apply(ea) }
        if let eb { try? stateB.apply(eb) }
        if ea?.operation != eb?.operation {
          result.comparedStates += 1
          if stateA != stateB {
            (result.event, result.eventA, result.eventB) = (n, ea, eb)
            (result.stateA, result.stateB) = (stateA, stateB)
            return result
          }
        }
      }
    }
    result.event = result.notCompared.first?.lowerBound
    if let n = result.event {
      result.eventA = try? a.event(n)
      result.eventB = try? b.event(n)
    }
    return result
  }

  /// The runs of states (0 the empty list, N the state after event N, through `end`) that
  /// both recordings hold as the recorded ones; past a recording's last event its state is
  /// its last one.
  static func comparable(_ a: Timeline, _ b: Timeline, through end: Int) -> [ClosedRange<Int>] {
    func runs(_ t: Timeline) -> [ClosedRange<Int>] {
      var out = t.reader.exactStretches.map { Int($0.start)...Int($0.end) }
      if let last = out.last, last.upperBound == t.eventCount, end > t.eventCount {
        out[out.count - 1] = last.lowerBound...end
      }
      return out
    }
    let x = runs(a)
    let y = runs(b)
    var out: [ClosedRange<Int>] = []
    var i = 0
    var j = 0
    while i < x.count && j < y.count {
      let lo = max(x[i].lowerBound, y[j].lowerBound)
      let hi = min(x[i].upperBound, y[j].upperBound)
      if lo <= hi { out.append(lo...hi) }
      if x[i].upperBound < y[j].upperBound { i += 1 } else { j += 1 }
    }
    return out
  }

  /// The first event number ≤ `through` whose stored record bytes differ, comparing the two
  /// logs window by window (one window of one log held in memory).
  static func firstDifferentRecord(_ a: Timeline, _ b: Timeline, through: Int) throws(StoreError)
    -> Int?
  {
    let window = LogEvents.window
    var next = 1
    var bytes: [UInt8] = []
    var ends: [Int] = []
    while next <= through {
      let end = min(through, next + window - 1)
      bytes.removeAll(keepingCapacity: true)
      ends.removeAll(keepingCapacity: true)
      try a.rawRecords(from: next, through: end) { _, record in
        bytes.append(contentsOf: record)
        ends.append(bytes.count)
        return true
      }
      var found: Int?
      try b.rawRecords(from: next, through: end) { seq, record in
        let i = seq - next
        let start = i == 0 ? 0 : ends[i - 1]
        let same = bytes.withUnsafeBytes { all in
          ends[i] - start == record.count
            && (record.isEmpty
              || memcmpEqual(UnsafeRawBufferPointer(rebasing: all[start..<ends[i]]), record))
        }
        if !same {
          found = seq
          return false
        }
        return true
      }
      if let found { return found }
      next = end + 1
    }
    return nil
  }

  static func memcmpEqual(_ x: UnsafeRawBufferPointer, _ y: UnsafeRawBufferPointer) -> Bool {
    guard x.count == y.count else { return false }
    return x.elementsEqual(y)
  }
}

extension Timeline {
  /// The first event number ≤ `through` at which the two logs' events differ (nil if none
  /// does). Two 1.0 logs compare stored record bytes. Two 2.0 logs compare frame
  /// fingerprints (headers only) while their frames are the same, then decoded events from
  /// the first frame that differs; a 1.0 and a 2.0 log compare decoded events.
  func firstDifferentEvent(_ other: Timeline, through: Int) throws(StoreError) -> Int? {
    if formatMajor == 1 && other.formatMajor == 1 {
      return try Diverge.firstDifferentRecord(self, other, through: through)
    }
    var start = 1
    if formatMajor >= 2 && other.formatMajor >= 2 {
      guard let s = try firstDifferentFrame(other, through: through) else { return nil }
      start = s
    }
    var eventsA = Diverge.EventStream(
      self, decoder: try decoder(after: start - 1), from: start, through: through)
    var eventsB = Diverge.EventStream(
      other, decoder: try other.decoder(after: start - 1), from: start, through: through)
    for n in start..<(through + 1) {
      let ea = try eventsA.next()
      let eb = try eventsB.next()
      if ea == nil && eb == nil { return nil }
      if ea != eb { return n }
    }
    return nil
  }

  /// Where the two 2.0 logs' frames first differ (the first event of the earlier of the two
  /// frames), or nil when their frames are the same through event `through`.
  func firstDifferentFrame(_ other: Timeline, through: Int) throws(StoreError) -> Int? {
    let window = 1 << 20
    var next = 1
    while next <= through {
      let end = min(through, next + window - 1)
      let a: [FrameFingerprint]
      let b: [FrameFingerprint]
      do {
        a = try reader.frameFingerprints(from: UInt64(next), through: UInt64(end))
        b = try other.reader.frameFingerprints(from: UInt64(next), through: UInt64(end))
      } catch {
        throw .log(error)
      }
      for (x, y) in zip(a, b) where x != y { return Int(min(x.firstSeq, y.firstSeq)) }
      if a.count != b.count {
        let shorter = a.count < b.count ? a : b
        return shorter.last.map { Int($0.firstSeq) + $0.eventCount } ?? next
      }
      // Frames may run past `end`: go on after the last event both have read the same.
      let covered = a.last.map { Int($0.firstSeq) + $0.eventCount - 1 } ?? end
      next = max(end, covered) + 1
    }
    return nil
  }
}
