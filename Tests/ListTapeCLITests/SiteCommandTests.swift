import Foundation
import Testing

/// Sites (issue 30) through the built binary: recorded, given back, refused when malformed.
@Suite struct SiteCommandTests {
  /// A session with sites on most events, one inside a batch, one fault (event 5).
  static let session = """
    {"op":"appendSections","sections":["main"],"t":1000,"site":"ListVC.swift:10 viewDidLoad()"}
    {"op":"appendItems","items":["a","b","c"],"t":2000,"site":"ListVC.swift:20 load()"}
    {"op":"expand","items":["a"],"t":3000}
    {"op":"batch","events":[{"op":"deleteItems","items":["b"],"t":3500,"site":"ListVC.swift:30 delete(_:)"},{"op":"mark","label":"m"}],"t":4000,"site":"ListVC.swift:40 commit()"}
    {"op":"select","items":["zz"],"t":5000,"site":"ListVC.swift:50 tap(_:)"}
    {"op":"deleteItems","items":["a"],"t":6000,"site":"ListVC.swift:30 delete(_:)"}

    """

  /// A log of `session` in `dir`.
  static func log(_ dir: TempDir) throws -> String {
    let path = dir.path("sites.ltape")
    let r = try CLI.run(["record", path], input: Data(session.utf8))
    #expect(r.code == 0, "\(r.err)")
    return path
  }

  @Test func recordKeepsSitesAndEventsJSONGivesThemBackExactly() throws {
    let dir = try TempDir()
    let path = try Self.log(dir)
    let r = try CLI.run(["events", path, "--json"])
    #expect(r.code == 0)
    #expect(r.out == Self.session)
    // Recording the output again gives the same lines (sites included).
    let again = dir.path("again.ltape")
    #expect(try CLI.run(["record", again], input: Data(r.out.utf8)).code == 0)
    #expect(try CLI.run(["events", again, "--json"]).out == Self.session)
  }

  @Test func malformedSitesAreRejectedWithTheirLineAndField() throws {
    let dir = try TempDir()
    let path = dir.path("bad.ltape")
    let input = """
      {"op":"appendSections","sections":["main"],"site":7}
      {"op":"appendSections","sections":["s2"],"site":""}
      {"op":"appendSections","sections":["s3"],"site":{"file":"A.swift"}}
      {"op":"batch","events":[{"op":"mark","label":"x","site":false}]}
      {"op":"appendSections","sections":["s4"],"site":null}
      {"op":"appendSections","sections":["s5"],"site":"A.swift:1"}

      """
    let r = try CLI.run(["record", path], input: Data(input.utf8))
    #expect(r.code == 65)
    #expect(r.err.contains(#"listtape: line 1: field "site" must be a string, found integer"#))
    #expect(r.err.contains(#"listtape: line 2: field "site" must not be empty"#))
    #expect(r.err.contains(#"listtape: line 3: field "site" must be a string, found object"#))
    #expect(
      r.err.contains(
        #"listtape: line 4: event 1 of the batch: field "site" must be a string, found boolean"#))
    #expect(r.err.contains("recorded 2 events to \(path) (4 malformed lines, 0 faults"))
    let events = try CLI.run(["events", path, "--json"])
    #expect(events.out.lines.filter { !$0.isEmpty }.count == 2)
    #expect(events.out.contains(#""site":"A.swift:1""#))
  }
}
