import Foundation
import ListTapeJSON
import Testing

@testable import listtape

/// Every command's `--json` against docs/json.md: each object has exactly the keys the page
/// lists for it, and every vocabulary key has its type, so a key means one thing everywhere.
@Suite struct JSONVocabularyTests {
  struct Row {
    var command: String
    var object: String
    var keys: Set<String>
    var optional: Set<String>
    /// The row lists some keys and then "the event's own fields".
    var open: Bool
  }

  static let page = CLI.packageRoot.appendingPathComponent("docs/json.md")

  static func tableRows(after heading: String) throws -> [[String]] {
    let text = try String(contentsOf: page, encoding: .utf8)
    let lines = text.components(separatedBy: "\n")
    guard let start = lines.firstIndex(of: heading) else { return [] }
    var rows: [[String]] = []
    for line in lines[(start + 1)...] {
      if line.hasPrefix("## ") { break }
      guard line.hasPrefix("| `") else { continue }
      rows.append(
        line.split(separator: "|", omittingEmptySubsequences: false).dropFirst().dropLast()
          .map { $0.trimmingCharacters(in: .whitespaces) })
    }
    return rows
  }

  /// The backquoted words of a cell.
  static func quoted(_ cell: String) -> [String] {
    cell.split(separator: "`", omittingEmptySubsequences: false).enumerated()
      .filter { $0.offset % 2 == 1 }.map { String($0.element) }
  }

  static func vocabulary() throws -> [String: String] {
    var types: [String: String] = [:]
    for row in try tableRows(after: "## Vocabulary") {
      guard let key = quoted(row[0]).first else { continue }
      types[key] = row[1]
    }
    return types
  }

  static func commandRows() throws -> [Row] {
    try tableRows(after: "## Per command").map { cells in
      let words = quoted(cells[2])
      return Row(
        command: quoted(cells[0]).first ?? "", object: cells[1],
        keys: Set(words.map { $0.hasSuffix("?") ? String($0.dropLast()) : $0 }),
        optional: Set(words.filter { $0.hasSuffix("?") }.map { String($0.dropLast()) }),
        open: cells[2].contains("and the"))
    }
  }

  /// Whether `value` has the vocabulary's `type` (`int`, `string?`, `object`, …).
  static func matches(_ value: JSONValue, _ type: String) -> Bool {
    let nullable = type.hasSuffix("?")
    switch (value, nullable ? String(type.dropLast()) : type) {
    case (.null, _): return nullable
    case (.int, "int"), (.int, "number"), (.double, "number"), (.bool, "bool"),
      (.string, "string"), (.object, "object"), (.array, "array"):
      return true
    default: return false
    }
  }

  static func objects(_ text: String) throws -> [JSONObject] {
    try text.split(separator: "\n").map { line in
      guard case .object(let object) = try JSONParser.parse(String(line)) else {
        throw RecordFailed(message: "not an object: \(line)")
      }
      return object
    }
  }

  static let symbols = CLI.samples.appendingPathComponent("symbols.ltape").path
  static let contacts = CLI.samples.appendingPathComponent("contacts.ltape").path

  /// The objects each row describes, from a run of the command.
  static func run(_ row: Row, in dir: TempDir) throws -> [JSONObject] {
    let s = symbols
    let c = contacts
    func run(_ args: [String]) throws -> [JSONObject] {
      let r = try CLI.run(args)
      #expect([0, 1, 2, 3].contains(r.code), "\(args): \(r.err)")
      return try objects(r.out)
    }
    let predicate = "count(sections) >= 1"
    switch (row.command, row.object) {
    case ("show --json", _): return try run(["show", s, "--json"])
    case ("events --json --numbered", _): return try run(["events", s, "--json", "--numbered"])
    case ("replay --json", _): return try run(["replay", c, "--json"])
    case ("verify --json", _): return try run(["verify", s, "--json"])
    case ("stats --json", _): return try run(["stats", s, "--json"])
    case ("stats LOG LOG… --json", _): return try run(["stats", s, c, "--json"])
    case ("bisect --json", let object):
      let all = try run(["bisect", s, "--where", predicate, "--json"])
      return object.hasPrefix("result") ? Array(all.suffix(1)) : Array(all.dropLast())
    case ("find --where --json", let object):
      let all = try run(["find", s, "--where", "count(visible)", "--json"])
      return object.hasPrefix("summary") ? Array(all.suffix(1)) : Array(all.dropLast())
    case ("find --faults --json", _): return try run(["find", s, "--faults", "--json"])
    case ("find --where LOG LOG… --json", let object):
      let all = try run(["find", "--where", predicate, s, c, dir.path("missing.ltape"), "--json"])
      if object.hasPrefix("summary") { return Array(all.suffix(1)) }
      let perLog = all.dropLast()
      return object.contains("unreadable")
        ? perLog.filter { $0["event"] == nil } : perLog.filter { $0["event"] != nil }
    case ("diff --json", _): return try run(["diff", s, "--from", "5", "--to", "40", "--json"])
    case ("diverge --json", _): return try run(["diverge", s, c, "--json"])
    case ("history --json", _): return try run(["history", s, "--item", "mic", "--json"])
    case ("shrink --json", _):
      return try run(["shrink", s, "--where", predicate, "-o", dir.path("shrunk.ltape"), "--json"])
    case ("export --parquet --json", _):
      return try run(["export", "--parquet", s, c, "-o", dir.path("tables"), "--json"])
    case ("what-if --json", _):
      return try run(["what-if", s, "--without", "5", "--json", "-o", dir.path("w.ltape")])
    default:
      Issue.record("docs/json.md lists \(row.command) (\(row.object)), which this test cannot run")
      return []
    }
  }

  @Test func everyCommandPrintsWhatTheDocumentSays() throws {
    let types = try Self.vocabulary()
    #expect(types["event"] == "int?")
    let rows = try Self.commandRows()
    #expect(rows.count >= 19)
    let dir = try TempDir()
    for row in rows {
      let objects = try Self.run(row, in: dir)
      #expect(!objects.isEmpty, "\(row.command) (\(row.object)) printed nothing to check")
      for object in objects {
        let keys = Set(object.keys)
        let required = row.keys.subtracting(row.optional)
        #expect(
          required.isSubset(of: keys),
          "\(row.command) (\(row.object)) lacks \(required.subtracting(keys).sorted())")
        if !row.open {
          #expect(
            keys.isSubset(of: row.keys),
            "\(row.command) (\(row.object)) has keys docs/json.md does not list: \(keys.subtracting(row.keys).sorted())"
          )
        }
        for (key, value) in object {
          guard let type = types[key], !(row.open && !row.keys.contains(key)) else { continue }
          #expect(
            Self.matches(value, type),
            "\(row.command) (\(row.object)): '\(key)' is not \(type): \(value)")
        }
      }
    }
  }

  /// Every command with a `--json` option has a row.
  @Test func everyJSONCommandIsDocumented() throws {
    let documented = Set(try Self.commandRows().map { $0.command.split(separator: " ")[0] })
    for command in listtape.CLI.commands
    where command.info.options.contains(where: { $0.name == "json" }) {
      #expect(documented.contains(Substring(command.info.name)), "\(command.info.name)")
    }
  }
}
