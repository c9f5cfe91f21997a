import ListTapeJSON
import ListTapeSamples
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

/// The model's SplitMix64, with the helpers the property tests draw with.
extension SplitMix64 {
  mutating func int(_ upper: Int) -> Int { Int(next() % UInt64(max(upper, 1))) }

  mutating func pick<T>(_ xs: [T]) -> T? { xs.isEmpty ? nil : xs[int(xs.count)] }
}

/// A compact state's bytes (the 2.0 checkpoint layout, segment 0) over a dictionary of
/// `dictionaryCount` entries: its header, then `columns` (sections, levels, flags, entry
/// deltas, strings) as given, so that a test can write any of them wrong.
func compactStateBytes(dictionaryCount: Int, sections: Int, columns: [[UInt8]]) -> [UInt8] {
  var bytes = ByteSink()
  bytes.byte(ListState.compactVersion)
  bytes.varint(0)
  bytes.count(dictionaryCount)
  bytes.byte(0)
  bytes.count(sections)
  for c in columns { bytes.count(c.count) }
  for c in columns { bytes.bytes.append(contentsOf: c) }
  return bytes.bytes
}
