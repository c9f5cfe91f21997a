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
    var decoderB = try b.seek(to: first - 1).decoder
    var idsA = ListState()
    var idsB = ListState()
    var compared = 0
    var n = first
    let window = 4_096
    while n <= max(a.eventCount, b.eventCount) {
      let end = n + window - 1
      var eventsA: [Event] = []
      try a.forEachEvent(from: n, through: end, ids: &idsA, decoder: &decoderA) { _, e in
        eventsA.append(e)
        return true
      }
      var eventsB: [Event] = []
      try b.forEachEvent(from: n, through: end, ids: &idsB, decoder: &decoderB) { _, e in
        eventsB.append(e)
        return true
      }
      let count = max(eventsA.count, eventsB.count)
      guard count > 0 else { break }
      for i in 0..<count {
        let ea = i < eventsA.count ? eventsA[i] : nil
        let eb = i < eventsB.count ? eventsB[i] : nil
        if let ea { try? stateA.apply(ea) }
        if let eb { try? stateB.apply(eb) }
        if ea?.operation != eb?.operation {
          compared += 1
          if stateA != stateB {
            return Divergence(
              event: n + i, eventA: ea, eventB: eb, stateA: stateA, stateB: stateB,
              firstDifferentRecord: first, comparedStates: compared)
          }
        }
      }
      n += count
    }
    return Divergence(firstDifferentRecord: first, comparedStates: compared)
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
      var idsA = ListState()
      var idsB = ListState()
      result.comparedStates += 1
      if stateA != stateB {
        result.event = run.lowerBound
        result.eventA = try? a.event(run.lowerBound)
        result.eventB = try? b.event(run.lowerBound)
        (result.stateA, result.stateB) = (stateA, stateB)
        return result
      }
      var n = run.lowerBound + 1
      let window = 4_096
      while n <= run.upperBound {
        let last = min(run.upperBound, n + window - 1)
        var eventsA: [Event] = []
        try a.forEachEvent(from: n, through: last, ids: &idsA, decoder: &decoderA) { _, e in
          eventsA.append(e)
          return true
        }
        var eventsB: [Event] = []
        try b.forEachEvent(from: n, through: last, ids: &idsB, decoder: &decoderB) { _, e in
          eventsB.append(e)
          return true
        }
        for i in 0...(last - n) {
          let ea = i < eventsA.count ? eventsA[i] : nil
          let eb = i < eventsB.count ? eventsB[i] : nil
          if ea != eb, result.firstDifferentRecord.map({ $0 > n + i }) ?? true {
            result.firstDifferentRecord = n + i
          }
          if let ea { try? stateA.apply(ea) }
          if let eb { try? stateB.apply(eb) }
          if ea?.operation != eb?.operation {
            result.comparedStates += 1
            if stateA != stateB {
              (result.event, result.eventA, result.eventB) = (n + i, ea, eb)
              (result.stateA, result.stateB) = (stateA, stateB)
              return result
            }
          }
        }
        n = last + 1
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
    let window = 4_096
    var next = start
    var decoderA = try decoder(after: start - 1)
    var decoderB = try other.decoder(after: start - 1)
    var idsA = ListState()
    var idsB = ListState()
    var events: [Event] = []
    while next <= through {
      let end = min(through, next + window - 1)
      events.removeAll(keepingCapacity: true)
      try forEachEvent(from: next, through: end, ids: &idsA, decoder: &decoderA) { _, e in
        events.append(e)
        return true
      }
      var found: Int?
      try other.forEachEvent(from: next, through: end, ids: &idsB, decoder: &decoderB) { seq, e in
        let i = seq - next
        if i >= events.count || events[i] != e {
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
