import Testing

@testable import ListTapeModel

/// The canonical state encoding: equal states, equal bytes; damage is an error.
@Suite struct StateCodecTests {
  static let sample = """
    {"op":"configure","multipleSelection":true}
    {"op":"appendSections","sections":["S","E"]}
    {"op":"appendItems","section":"S","items":[{"id":"p","expanded":true,"title":"P","fields":{"k":"v"},"children":[{"id":"q","children":["r"]},"s"]},"z"]}
    {"op":"select","items":["q","z"]}
    """

  @Test func roundTripAndHash() throws {
    let s = try folded(Self.sample)
    let back = try ListState(encoded: s.encoded())
    #expect(back == s)
    #expect(back.stateHash == s.stateHash)
    #expect(back.json(event: 1) == s.json(event: 1))
    #expect(invariantViolations(back).isEmpty)
  }

  @Test func equalStatesFromDifferentHistoriesEncodeTheSame() throws {
    let a = try folded(Self.sample)
    var b = try folded(
      """
      {"op":"appendSections","sections":["E"]}
      {"op":"insertSections","sections":["S"],"before":"E"}
      {"op":"appendItems","section":"S","items":["z","gone",{"id":"p","children":["s"]}]}
      {"op":"moveItem","item":"p","before":"z"}
      {"op":"insertItems","items":[{"id":"q","children":["r"]}],"before":"s"}
      {"op":"update","item":"p","title":"P","fields":{"k":"v"}}
      {"op":"deleteItems","items":["gone"]}
      {"op":"expand","items":["p"]}
      {"op":"configure","multipleSelection":true}
      {"op":"select","items":["z","q"]}
      """)
    #expect(a == b)
    #expect(a.encoded() == b.encoded())
    #expect(a.stateHash == b.stateHash)
    try b.run(#"{"op":"deselect","items":["q"]}"#)
    #expect(a != b)
    #expect(a.stateHash != b.stateHash)
  }

  @Test func truncatedOrPaddedEncodingsAreErrors() throws {
    let bytes = try folded(Self.sample).encoded()
    for n in 0..<bytes.count {
      #expect(throws: CodecError.self) { try ListState(encoded: Array(bytes[..<n])) }
    }
    #expect(throws: CodecError.self) { try ListState(encoded: bytes + [0]) }
  }
}
