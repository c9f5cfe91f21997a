import Foundation
import ListTapeSamples
import Testing

@testable import ListTapeModel

/// The one-pass reader of common JSON lines (`FastEventLine`) against the JSON tree
/// (`Event(treeLine:)`): whatever the fast path takes, the tree reads as the same event;
/// everything else it declines, so errors stay the tree's.
@Suite struct FastEventLineTests {
  /// What the fast path gives for `line`, after checking it against the tree.
  @discardableResult
  static func agree(_ line: String, sourceLocation: SourceLocation = #_sourceLocation) -> Event? {
    var text = line
    return text.withUTF8 { utf8 -> Event? in
      let raw = UnsafeRawBufferPointer(utf8)
      let fast = FastEventLine.decode(raw)
      let tree = Result { () throws(MalformedEvent) in try Event(treeLine: raw) }
      if let fast {
        #expect(
          (try? tree.get()) == fast, "the fast path read \(line) otherwise",
          sourceLocation: sourceLocation)
      }
      // The public entry gives the tree's answer either way.
      let entry = Result { () throws(MalformedEvent) in try Event(jsonLine: raw) }
      #expect(
        (try? entry.get()) == (try? tree.get()), "\(line)", sourceLocation: sourceLocation)
      if case .failure(let a) = entry, case .failure(let b) = tree {
        #expect(a == b, sourceLocation: sourceLocation)
      }
      return fast
    }
  }

  /// The lines of generated sessions of each id shape, batches, sites and big outlines
  /// included: the fast path takes all but the batches and nested items, and agrees.
  @Test(arguments: IdShape.allCases)
  func generatedSessionsReadAlike(shape: IdShape) {
    var lines = 0
    var taken = 0
    SampleSession.generate(
      events: 20_000, seed: 5, maxItems: 5_000, opening: .outline(items: 2_000, shape: shape),
      sites: .init(count: 30)
    ) { event in
      lines += 1
      if Self.agree(event.jsonLine) != nil { taken += 1 }
    }
    #expect(lines == 20_000)
    #expect(Double(taken) >= 0.9 * Double(lines), "\(taken) of \(lines) taken")
  }

  /// Every sample and golden JSON Lines file of the repository.
  @Test func recordedFilesReadAlike() throws {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
      .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Logs")
    let files =
      FileManager.default.enumerator(atPath: root.path)?.compactMap { $0 as? String }
      .filter { $0.hasSuffix(".jsonl") } ?? []
    #expect(files.count >= 4)
    for file in files {
      let text = try String(contentsOf: root.appendingPathComponent(file), encoding: .utf8)
      for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
        Self.agree(String(line))
      }
    }
  }

  /// Corners a stranger writes: each either read as the tree reads it or declined.
  @Test func cornersAreReadAsTheTreeReadsThem() {
    let taken = [
      #"{"op":"select","items":["a"]}"#,
      #" { "op" : "select" , "items" : [ "a" , "b" ] , "t" : -0 } "# + "\r",
      #"{"items":["a"],"op":"expand","t":9223372036854775807}"#,
      #"{"op":"select","items":["a"],"t":-9223372036854775807}"#,
      #"{"op":"deselect"}"#,
      #"{"op":"deselect","items":[]}"#,
      #"{"op":"configure","multipleSelection":false}"#,
      #"{"op":"mark","label":""}"#,
      #"{"op":"update","item":"a"}"#,
      #"{"op":"update","item":"a","title":"","fields":{}}"#,
      #"{"op":"update","item":"a","fields":{"k":"v","w":"x"},"site":"F.swift:1 f()"}"#,
      #"{"op":"appendItems","items":[],"section":"s"}"#,
      #"{"op":"insertItems","items":["x"],"after":"a"}"#,
      #"{"op":"moveSection","section":"s","before":"t"}"#,
      #"{"op":"insertSections","sections":["s"],"after":"t"}"#,
      #"{"op":"applySectionSnapshot","section":"s","items":["a"]}"#,
      #"{"op":"replaceChildren","parent":"p","items":["a"]}"#,
      #"{"op":"deleteAllItems","title":"ignored"}"#,
      #"{"op":"select","items":["a\u007f"]}"#.replacingOccurrences(of: "\\u007f", with: "\u{7F}"),
    ]
    for line in taken { #expect(Self.agree(line) != nil, "declined \(line)") }
    let declined = [
      "", "[]", "{}", #"{"op":"select"}"#, #"{"op":"select","items":["a"],}"#,
      #"{"op":"select","items":["a"]} x"#, #"{"op":"select","items":["a"]}{}"#,
      #"{"op":"select","op":"expand","items":["a"]}"#, #"{"op":"select","items":[""]}"#,
      #"{"op":"select","items":["a"],"t":01}"#, #"{"op":"select","items":["a"],"t":1.0}"#,
      #"{"op":"select","items":["a"],"t":1e3}"#, #"{"op":"select","items":["a"],"t":-}"#,
      #"{"op":"select","items":["a"],"t":-9223372036854775808}"#,
      #"{"op":"select","items":["a"],"t":9223372036854775808}"#,
      #"{"op":"select","items":["a"],"t":"1"}"#, #"{"op":"select","items":["a"],"site":""}"#,
      #"{"op":"select","items":["a"],"site":null}"#, #"{"op":"select","items":["\u0061"]}"#,
      #"{"op":"select","items":["é"]}"#, #"{"op":"select","items":["a"],"extra":1}"#,
      #"{"op":"moveItem","item":"a","before":"b","after":"c"}"#, #"{"op":"moveItem","item":"a"}"#,
      #"{"op":"appendItems","items":[{"id":"a"}]}"#, #"{"op":"batch","events":[]}"#,
      #"{"op":"update","item":"a","fields":{"k":"v","k":"w"}}"#,
      #"{"op":"configure","multipleSelection":1}"#, #"{"op":"configure"}"#,
      #"{"op":"unknown","items":["a"]}"#, #"{"op":"appendSections","sections":["a"],"items":[]}"#,
      "{\"op\":\"select\",\"items\":[\"a\tb\"]}", #"{"op":"select","items":["a"]"#,
      #"{"op":"configure","multipleSelection":tru}"#, #"{"op":"select","items":null}"#,
    ]
    for line in declined { #expect(Self.agree(line) == nil, "took \(line)") }
  }

  /// Lines damaged at random (a byte dropped, doubled or replaced by a JSON character):
  /// whatever the fast path still takes, the tree reads alike.
  @Test func damagedLinesReadAlike() {
    var rng = SplitMix64(seed: 11)
    var lines: [String] = []
    SampleSession.generate(
      events: 2_000, seed: 3, maxItems: 1_000, opening: .outline(items: 300, shape: .path),
      sites: .init(count: 5)
    ) { lines.append($0.jsonLine) }
    let alphabet = Array(#"{}[]",:\ -.0123456789eEtrufalsn"#.utf8)
    for _ in 0..<40_000 {
      var bytes = Array(lines[rng.below(lines.count)].utf8)
      for _ in 0...rng.below(2) {
        let at = rng.below(bytes.count)
        switch rng.below(3) {
        case 0: bytes.remove(at: at)
        case 1: bytes.insert(bytes[at], at: at)
        default: bytes[at] = alphabet[rng.below(alphabet.count)]
        }
        if bytes.isEmpty { break }
      }
      Self.agree(String(decoding: bytes, as: UTF8.self))
    }
  }
}
