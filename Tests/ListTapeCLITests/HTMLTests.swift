import Foundation
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
    let out = dir.url.appendingPathComponent("dom")
    let err = dir.url.appendingPathComponent("log")
    _ = FileManager.default.createFile(atPath: out.path, contents: nil)
    _ = FileManager.default.createFile(atPath: err.path, contents: nil)
    let process = Process()
    process.executableURL = URL(fileURLWithPath: binary ?? "/usr/bin/chromium")
    process.arguments = [
      "--headless", "--disable-gpu", "--no-sandbox", "--no-first-run",
      "--user-data-dir=\(dir.path("profile"))", "--enable-logging=stderr", "--v=0",
      "--host-resolver-rules=MAP * ~NOTFOUND", "--dump-dom",
      URL(fileURLWithPath: file).absoluteString + hash,
    ]
    process.standardInput = FileHandle.nullDevice
    process.standardOutput = try FileHandle(forWritingTo: out)
    process.standardError = try FileHandle(forWritingTo: err)
    try process.run()
    guard waitForExit(process, seconds: 60) else { throw RecordFailed(message: "chromium hung") }
    return Page(
      dom: String(decoding: try Data(contentsOf: out), as: UTF8.self),
      log: String(decoding: try Data(contentsOf: err), as: UTF8.self))
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

  /// The page folds events in JavaScript between the states the Swift fold embeds; with a
  /// state after every event, the page checks its own fold against each of them.
  @Test(arguments: CLI.sampleNames)
  func javaScriptFoldMatchesTheLog(_ sample: String) throws {
    let dir = try TempDir()
    let html = try Self.page(sample, in: dir, ["--checkpoint-every", "1"])
    let (events, _) = try CLI.foldedStates(CLI.sample(sample))
    let dom = try Chromium.dumpDOM(html, hash: "#selftest").dom
    #expect(dom.contains("selftest: ok, \(events.count) checkpoints"))
  }

  @Test func javaScriptFoldMatchesAGeneratedSession() throws {
    let dir = try TempDir()
    let gen = try CLI.run(["generate", "--events", "1500", "--seed", "7"])
    let log = dir.path("gen.ltape")
    let recorded = try CLI.run(["record", log], input: Data(gen.out.utf8))
    #expect(recorded.code == 0)
    let html = dir.path("gen.html")
    #expect(try CLI.run(["html", log, "-o", html, "--checkpoint-every", "3"]).code == 0)
    let dom = try Chromium.dumpDOM(html, hash: "#selftest").dom
    #expect(dom.contains("selftest: ok, 500 checkpoints"))
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
    // Only the page's own two script elements; the data's markup is escaped in the JSON.
    #expect(file.count(of: "<script") == 2)
    #expect(file.count(of: "</script>") == 2)
    #expect(!file.contains("<img"))
    #expect(!file.contains("<svg"))
    #expect(file.contains(#"\u003cimg src=x onerror="#))
    #expect(!file.contains("\u{2028}"))
    #expect(file.contains(#"\u2028"#))
    // A strict policy: nothing may load, only the page's own script (by hash) runs.
    #expect(
      file.contains(
        #"<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'sha256-"#
      ))
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

  @Test func refusesBeyondTheCapAndTakesAWindow() throws {
    let dir = try TempDir()
    let log = try CLI.record(CLI.sample("symbols"), in: dir)
    let html = dir.path("out.html")
    let big = try CLI.run(["html", log, "-o", html, "--max-events", "50"])
    #expect(big.code == 64)
    #expect(big.err.contains("105 events is more than a page holds (--max-events 50)"))
    #expect(big.err.contains("--from 56"))
    #expect(big.err.contains("listtape cut"))
    #expect(!FileManager.default.fileExists(atPath: html))
    let window = try CLI.run(["html", log, "-o", html, "--max-events", "50", "--from", "60"])
    #expect(window.code == 0, "\(window.err)")
    let dom = try Chromium.dumpDOM(html, hash: "#event=3").dom
    // Clamped to the window: the state before its first event.
    #expect(dom.contains("event 59 of 105"))
    #expect(dom.contains("(the state before the embedded window)"))
    let missing = try CLI.run(["html", log])
    #expect(missing.code == 64)
    #expect(missing.err.contains("--output <file>"))
  }
}

private func jsonEscaped(_ s: String) -> String {
  s.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
}
