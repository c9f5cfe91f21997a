import ListTapeModel
import ListTapeRead
import ListTapeSamples

@testable import ListTapeInvestigate
@testable import ListTapeStore

/// A seeded random session for the property tests: its events, recorded into a log with
/// tight checkpoints, and the state after each prefix folded here directly (the oracle the
/// investigations are held to).
struct LawSession {
  let seed: UInt64
  let events: [Event]
  /// `states[n]`: the state after events 1...n (`states[0]` is the empty list).
  let states: [ListState]
  let timeline: Timeline
  let path: String

  init(seed: UInt64, events count: Int = 400, maxItems: Int = 150) throws {
    self.seed = seed
    var events: [Event] = []
    SampleSession.generate(events: count, seed: seed, maxItems: maxItems) { events.append($0) }
    self.events = events
    var state = ListState()
    var states = [state]
    for e in events {
      try? state.apply(e)
      states.append(state)
    }
    self.states = states
    (timeline, path) = try record(events, "laws-\(seed)")
  }

  /// Ids of items that exist at some point of the session, in order of first appearance.
  func itemIDs() -> [String] {
    var seen = Set<String>()
    var out: [String] = []
    for s in states.striding(every: 10) {
      for section in s.sectionIdentifiers {
        for id in s.allItems(inSection: section) ?? [] where seen.insert(id).inserted {
          out.append(id)
        }
      }
    }
    return out
  }

  /// Up to `most` of `count` random expressions (drawn from `seed`) that hold in the
  /// session's last state, as text and query, in the order drawn.
  func queriesHoldingAtTheEnd(
    _ most: Int, of count: Int, seed: UInt64
  ) throws -> [(text: String, query: Query)] {
    let last = states.last ?? ListState()
    var rng = SplitMix64(seed: seed)
    var out: [(text: String, query: Query)] = []
    for text in expressions(count, &rng) where out.count < most {
      let query = try Query(text)
      if query.holds(in: last) { out.append((text, query)) }
    }
    return out
  }

  /// Random expressions over this session's items and counts, from `rng`.
  func expressions(_ count: Int, _ rng: inout SplitMix64) -> [String] {
    let ids = itemIDs()
    let maxItems = states.map(\.numberOfAllItems).max() ?? 1
    var out: [String] = []
    for _ in 0..<count {
      let id = ids.isEmpty ? "none" : ids[rng.below(ids.count)]
      let threshold = 1 + rng.below(max(1, maxItems))
      out.append(
        [
          #"exists("\#(id)")"#, #"visible("\#(id)")"#, #"selected("\#(id)")"#,
          #"expanded("\#(id)")"#, "count(items) >= \(threshold)",
          "count(visible) > \(threshold / 2)", "count(selected) >= 1",
          #"level("\#(id)") >= 1"#, #"row("\#(id)") >= 3"#, "count(sections) >= 4",
        ][rng.below(10)])
    }
    return out
  }
}

extension Array {
  /// Every `k`th element, then the last.
  func striding(every k: Int) -> [Element] {
    stride(from: 0, to: count, by: k).map { self[$0] } + (last.map { [$0] } ?? [])
  }
}
