import ListTapeModel

/// Where two recordings first disagree.
public struct Divergence: Sendable {
  /// The first event after which the states differ; nil when they never do.
  public var event: Int?
  /// The events at that point in each recording (nil past a recording's end).
  public var eventA: Event?
  public var eventB: Event?
  public var stateA: ListState?
  public var stateB: ListState?
  /// The first event whose stored bytes differ (before it, the recordings are identical).
  public var firstDifferentRecord: Int?
  /// Events folded and state fingerprints compared while searching.
  public var comparedStates: Int
}

/// Finds the first event where two recordings' states differ without diffing every state:
/// identical records cannot make equal states differ, so it compares stored bytes until
/// they disagree, then folds both and fingerprints the states only at events whose
/// operations differ.
public enum Diverge {
  public static func find(_ a: Timeline, _ b: Timeline) throws(ReplayError) -> Divergence {
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
    var compared = 0
    var n = first
    let window = 4_096
    while n <= max(a.eventCount, b.eventCount) {
      let end = n + window - 1
      var eventsA: [Event] = []
      try a.scanEvents(from: n, through: end, decoder: &decoderA) { _, e in
        eventsA.append(e)
        return true
      }
      var eventsB: [Event] = []
      try b.scanEvents(from: n, through: end, decoder: &decoderB) { _, e in
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

  /// The first event number ≤ `through` whose stored record bytes differ, comparing the two
  /// logs window by window (one window of one log held in memory).
  static func firstDifferentRecord(_ a: Timeline, _ b: Timeline, through: Int) throws(ReplayError)
    -> Int?
  {
    let window = 65_536
    var next = 1
    var bytes: [UInt8] = []
    var ends: [Int] = []
    while next <= through {
      let end = min(through, next + window - 1)
      bytes.removeAll(keepingCapacity: true)
      ends.removeAll(keepingCapacity: true)
      try a.scan(from: next, through: end) { _, record in
        bytes.append(contentsOf: record)
        ends.append(bytes.count)
        return true
      }
      var found: Int?
      try b.scan(from: next, through: end) { seq, record in
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
