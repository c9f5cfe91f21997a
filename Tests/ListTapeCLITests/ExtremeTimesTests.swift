import Foundation
import Testing

/// Times are the app's: any size and any order. The one integer a log keeps as "no time"
/// is refused at the door, the rest come back as they went in, and no output does
/// arithmetic on them that can overflow.
@Suite struct ExtremeTimesTests {
  static let lines = [
    #"{"op":"appendSections","sections":["s"],"t":9223372036854775807}"#,
    #"{"op":"mark","label":"x","t":-9223372036854775808}"#,
    #"{"op":"mark","label":"y","t":-9223372036854775807}"#,
    #"{"op":"mark","label":"z","t":-1}"#,
  ]

  static func record(_ lines: [String], in dir: TempDir) throws -> (String, RunResult) {
    let log = dir.path("t.ltape")
    let input = Data((lines.joined(separator: "\n") + "\n").utf8)
    return (log, try CLI.run(["record", log], input: input))
  }

  @Test func theLogsNoTimeIsMalformedAndTheRestComeBack() throws {
    let dir = try TempDir()
    let (log, recorded) = try Self.record(Self.lines, in: dir)
    #expect(recorded.code == 65)
    #expect(
      recorded.err.contains(
        #"line 2: field "t" must be an integer (milliseconds) from -9223372036854775807 to "#
          + "9223372036854775807, found -9223372036854775808"), "\(recorded.err)")
    let events = try CLI.run(["events", log, "--json"])
    #expect(events.code == 0)
    #expect(events.out == [0, 2, 3].map { Self.lines[$0] + "\n" }.joined())
    let text = try CLI.run(["events", log])
    #expect(text.out.hasPrefix("292278994-08-17T07:12:55.807Z  appendSections  s\n"))
    #expect(text.out.contains("1969-12-31T23:59:59.999Z  mark  \"z\"\n"))
  }

  @Test func statsSaysASpanItCannotSubtract() throws {
    // Before: the span's subtraction overflowed and `stats` trapped (exit 132); the text
    // of a time near -2^63 overflowed too (`events`, `stats`).
    let dir = try TempDir()
    let (log, recorded) = try Self.record([Self.lines[2], Self.lines[3], Self.lines[0]], in: dir)
    #expect(recorded.code == 0)
    let stats = try CLI.run(["stats", log])
    #expect(stats.code == 0, "\(stats.err)")
    #expect(
      stats.out.contains(
        "time span    -292275055-05-16T16:47:04.193Z → 292278994-08-17T07:12:55.807Z "
          + "(more than 106751991167 d 7 h)"), "\(stats.out)")
    let other = try TempDir()
    let (near, _) = try Self.record(
      [#"{"op":"mark","label":"0","t":0}"#, Self.lines[0]], in: other)
    #expect(
      try CLI.run(["stats", near]).out.contains(
        "→ 292278994-08-17T07:12:55.807Z (106751991167 d 7 h)"))
  }
}
