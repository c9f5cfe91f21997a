import ListTapeJSON
import Testing

@testable import ListTapeModel

/// Folds JSON Lines (blank lines skipped) into a fresh state; any malformed line or fault
/// fails the calling test.
func folded(_ lines: String) throws -> ListState {
  var s = ListState()
  try s.run(lines)
  return s
}

extension ListState {
  /// Applies every non-blank line of `lines` as a JSON event.
  mutating func run(_ lines: String) throws {
    for line in lines.split(separator: "\n", omittingEmptySubsequences: true) {
      if line.allSatisfy({ $0 == " " }) { continue }
      try apply(Event(jsonLine: String(line)))
    }
  }

  /// A section's outline on one line: `.` per level, `+` when expanded, `*` when selected.
  func outline(_ section: String) -> String {
    guard let rows = rows(inSection: section) else { return "<no section \(section)>" }
    return rows.map { r in
      String(repeating: ".", count: r.level) + r.id + (r.expanded ? "+" : "")
        + (r.isSelected ? "*" : "")
    }.joined(separator: " ")
  }
}

/// Applies `line`, expects exactly `expected`, and checks the state did not change.
func expectFault(
  _ s: inout ListState, _ line: String, _ expected: ListFault,
  sourceLocation: SourceLocation = #_sourceLocation
) throws {
  let event = try Event(jsonLine: line)
  let before = s
  let bytes = s.encoded()
  do {
    try s.apply(event)
    Issue.record("expected fault \(expected), the event applied", sourceLocation: sourceLocation)
  } catch {
    #expect(error == expected, sourceLocation: sourceLocation)
  }
  #expect(s == before, sourceLocation: sourceLocation)
  #expect(s.encoded() == bytes, sourceLocation: sourceLocation)
  let problems = invariantViolations(s)
  #expect(problems.isEmpty, "\(problems)", sourceLocation: sourceLocation)
}

/// Decodes `line`, expecting it to be malformed with a message containing `fragment`.
func expectMalformed(
  _ line: String, _ fragment: String, sourceLocation: SourceLocation = #_sourceLocation
) {
  do {
    let e = try Event(jsonLine: line)
    Issue.record("expected malformed, decoded \(e)", sourceLocation: sourceLocation)
  } catch {
    #expect(
      error.message.contains(fragment), "message \"\(error.message)\" lacks \"\(fragment)\"",
      sourceLocation: sourceLocation)
  }
}

/// SplitMix64: a tiny seeded generator, so every property run is reproducible.
struct SplitMix64: RandomNumberGenerator {
  var state: UInt64

  init(seed: UInt64) { state = seed }

  mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }

  mutating func int(_ upper: Int) -> Int { Int(next() % UInt64(max(upper, 1))) }

  mutating func chance(_ percent: Int) -> Bool { int(100) < percent }

  mutating func pick<T>(_ xs: [T]) -> T? { xs.isEmpty ? nil : xs[int(xs.count)] }
}
