import Foundation
import Testing

/// `html` writes the log's base64 into the page a piece at a time: the page of a 10M-event
/// log (123 MB) peaked at 375 MB when the log, its base64 and the page were each held whole.
@Suite(
  .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/time"), "needs GNU time"))
struct HTMLMemoryTests {
  @Test func thePageOfABigLogEmbedsItExactlyInBoundedMemory() throws {
    let dir = try TempDir()
    // 24 titles of 1 MB of base64 noise: a log of about 24 MB in 26 events.
    var lines = #"{"op":"appendSections","sections":["s"]}"# + "\n"
    lines += #"{"op":"appendItems","items":["a"]}"# + "\n"
    let random = try #require(FileHandle(forReadingAtPath: "/dev/urandom"))
    defer { try? random.close() }
    for _ in 0..<24 {
      let noise = try #require(try random.read(upToCount: 750_000))
      lines += #"{"op":"update","item":"a","title":""# + noise.base64EncodedString() + "\"}\n"
    }
    let log = dir.path("big.ltape")
    #expect(try CLI.run(["record", log], input: Data(lines.utf8), seconds: 300).code == 0)
    let logBytes = try Data(contentsOf: URL(fileURLWithPath: log))
    #expect(logBytes.count > 20 << 20)

    let page = dir.path("big.html")
    let report = dir.path("peak")
    let r = try runTool(
      "/usr/bin/time", ["-o", report, "-f", "%M", CLI.binary.path, "html", log, "-o", page],
      seconds: 300)
    #expect(r.code == 0, "\(r.err)")
    let text = try String(contentsOfFile: report, encoding: .utf8)
    let peakKiB = text.split(separator: "\n").last.flatMap { Int($0) } ?? Int.max
    // Held whole, the log, its base64 and the page came to about 4.5 times the log.
    #expect(peakKiB < (logBytes.count >> 10) + 24 << 10, "html peaked at \(peakKiB) KiB")

    let html = try Data(contentsOf: URL(fileURLWithPath: page))
    let open = Data(#"id="listtape-log">"#.utf8)
    let start = try #require(html.range(of: open)).upperBound
    let end = try #require(html.range(of: Data("</script>".utf8), in: start..<html.count))
    #expect(Data(base64Encoded: html[start..<end.lowerBound]) == logBytes)
  }
}
