import ListTapeSamples
import Testing

@testable import ListTapeModel

/// An update's title and fields merge on the bytes exactly as on strings: the new title
/// when there is one, the fields merged key by key with the new value winning, in canonical
/// form; keys outside ASCII (where `String` order is not byte order) go the string way.
@Suite struct ItemTextMergeTests {
  /// The merge as `Forest.update` made it before the byte path: decoded, merged as a
  /// dictionary, encoded again.
  static func byStrings(_ old: [UInt8], _ new: [UInt8]) -> [UInt8] {
    let (title, fields) = new.withUnsafeBytes { ItemText.decode($0) }
    let (oldTitle, oldFields) = old.withUnsafeBytes { ItemText.decode($0) }
    var merged = oldFields
    if let fields {
      var f = merged ?? [:]
      for (k, v) in fields { f[k] = v }
      merged = f
    }
    var out: [UInt8] = []
    ItemText.encode(title: title ?? oldTitle, fields: merged, into: &out)
    return out
  }

  static func blob(_ title: String?, _ fields: [String: String]?) -> [UInt8] {
    var out: [UInt8] = []
    ItemText.encode(title: title, fields: fields, into: &out)
    return out
  }

  static func content(_ rng: inout SplitMix64, keys: [String]) -> [UInt8] {
    let title: String? =
      rng.chance(60) ? String(repeating: "t", count: rng.below(3) == 0 ? 200 : 3) : nil
    var fields: [String: String]?
    if rng.chance(70) {
      var f: [String: String] = [:]
      for _ in 0..<rng.below(5) {
        f[keys[rng.below(keys.count)]] = rng.chance(10) ? "" : "v\(rng.below(1000))"
      }
      fields = f
    }
    return blob(title, fields)
  }

  @Test(arguments: [
    ["a", "ab", "b", "badge", "count", "Z", "_x", String(repeating: "k", count: 150)],
    ["a", "é", "e\u{301}", "z", "ñame"],
  ])
  func mergesAsStringsDo(keys: [String]) {
    var rng = SplitMix64(seed: 31)
    let ascii = keys.allSatisfy { $0.utf8.allSatisfy { $0 < 0x80 } }
    for round in 0..<3000 {
      let old = Self.content(&rng, keys: keys)
      let new = Self.content(&rng, keys: keys)
      guard !new.isEmpty else { continue }
      let bytes = old.withUnsafeBytes { o in new.withUnsafeBytes { ItemText.merged(o, $0) } }
      if let bytes {
        #expect(bytes == Self.byStrings(old, new), "round \(round)")
      } else {
        // Only a key outside ASCII sends the merge the string way.
        #expect(!ascii, "round \(round)")
      }
    }
  }

  /// Through the reducer: an update keeps the title it does not give and merges fields.
  @Test func anUpdateKeepsTheOldTitleAndMergesFields() throws {
    var state = ListState()
    try state.apply(Event(.appendSections(["s"])))
    let a = OutlineNode("a", title: "Old", fields: ["badge": "1", "kind": "folder"])
    try state.apply(Event(.appendItems([a], section: "s", parent: nil)))
    try state.apply(Event(.update(item: "a", title: nil, fields: ["badge": "2", "new": "yes"])))
    #expect(state.title(of: "a") == "Old")
    #expect(state.fields(of: "a") == ["badge": "2", "kind": "folder", "new": "yes"])
    try state.apply(Event(.update(item: "a", title: "New", fields: nil)))
    #expect(state.title(of: "a") == "New")
    #expect(state.fields(of: "a") == ["badge": "2", "kind": "folder", "new": "yes"])
    try state.apply(Event(.update(item: "a", title: nil, fields: ["é": "1"])))
    #expect(state.fields(of: "a") == ["badge": "2", "kind": "folder", "new": "yes", "é": "1"])
  }
}
