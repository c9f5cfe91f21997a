import ListTapeModel
import ListTapeSamples
import Testing

@testable import listtape

/// An event's line and its time, written as bytes for `events` (a million lines a
/// listing): the same text the C library's calendar and the words before gave.
@Suite struct RenderEventTests {
  @Test func timesByArithmeticReadAsTheCalendarSpellsThem() {
    let day: Int64 = 86_400_000
    var times: [Int64] = [
      0, 1, 999, 1_000, day - 1, day, 951_782_400_000 - 1, 951_782_400_000,  // 2000-02-29
      68_169_600_000, 4_107_542_400_000,  // 1972-02-29, 2100-03-01 (no leap day in 2100)
      1_764_400_000_016, Render.arithmeticTimes.upperBound - 1,
    ]
    var random = SplitMix64(seed: 7)
    for _ in 0..<20_000 {
      times.append(Int64.random(in: Render.arithmeticTimes, using: &random))
    }
    for ms in times {
      #expect(Render.time(ms) == Render.gmtimeText(ms), "\(ms)")
    }
    #expect(Render.time(0) == "1970-01-01T00:00:00.000Z")
    #expect(Render.time(Render.arithmeticTimes.upperBound - 1) == "9999-12-31T23:59:59.999Z")
    // Outside the arithmetic's years the calendar's own spelling.
    #expect(Render.time(-1) == "1969-12-31T23:59:59.999Z")
    #expect(Render.time(Render.arithmeticTimes.upperBound) == "10000-01-01T00:00:00.000Z")
  }

  @Test(arguments: [false, true])
  func anEventsLineHasItsPartsInOrder(color: Bool) throws {
    let style = Style(enabled: color)
    let event = try Event(
      jsonLine: #"{"op":"select","items":["b"],"t":1600770133120,"site":"A.swift:1 f()"}"#)
    let esc = "\u{1B}["
    let expected =
      color
      ? "\(esc)1m#12\(esc)0m  \(esc)2m2020-09-22T10:22:13.120Z\(esc)0m  \(esc)36mselect\(esc)0m"
        + "  b  \(esc)2mat A.swift:1 f()\(esc)0m"
      : "#12  2020-09-22T10:22:13.120Z  select  b  at A.swift:1 f()"
    #expect(Render.event(event, number: 12, style: style) == expected)
    // No number, no time, no site, no words: the op alone.
    let bare = try Event(jsonLine: #"{"op":"deleteAllItems"}"#)
    #expect(Render.event(bare, number: nil, style: style) == style.cyan("deleteAllItems"))
    var line: [UInt8] = Array("> ".utf8)
    Render.event(bare, number: 3, style: style, into: &line)
    #expect(
      String(decoding: line, as: UTF8.self) == "> " + style.bold("#3") + "  "
        + style.cyan("deleteAllItems"))
  }
  /// Control characters escaped, every other character (`¡` shares the C1 controls' first
  /// byte) kept, the same whether from a `String` or from bytes.
  @Test func visibleTextEscapesControlsOnly() {
    let text = "¡x\u{9B}\u{1B}[2Jé\n\t\r\u{0}\u{7F}😀"
    let expected = #"¡x\u009b\u001b[2Jé\n\t\r\u0000\u007f😀"#
    #expect(Visible.text(text) == expected)
    var bytes: [UInt8] = []
    Visible.append(Array(text.utf8), to: &bytes)
    #expect(String(decoding: bytes, as: UTF8.self) == expected)
    #expect(Visible.text("plain ¡é😀") == "plain ¡é😀")
  }
}
