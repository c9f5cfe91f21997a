import Foundation

/// Logs shared by the investigation tests, recorded once per test run.
enum Planted {
  /// The event number of the planted bug: a sixth section appears.
  static let event = 12_345
  static let events = 20_000

  /// A 20,000-event generated session (`clean`) and the same session with an
  /// `appendSections` planted at `event` (`buggy`, 20,001 events).
  static let logs: Result<(buggy: String, clean: String), any Error> = Result {
    let dir = try TempDir()
    keep.append(dir)
    let generated = try CLI.run(["generate", "--events", String(events), "--seed", "7"])
    guard generated.code == 0 else {
      throw RecordFailed(message: "generate exited \(generated.code)")
    }
    var lines = generated.out.split(separator: "\n").map(String.init)
    let clean = dir.path("clean.ltape")
    try record(lines, to: clean)
    lines.insert(#"{"op":"appendSections","sections":["zzz-bug"]}"#, at: event - 1)
    let buggy = dir.path("buggy.ltape")
    try record(lines, to: buggy)
    return (buggy, clean)
  }

  nonisolated(unsafe) private static var keep: [TempDir] = []

  private static func record(_ lines: [String], to path: String) throws {
    let r = try CLI.run(["record", path], input: Data((lines.joined(separator: "\n") + "\n").utf8))
    guard r.code == 0 else { throw RecordFailed(message: "record exited \(r.code)") }
  }
}

/// A small handmade session for exact output: a list of devices and communication items.
enum Handmade {
  static let lines = [
    #"{"op":"appendSections","sections":["main"]}"#,
    #"{"op":"appendItems","items":[{"id":"Communication","children":["mic","phone"]},{"id":"Devices","children":["mouse"]},"Weather"],"section":"main"}"#,
    #"{"op":"expand","items":["Communication"]}"#,
    #"{"op":"select","items":["mic"]}"#,
    #"{"op":"mark","label":"before"}"#,
    #"{"op":"deleteItems","items":["phone"]}"#,
    #"{"op":"appendItems","items":["keyboard"],"parent":"Devices"}"#,
    #"{"op":"moveItem","item":"mic","after":"keyboard"}"#,
    #"{"op":"expand","items":["Devices"]}"#,
    #"{"op":"collapse","items":["Communication"]}"#,
    #"{"op":"update","item":"Weather","title":"Forecast"}"#,
    #"{"op":"select","items":["keyboard"]}"#,
  ]

  /// Records the session (or `lines`) into `dir` and returns the log's path.
  static func record(in dir: TempDir, name: String = "hand.ltape", lines: [String] = lines)
    throws -> String
  {
    let path = dir.path(name)
    let r = try CLI.run(["record", path], input: Data((lines.joined(separator: "\n") + "\n").utf8))
    guard r.code == 0 else { throw RecordFailed(message: "record exited \(r.code): \(r.err)") }
    return path
  }
}
