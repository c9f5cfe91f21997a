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

  /// The encoding of `sample` with the one-letter id `from` spelled `to`.
  static func respelled(_ from: Character, as to: Character) throws -> [UInt8] {
    var bytes = try folded(sample).encoded()
    let at = try #require(
      bytes.indices.dropLast().first {
        bytes[$0] == 1 && bytes[$0 + 1] == from.asciiValue
      })
    bytes[at + 1] = try #require(to.asciiValue)
    return bytes
  }

  /// Why decoding `bytes` fails (nil if it does not).
  static func refusal(_ bytes: [UInt8]) -> String? {
    do {
      _ = try ListState(encoded: bytes)
      return nil
    } catch {
      return error.message
    }
  }

  @Test func encodingsThatBreakTheModelsRulesAreRefusedWithTheReason() throws {
    // Another item's id, in another place of the outline (and at another depth).
    #expect(Self.refusal(try Self.respelled("z", as: "q")) == "duplicate item \"q\"")
    #expect(Self.refusal(try Self.respelled("r", as: "z")) == "duplicate item \"z\"")
    #expect(Self.refusal(try Self.respelled("q", as: "p")) == "duplicate item \"p\"")
    // A section's id used twice.
    #expect(Self.refusal(try Self.respelled("E", as: "S")) == "duplicate section \"S\"")
    // An item's id that is a section's id is another namespace: accepted.
    #expect(Self.refusal(try Self.respelled("z", as: "E")) == nil)
  }

  @Test func truncatedOrPaddedEncodingsAreErrors() throws {
    let bytes = try folded(Self.sample).encoded()
    for n in 0..<bytes.count {
      #expect(throws: CodecError.self) { try ListState(encoded: Array(bytes[..<n])) }
    }
    #expect(throws: CodecError.self) { try ListState(encoded: bytes + [0]) }
  }
}
