import Foundation
import Testing

/// A log is untrusted text: an id, title, field, label, site or op holding a control
/// character (ESC starting a sequence that clears the screen or retitles the window, a
/// newline, a C1 control) reaches a person's terminal escaped (`\u001b`, `\n`), never as
/// the character; JSON outputs keep it exactly (JSON's own escapes).
@Suite struct ControlCharactersTests {
  static let id = #"a\u001b]0;x\u0007"#  // As JSON writes it: ESC ] 0 ; x BEL.
  static let lines = [
    #"{"op":"appendSections","sections":["s\u001b[2J"]}"#,
    #"{"op":"appendItems","items":[{"id":"\#(id)","title":"t\nu","fields":{"k\t":"v\u009b"}}],"site":"F.swift:1 \u001b[31m"}"#,
    #"{"op":"mark","label":"m\r"}"#,
    #"{"op":"appendItems","items":["\#(id)"]}"#,
    #"{"op":"update","item":"\#(id)","title":"z\u0000"}"#,
    #"{"op":"x\u001b"}"#,
  ]

  /// The bytes a terminal would act on: C0 controls but the newline, DEL, C1 controls.
  static func controls(_ text: String) -> [UInt8] {
    var found: [UInt8] = []
    var previous: UInt8 = 0
    for c in text.utf8 {
      if (c < 0x20 && c != 0x0A) || c == 0x7F || (previous == 0xC2 && (0x80...0x9F).contains(c)) {
        found.append(c)
      }
      previous = c
    }
    return found
  }

  @Test func textOutputsEscapeThemAndJSONKeepsThem() throws {
    let dir = try TempDir()
    let log = dir.path("c.ltape")
    let recorded = try CLI.run(
      ["record", log], input: Data(Self.lines.joined(separator: "\n").utf8))
    #expect(recorded.code == 65)
    #expect(recorded.err.contains(#"line 6: unknown op "x\u001b""#), "\(recorded.err)")
    #expect(recorded.err.contains(#"item "a\u001b]0;x\u0007" already exists"#), "\(recorded.err)")
    let escapedID = #"a\u001b]0;x\u0007"#
    let runs: [([String], [String])] = [
      (["show", log], [escapedID, #""z\u0000""#, #"k\t=v\u009b"#, #"s\u001b[2J"#]),
      (["show", log, "--at", "2"], [#""t\nu""#]),
      (["show", log, "--at", "3"], [#"“m\r”"#]),
      (["events", log], [escapedID, #"at F.swift:1 \u001b[31m"#, #""m\r""#]),
      (["replay", log], [#"item "a\u001b]0;x\u0007" already exists"#]),
      (["diff", log, "--from", "0", "--to", "5"], [escapedID, #"s\u001b[2J"#]),
      (["history", log, "--item", "a\u{1B}]0;x\u{07}"], [escapedID, #""z\u0000""#]),
      (["find", log, "--where", #"exists("\#(Self.id)")"#], [escapedID]),
      (["stats", log], []),
    ]
    for (args, wanted) in runs {
      let r = try CLI.run(args)
      #expect(r.code == 0 || r.code == 3, "\(args): \(r.err)")
      #expect(Self.controls(r.out + r.err).isEmpty, "\(args): \(Self.controls(r.out + r.err))")
      for text in wanted { #expect(r.out.contains(text), "\(args): \(text) in \(r.out)") }
    }
    // JSON keeps every id as it is.
    let json = try CLI.run(["events", log, "--json"])
    #expect(json.out.contains(#""id":"a\u001b]0;x\u0007""#), "\(json.out)")
    let state = try CLI.run(["show", log, "--json"])
    #expect(state.out.contains(#""title":"z\u0000""#), "\(state.out)")
  }
}
