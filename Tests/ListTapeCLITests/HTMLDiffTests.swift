import Foundation
import Testing

/// The page's diff from the previous event is `listtape diff`'s: the module words it with
/// the CLI's own `Differ` and `DiffText`, compiled to WebAssembly. For every event of each
/// session, the lines the page writes (`#diffs`, through the code that draws the diff pane)
/// must be what `listtape diff LOG --from N-1 --to N` prints after its two header lines.
@Suite(
  .serialized,
  .enabled(if: chromiumAvailable(), "chromium is not installed (apt-get install chromium)"))
struct HTMLDiffTests {
  /// Every change the issue names, each at least once: a move within one parent (to the
  /// front and to the back), a move to another parent and section, fields and titles set,
  /// merged and changed, the selection mode both ways, sections moved and deleted, expand,
  /// collapse hiding a selected item, a fault (no change) and a mark.
  static let crafted = [
    #"{"op":"appendSections","sections":["main","side"]}"#,
    #"{"op":"appendItems","section":"main","items":[{"id":"p","expanded":true,"children":["a","b","c"]},"q"]}"#,
    #"{"op":"moveItem","item":"c","before":"a"}"#,
    #"{"op":"moveItem","item":"c","after":"b"}"#,
    #"{"op":"update","item":"a","title":"Alpha","fields":{"size":"3","kind":"file"}}"#,
    #"{"op":"update","item":"a","fields":{"size":"4"}}"#,
    #"{"op":"update","item":"a","title":"A"}"#,
    #"{"op":"configure","multipleSelection":true}"#,
    #"{"op":"select","items":["a","b","q"]}"#,
    #"{"op":"collapse","items":["p"]}"#,
    #"{"op":"expand","items":["p"]}"#,
    #"{"op":"configure","multipleSelection":false}"#,
    #"{"op":"appendItems","section":"side","items":["s1","s2"]}"#,
    #"{"op":"moveItem","item":"b","after":"s1"}"#,
    #"{"op":"moveSection","section":"side","before":"main"}"#,
    #"{"op":"select","items":["a"]}"#,
    #"{"op":"select","items":["s1","s2"]}"#,
    #"{"op":"mark","label":"before the end"}"#,
    #"{"op":"replaceChildren","parent":"p","items":["c","a",{"id":"z","title":"Zed"}]}"#,
    #"{"op":"deleteSections","sections":["side"]}"#,
    #"{"op":"deleteAllItems"}"#,
  ]

  /// The page's lines for each event: `@ N` starts an event.
  static func pageDiffs(_ html: String) throws -> [Int: [String]] {
    let page = try Chromium.dumpDOM(html, hash: "#diffs")
    let text = try #require(
      page.dom.components(separatedBy: "<pre id=\"check\">").last?
        .components(separatedBy: "</pre>").first, "\(page.log.suffix(2000))")
    var out: [Int: [String]] = [:]
    var current: Int?
    for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
      let line = line.replacingOccurrences(of: "&lt;", with: "<")
        .replacingOccurrences(of: "&gt;", with: ">").replacingOccurrences(of: "&amp;", with: "&")
      if line.hasPrefix("@ "), let n = Int(line.dropFirst(2)) {
        current = n
        out[n] = []
      } else if let n = current {
        out[n, default: []].append(line)
      }
    }
    return out
  }

  /// Records `lines`, writes the page, and compares its diff of every event with `listtape
  /// diff`'s; returns how many events changed something.
  @discardableResult
  static func expectPageDiffsMatchTheCLI(
    _ lines: [String], in dir: TempDir, name: String, from: Int = 1,
    sourceLocation: SourceLocation = #_sourceLocation
  ) throws -> Int {
    let jsonl = dir.url.appendingPathComponent(name + ".jsonl")
    try (lines.joined(separator: "\n") + "\n").write(to: jsonl, atomically: true, encoding: .utf8)
    let log = try CLI.record(jsonl, in: dir, name: name + ".ltape")
    let html = dir.path(name + ".html")
    let r = try CLI.run(["html", log, "-o", html, "--from", "\(from)"])
    #expect(r.code == 0, "\(r.err)", sourceLocation: sourceLocation)
    let page = try pageDiffs(html)
    #expect(page.count == lines.count - from + 1, sourceLocation: sourceLocation)
    var changed = 0
    for n in from...lines.count {
      let cli = try CLI.run(["diff", log, "--from", "\(n - 1)", "--to", "\(n)"])
      #expect(cli.code == 0, "\(cli.err)", sourceLocation: sourceLocation)
      let expected = cli.out.split(separator: "\n", omittingEmptySubsequences: true)
        .dropFirst(2).map(String.init)
      let got = page[n] ?? []
      let context =
        "\(name), event \(n) (\(lines[n - 1])):\npage:\n\(got.joined(separator: "\n"))\n"
        + "listtape diff:\n\(expected.joined(separator: "\n"))"
      #expect(got == expected, "\(context)", sourceLocation: sourceLocation)
      if got != expected { break }
      if !(expected.last ?? "").hasPrefix("no differences") { changed += 1 }
    }
    return changed
  }

  @Test func everyChangeKindReadsAsListtapeDiff() throws {
    let dir = try TempDir()
    let changed = try Self.expectPageDiffsMatchTheCLI(Self.crafted, in: dir, name: "crafted")
    // Only the mark and the fault-free no-op leave nothing to say.
    #expect(changed >= Self.crafted.count - 2)
    let html = dir.path("crafted.html")
    // The move within one parent, as the issue found the old page wording it.
    let moved = try Chromium.dumpDOM(html, hash: "#event=3").dom
    #expect(
      moved.contains(
        "<div class=\"d-line d-mod\">~   c moved: under p, after b → under p, first</div>"))
    let mode = try Chromium.dumpDOM(html, hash: "#event=8").dom
    #expect(mode.contains("<div class=\"d-line d-mod\">selection mode single → multiple</div>"))
    let fields = try Chromium.dumpDOM(html, hash: "#event=6").dom
    #expect(
      fields.contains(
        "fields a: {kind: \"file\", size: \"3\"} → {kind: \"file\", size: \"4\"}"))
    // The row itself spells fields as `show` does.
    #expect(fields.contains("<span class=\"fields\">[kind=file, size=4]</span>"))
  }

  @Test func randomSessionsReadAsListtapeDiff() throws {
    let dir = try TempDir()
    for seed in [11, 12] {
      try Self.expectPageDiffsMatchTheCLI(
        try RandomSessions.generated(seed: seed, events: 150), in: dir, name: "gen\(seed)")
    }
    try Self.expectPageDiffsMatchTheCLI(
      RandomSessions.shuffled(try RandomSessions.generated(seed: 13, events: 150), seed: 13),
      in: dir, name: "shuffled")
  }

  /// A window's first event is diffed against the checkpoint the page starts from.
  @Test func aWindowStartsFromItsCheckpoint() throws {
    let dir = try TempDir()
    let text = try String(contentsOf: CLI.sample("symbols"), encoding: .utf8)
    let lines = text.split(separator: "\n").map(String.init).filter { !$0.isEmpty }
    try Self.expectPageDiffsMatchTheCLI(lines, in: dir, name: "window", from: 60)
  }

  /// The script carries no differ of its own any more.
  @Test func thePageHasNoJavaScriptDiffer() throws {
    let dir = try TempDir()
    let html = try HTMLTests.page("form", in: dir)
    let file = try String(contentsOfFile: html, encoding: .utf8)
    for name in ["function diff(", "placeText", "fieldsText", "notInLIS"] {
      #expect(!file.contains(name), "\(name)")
    }
    #expect(file.contains("lt_step(n, 1)"))
  }
}
