import Foundation
import ListTapeModel
import Testing

/// Headless Chromium: loads a page, runs its script, prints the DOM. Network is cut off as
/// well (every host resolves to nothing), so a request could not succeed even if one left.
enum Chromium {
  static var binary: String? { findTool("chromium") ?? findTool("chromium-browser") }

  struct Page {
    var dom: String
    var log: String
  }

  static func dumpDOM(_ file: String, hash: String = "") throws -> Page {
    let dir = try TempDir()
    let r = try runTool(
      binary ?? "/usr/bin/chromium",
      [
        "--headless", "--disable-gpu", "--no-sandbox", "--no-first-run",
        "--user-data-dir=\(dir.path("profile"))", "--enable-logging=stderr", "--v=0",
        "--host-resolver-rules=MAP * ~NOTFOUND",
        // The page inflates the log with the browser's DecompressionStream, then folds in
        // slices: virtual time lets every task run before the DOM is dumped.
        "--virtual-time-budget=600000", "--dump-dom",
        URL(fileURLWithPath: file).absoluteString + hash,
      ])
    return Page(dom: r.out, log: r.err)
  }

  /// Opens `file` with `hash` in a headless Chromium with DevTools on, and polls the list
  /// of its pages (title, address) until `pick` finds in one what the caller waits for;
  /// throws after `seconds`.
  static func watch<T>(
    _ file: String, hash: String, seconds: Double = 300, _ pick: ([String: Any]) -> T?
  ) throws -> T {
    let dir = try TempDir()
    let errURL = dir.url.appendingPathComponent("stderr")
    _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
    let process = Process()
    process.executableURL = URL(fileURLWithPath: binary ?? "/usr/bin/chromium")
    process.arguments = [
      "--headless", "--disable-gpu", "--no-sandbox", "--no-first-run",
      "--user-data-dir=\(dir.path("profile"))", "--host-resolver-rules=MAP * ~NOTFOUND",
      "--remote-debugging-port=0", URL(fileURLWithPath: file).absoluteString + hash,
    ]
    process.standardError = try FileHandle(forWritingTo: errURL)
    process.standardOutput = FileHandle.nullDevice
    try process.run()
    defer {
      process.terminate()
      _ = waitForExit(process, seconds: 10)
    }
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
      let err = String(decoding: (try? Data(contentsOf: errURL)) ?? Data(), as: UTF8.self)
      if let port = err.firstMatch(of: /127\.0\.0\.1:(\d+)/)?.1,
        let list = try? runTool(
          findTool("curl") ?? "/usr/bin/curl", ["-s", "http://127.0.0.1:\(port)/json/list"],
          seconds: 10
        ).out,
        let pages = try? JSONSerialization.jsonObject(with: Data(list.utf8)) as? [[String: Any]]
      {
        for page in pages {
          if let found = pick(page) { return found }
        }
      }
      // Polling the DevTools list: not there yet.
      Thread.sleep(forTimeInterval: 0.2)
    }
    throw RecordFailed(message: "\(file)\(hash): not seen within \(Int(seconds)) s")
  }
}

func chromiumAvailable() -> Bool { toolAvailable("chromium") || Chromium.binary != nil }

extension String {
  /// How many times `needle` occurs.
  func count(of needle: String) -> Int { components(separatedBy: needle).count - 1 }
}

@Suite(
  .serialized,
  .enabled(if: chromiumAvailable(), "chromium is not installed (apt-get install chromium)"))
struct HTMLTests {
  static func page(_ sample: String, in dir: TempDir, _ extra: [String] = []) throws -> String {
    let log = try CLI.record(CLI.sample(sample), in: dir, name: sample + ".ltape")
    let html = dir.path(sample + ".html")
    let r = try CLI.run(["html", log, "-o", html] + extra)
    #expect(r.code == 0, "\(r.err)")
    #expect(r.err.contains("wrote \(html)"))
    return html
  }

  /// The address follows the view (`#event=N`, once the moves stop), so that a reload or a
  /// copied link opens where the person was: the tests' `#at=3,40` moves to event 3, then
  /// to 40, and the page's address becomes `#event=40`.
  @Test func theAddressFollowsTheView() throws {
    let dir = try TempDir()
    let html = try Self.page("symbols", in: dir)
    let url = try Chromium.watch(html, hash: "#at=3,40", seconds: 120) { page -> String? in
      guard let url = page["url"] as? String, url.hasSuffix("#event=40") else { return nil }
      return url
    }
    #expect(url == URL(fileURLWithPath: html).absoluteString + "#event=40")
  }

  /// Times are the app's: one beyond a JavaScript `Date`'s range once threw in the page
  /// ("RangeError: Invalid time value") and left the event's header half drawn.
  @Test func anEventsTimeBeyondADateStillDrawsItsHeader() throws {
    let dir = try TempDir()
    let log = dir.path("t.ltape")
    let lines = [
      #"{"op":"appendSections","sections":["s"],"t":9223372036854775807}"#,
      #"{"op":"appendItems","items":["a"],"t":1600770133120}"#,
    ]
    let recorded = try CLI.run(["record", log], input: Data(lines.joined(separator: "\n").utf8))
    #expect(recorded.code == 0, "\(recorded.err)")
    let html = dir.path("t.html")
    #expect(try CLI.run(["html", log, "-o", html]).code == 0)
    let first = try Chromium.dumpDOM(html, hash: "#event=1")
    #expect(
      first.dom.contains(
        "<span class=\"op\">  appendSections</span><span class=\"dim\">  9223372036854776000 ms"),
      "\(first.log.suffix(2_000))")
    #expect(!first.log.contains("RangeError"))
    let second = try Chromium.dumpDOM(html, hash: "#event=2").dom
    #expect(second.contains("<span class=\"dim\">  2020-09-22T10:22:13.120Z</span>"))
  }

  @Test func rendersTheEventInTheAddress() throws {
    let dir = try TempDir()
    let html = try Self.page("symbols", in: dir)
    let page = try Chromium.dumpDOM(html, hash: "#event=12")
    let dom = page.dom
    #expect(dom.contains("<span>event 12 of 105</span><span class=\"op\">  expand</span>"))
    // Disclosure, indentation, titles.
    #expect(
      dom.contains(
        "<div class=\"row\" data-id=\"header.weather\" style=\"padding-left: 4px;\">"
          + "<span class=\"tri\">▾</span><span class=\"id\">header.weather</span>"
          + "<span class=\"title\">\"Weather\"</span></div>"))
    #expect(dom.contains("data-id=\"sun.min\" style=\"padding-left: 24px;\""))
    #expect(
      dom.contains("<span class=\"tri\">▸</span><span class=\"id\">header.objects-tools</span>"))
    #expect(dom.contains("1 section · 15 items · 11 visible · 0 selected · single selection"))
    // The diff from event 11, and the event list with marks on it.
    #expect(dom.contains("<div class=\"d-line d-mod\">▾ header.weather expanded</div>"))
    #expect(dom.contains("<span class=\"label\">  ◆ expanded</span>"))
    #expect(dom.contains("resources loaded: 0"))
    // Selection and faults.
    let selected = try Chromium.dumpDOM(html, hash: "#event=25").dom
    #expect(selected.contains("<div class=\"row selected\" data-id=\"message\""))
    #expect(selected.contains("<span class=\"check\">✓</span>"))
    let fault = try Chromium.dumpDOM(html, hash: "#event=98").dom
    #expect(
      fault.contains(
        "<div id=\"fault\">✗ fault: event 98: select: item \"message\" is not visible"))
    #expect(fault.contains("<div class=\"tick fault\""))
  }

  /// The page's `#check` folds its whole window with the embedded module and writes the
  /// outcome and state hash of every event; they must be the native reducer's. With a state
  /// embedded after every event it also loads each one and compares it with its fold.
  static func expectPageFoldMatchesNative(
    _ lines: [String], in dir: TempDir, name: String, _ extra: [String] = [],
    sourceLocation: SourceLocation = #_sourceLocation
  ) throws {
    let jsonl = dir.url.appendingPathComponent(name + ".jsonl")
    try (lines.joined(separator: "\n") + "\n").write(to: jsonl, atomically: true, encoding: .utf8)
    let log = try CLI.record(jsonl, in: dir, name: name + ".ltape")
    let html = dir.path(name + ".html")
    let r = try CLI.run(["html", log, "-o", html] + extra)
    #expect(r.code == 0, "\(r.err)", sourceLocation: sourceLocation)
    let page = try Chromium.dumpDOM(html, hash: "#check")
    #expect(
      page.dom.contains("check: ok, \(lines.count) events"), "\(page.log.suffix(2000))",
      sourceLocation: sourceLocation)
    let native = NativeTranscript.of(["#hash"] + lines)
    let expected = stride(from: 0, to: native.count, by: 2).map {
      native[$0] + " " + native[$0 + 1]
    }
    let checked = try #require(
      page.dom.components(separatedBy: "<pre id=\"check\">").last?
        .components(separatedBy: "</pre>").first, sourceLocation: sourceLocation)
    let wasm = checked.replacingOccurrences(of: "&lt;", with: "<")
      .replacingOccurrences(of: "&gt;", with: ">").replacingOccurrences(of: "&amp;", with: "&")
      .split(separator: "\n").map(String.init)
    let difference = NativeTranscript.firstDifference(wasm, expected)
    #expect(difference == nil, "\(name): \(difference ?? "")", sourceLocation: sourceLocation)
  }

  @Test(arguments: CLI.sampleNames)
  func wasmFoldMatchesNativeOnTheSamples(_ sample: String) throws {
    let dir = try TempDir()
    let text = try String(contentsOf: CLI.sample(sample), encoding: .utf8)
    let lines = text.split(separator: "\n").map(String.init).filter { !$0.isEmpty }
    try Self.expectPageFoldMatchesNative(
      lines, in: dir, name: sample, ["--checkpoint-every", "1"])
  }

  /// The conformance corpus as one log: each test's lines that are events (a log holds no
  /// malformed ones), then events that empty the list again for the next.
  @Test func wasmFoldMatchesNativeOnTheConformanceCorpus() throws {
    var lines: [String] = []
    for session in try ConformanceCorpus.sessions() {
      var state = ListState()
      for line in session {
        guard let event = try? Event(jsonLine: line) else { continue }
        lines.append(line)
        try? state.apply(event)
      }
      lines.append(Event(.deleteSections(state.sectionIdentifiers)).jsonLine)
      lines.append(Event(.configure(multipleSelection: false)).jsonLine)
    }
    #expect(lines.count >= 150)
    let dir = try TempDir()
    try Self.expectPageFoldMatchesNative(
      lines, in: dir, name: "corpus", ["--checkpoint-every", "7"])
  }

  @Test func wasmFoldMatchesNativeOnRandomSessions() throws {
    let dir = try TempDir()
    let generated = try RandomSessions.generated(seed: 7, events: 1500)
    try Self.expectPageFoldMatchesNative(
      generated, in: dir, name: "gen", ["--checkpoint-every", "3"])
    let shuffled = RandomSessions.shuffled(
      try RandomSessions.generated(seed: 8, events: 1500), seed: 8)
    try Self.expectPageFoldMatchesNative(shuffled, in: dir, name: "shuffled")
    let deep = RandomSessions.deepChain(depth: 300).filter { (try? Event(jsonLine: $0)) != nil }
    try Self.expectPageFoldMatchesNative(deep, in: dir, name: "deep", ["--checkpoint-every", "50"])
  }

  /// The page draws the last state first and inflates the log's earlier segments after
  /// it: a move made meanwhile waits for them, then draws that event's state (`show`'s),
  /// instead of failing on a frame not yet inflated.
  @Test func aMoveBeforeTheEarlyFramesAreInflatedWaitsForThem() throws {
    let dir = try TempDir()
    let log = dir.path("early.ltape")
    let bin = CLI.binary.path
    // Small outlines restart the dictionary often: the last state's segment is not the first.
    let made = try runTool(
      "/bin/sh",
      [
        "-c",
        "'\(bin)' generate --events 100000 --seed 3 --outline 200 --max-items 2000 "
          + "| '\(bin)' record --quiet '\(log)'",
      ], seconds: 600)
    #expect(made.code == 0, "\(made.err)")
    let html = dir.path("early.html")
    let r = try CLI.run(["html", log, "-o", html], seconds: 600)
    #expect(r.code == 0, "\(r.err)")
    let page = try Chromium.dumpDOM(html, hash: "#early=5")
    let show = try CLI.run(["show", log, "--at", "5", "--json"])
    var json = show.out
    if json.hasSuffix("\n") { json.removeLast() }
    // Compared as Bools: a failure would otherwise print the whole page.
    let waited = page.dom.contains("data-waited=\"1\"")
    let failed = page.dom.contains("data-error")
    let drawn = page.dom.contains("<pre id=\"check\">@ 5 \(HTMLLargeSessionTests.fnv1a(json))")
    #expect(waited, "the move did not wait: \(page.log.suffix(2000))")
    #expect(!failed, "the page failed: \(page.log.suffix(2000))")
    #expect(drawn, "the state drawn at event 5 is not show's")
  }

  /// A move redraws only the rows that changed: the list drawn after moves through other
  /// events is the one a fresh page draws there.
  @Test func theListAfterMovesIsTheListDrawnFresh() throws {
    let dir = try TempDir()
    let html = try Self.page("symbols", in: dir)
    func list(_ dom: String) -> String {
      dom.components(separatedBy: "<div id=\"list\">").last?
        .components(separatedBy: "</section>").first ?? ""
    }
    for (moves, last) in [("105,30,25,12", 12), ("3,60,61,62", 62), ("80,79,40", 40)] {
      let moved = list(try Chromium.dumpDOM(html, hash: "#at=" + moves).dom)
      let fresh = list(try Chromium.dumpDOM(html, hash: "#event=\(last)").dom)
      #expect(moved.contains("class=\"row"), "no rows drawn after \(moves)")
      #expect(moved == fresh, "the list after \(moves) is not the one drawn at \(last)")
    }
  }

  @Test func dataNeverRunsAsScript() throws {
    let dir = try TempDir()
    let img = #"<img src=x onerror="document.body.dataset.pwned=1">"#
    let script = #"</script><script>document.body.dataset.pwned=2</script>"#
    let lines = [
      #"{"op":"appendSections","sections":["</script><script>document.title='pwned'</script>"]}"#,
      #"{"op":"appendItems","items":[{"id":"\#(jsonEscaped(img))","title":"\#(jsonEscaped(script))","#
        + #""fields":{"k<b>":"&amp;\u2028<!--"},"expanded":true,"children":["<svg onload=alert(1)>"]}]}"#,
      #"{"op":"mark","label":"<script>document.body.dataset.pwned=3</script>"}"#,
      #"{"op":"select","items":["<svg onload=alert(1)>"]}"#,
    ]
    let jsonl = dir.path("evil.jsonl")
    try (lines.joined(separator: "\n") + "\n").write(
      toFile: jsonl, atomically: true, encoding: .utf8)
    let log = try CLI.record(URL(fileURLWithPath: jsonl), in: dir)
    let html = dir.path("evil.html")
    #expect(try CLI.run(["html", log, "-o", html]).code == 0)
    let file = try String(contentsOfFile: html, encoding: .utf8)
    // Only the page's own script elements (data, log, module, script): the ids, titles and
    // labels travel inside the log's bytes (base64), never as markup.
    #expect(file.count(of: "<script") == 4)
    #expect(file.count(of: "</script>") == 4)
    #expect(!file.contains("<img"))
    #expect(!file.contains("<svg"))
    #expect(!file.contains("\u{2028}"))
    // The log's name is data too: escaped in the JSON.
    let named = dir.path("<img src=x>.ltape")
    try FileManager.default.copyItem(atPath: log, toPath: named)
    let namedPage = dir.path("named.html")
    #expect(try CLI.run(["html", named, "-o", namedPage]).code == 0)
    let namedFile = try String(contentsOfFile: namedPage, encoding: .utf8)
    #expect(!namedFile.contains("<img"))
    #expect(namedFile.contains(#"\u003cimg src=x\u003e.ltape"#))
    // A strict policy: nothing may load, only the page's own script (by hash) runs and may
    // compile WebAssembly.
    let policy = try #require(
      file.firstMatch(of: /<meta http-equiv="Content-Security-Policy" content="([^"]*)">/)?.1)
    #expect(
      policy.replacing(/'sha256-[A-Za-z0-9+\/]{43}='/, with: "'sha256-…'")
        == "default-src 'none'; script-src 'sha256-…' 'wasm-unsafe-eval'; "
        + "style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'")
    #expect(!file.contains("http://") && !file.contains("https://"))

    let page = try Chromium.dumpDOM(html, hash: "#event=4")
    let dom = page.dom
    #expect(dom.contains("event 4 of 4"))
    #expect(!dom.contains("data-pwned"))
    #expect(!dom.contains("<title>pwned"))
    #expect(!dom.contains("<img"))
    #expect(!dom.contains("<svg"))
    // Shown as text, exactly.
    #expect(
      dom.contains(
        #"<span class="id">&lt;img src=x onerror="document.body.dataset.pwned=1"&gt;</span>"#))
    #expect(
      dom.contains(
        #"<span class="title">"&lt;/script&gt;&lt;script&gt;document.body.dataset.pwned=2&lt;/script&gt;"</span>"#
      ))
    #expect(
      dom.contains(
        #"<span class="id">&lt;svg onload=alert(1)&gt;</span><span class="check">✓</span>"#))
    #expect(dom.contains(#"&lt;/script&gt;&lt;script&gt;document.title='pwned'&lt;/script&gt;"#))
    #expect(dom.contains("resources loaded: 0"))
    #expect(!page.log.contains("Refused to"), "\(page.log)")
  }

  /// The page reads its own copy of the log with the reader's checks: a hand-edited byte
  /// shows the error and no state; a cut copy says how much of the log it holds.
  @Test func aDamagedCopyShowsAnErrorNotAState() throws {
    let dir = try TempDir()
    let html = try Self.page("symbols", in: dir)
    let file = try String(contentsOfFile: html, encoding: .utf8)
    let parts = file.components(separatedBy: "id=\"listtape-log\">")
    #expect(parts.count == 2)
    let rest = parts[1].components(separatedBy: "</script>")
    var log = Array(rest[0])
    // A character in the middle of the frame's payload, changed to another base64 digit.
    let k = log.count / 2
    log[k] = log[k] == "A" ? "B" : "A"
    let edited = dir.path("edited.html")
    try
      (parts[0] + "id=\"listtape-log\">" + String(log) + "</script>"
      + rest.dropFirst().joined(separator: "</script>"))
      .write(toFile: edited, atomically: true, encoding: .utf8)
    let dom = try Chromium.dumpDOM(edited, hash: "#event=12").dom
    #expect(dom.contains("data-error=\"damaged frame at byte "), "\(dom.suffix(3000))")
    #expect(dom.contains("checksum mismatch"))
    #expect(!dom.contains("class=\"row"))
    // Half the log: refused before anything is read.
    let cut = dir.path("cut.html")
    let half = String(rest[0].prefix(rest[0].count / 8 * 4))
    try
      (parts[0] + "id=\"listtape-log\">" + half + "</script>"
      + rest.dropFirst().joined(separator: "</script>"))
      .write(toFile: cut, atomically: true, encoding: .utf8)
    let cutDOM = try Chromium.dumpDOM(cut, hash: "#event=12").dom
    #expect(cutDOM.contains("bytes of log, not "), "\(cutDOM.suffix(3000))")
    #expect(!cutDOM.contains("class=\"row"))
  }

  @Test func refusesBeyondTheCapAndTakesAWindow() throws {
    let dir = try TempDir()
    let log = try CLI.record(CLI.sample("symbols"), in: dir)
    let html = dir.path("out.html")
    // The page folds the log through --to: the guard counts those events.
    let big = try CLI.run(["html", log, "-o", html, "--max-events", "50"])
    #expect(big.code == 64)
    #expect(big.err.contains("105 events is more than a page holds (--max-events 50)"))
    #expect(big.err.contains("earlier --to"))
    #expect(big.err.contains("listtape cut"))
    #expect(!FileManager.default.fileExists(atPath: html))
    let window = try CLI.run(["html", log, "-o", html, "--from", "60", "--to", "80"])
    #expect(window.code == 0, "\(window.err)")
    let dom = try Chromium.dumpDOM(html, hash: "#event=3").dom
    // Clamped to the window: the state before its first event.
    #expect(dom.contains("event 59 of 105"))
    #expect(dom.contains("(the state before the window)"))
    #expect(dom.contains("events 60…80 of 105"))
    let end = try Chromium.dumpDOM(html, hash: "#event=100").dom
    #expect(end.contains("event 80 of 105"))
    let missing = try CLI.run(["html", log])
    #expect(missing.code == 64)
    #expect(missing.err.contains("--output <file>"))
  }
}

private func jsonEscaped(_ s: String) -> String {
  s.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
}
