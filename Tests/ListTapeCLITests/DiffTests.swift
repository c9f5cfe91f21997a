import Foundation
import Testing

@Suite struct DiffTests {
  @Test func humanOutputOfTheHandmadeSession() throws {
    let dir = try TempDir()
    let path = try Handmade.record(in: dir)
    let r = try CLI.run(["diff", path, "--from", "mark:before", "--to", "12"])
    #expect(r.code == 0)
    #expect(r.err.isEmpty)
    #expect(
      r.out == """
        --- \(path) at event 5
        +++ \(path) at event 12
        [main]
        - phone (was under Communication, after mic)
        ▸ Communication collapsed
        ▾ Devices expanded
            mouse
        +   keyboard (under Devices, after mouse)
        ~   mic moved: under Communication, first → under Devices, after keyboard
          title Weather: none → "Forecast"
        selection {mic} → {keyboard}
        7 changes, 1 item unchanged

        """)
    // --to defaults to the last event; --context 0 folds every unchanged item.
    let folded = try CLI.run(["diff", path, "--from", "5", "--context", "0"])
    #expect(folded.out.contains("  … 1 unchanged item\n"))
    #expect(!folded.out.contains("    mouse\n"))
  }

  /// Lines are coloured by the kind of change they show, never by how an id happens to
  /// start: an unchanged item named like a content change stays plain.
  @Test func coloursFollowTheChangeNotTheText() throws {
    let dir = try TempDir()
    let path = try Handmade.record(
      in: dir,
      lines: [
        #"{"op":"appendSections","sections":["s"]}"#,
        #"{"op":"appendItems","items":["title x","…y","plain"],"section":"s"}"#,
        #"{"op":"update","item":"plain","title":"P"}"#,
      ])
    let r = try CLI.run(["diff", path, "--from", "2", "--to", "3", "--color", "always"])
    #expect(r.code == 0)
    let lines = r.out.split(separator: "\n").map(String.init)
    #expect(lines.contains("  title x"))
    #expect(lines.contains("  …y"))
    #expect(lines.contains("\u{1B}[33m  title plain: none → \"P\"\u{1B}[0m"))
  }

  /// A selection of more than 16 items (before and after together) is told by what was
  /// added and removed, in display order; the JSON still carries both whole lists.
  @Test func aLongSelectionIsToldByWhatChanged() throws {
    let dir = try TempDir()
    let ids = (0..<12).map { "\"r\($0)\"" }.joined(separator: ",")
    let path = try Handmade.record(
      in: dir,
      lines: [
        #"{"op":"configure","multipleSelection":true}"#,
        #"{"op":"appendSections","sections":["s"]}"#,
        "{\"op\":\"appendItems\",\"items\":[\(ids)],\"section\":\"s\"}",
        #"{"op":"select","items":["r0","r1","r2","r3","r4","r5","r6","r7","r8","r9"]}"#,
        #"{"op":"batch","events":[{"op":"select","items":["r11","r10"]},{"op":"deselect","items":["r4","r1"]}]}"#,
        #"{"op":"select","items":["r11"]}"#,
      ])
    let r = try CLI.run(["diff", path, "--from", "4", "--to", "5"])
    #expect(r.code == 0)
    #expect(r.err.isEmpty)
    #expect(
      r.out.contains(
        "\nselection 10 items → 10 items: +{r10, r11} −{r1, r4}\n1 change, 12 items unchanged\n"))
    // Up to 16 in all, both lists whole, as before.
    let short = try CLI.run(["diff", path, "--from", "3", "--to", "4"])
    #expect(short.out.contains("selection {} → {r0, r1, r2, r3, r4, r5, r6, r7, r8, r9}\n"))
    let json = try CLI.run(["diff", path, "--from", "4", "--to", "5", "--json"])
    let object = try #require(
      try JSONSerialization.jsonObject(with: Data(json.out.utf8)) as? [String: Any])
    let selection = try #require((object["diff"] as? [String: Any])?["selection"] as? [String: Any])
    #expect((selection["from"] as? [String])?.count == 10)
    #expect(
      selection["to"] as? [String] == [
        "r0", "r2", "r3", "r5", "r6", "r7", "r8", "r9", "r10", "r11",
      ])
  }

  /// The JSON's selection lists are written from the state's stored ids, not from strings:
  /// ids that need escaping, UUIDs (stored as 16 bytes, in either case) and non-ASCII text
  /// come out exactly as recorded, in display order, for an adjacent diff and a long one.
  @Test func selectionListsCarryEveryIdAsRecorded() throws {
    let dir = try TempDir()
    let ids = [
      #"q"uote"#, #"back\slash"#, "tab\t", "ünï ☃", "8F0C2D4E-1A2B-4C3D-8E9F-0A1B2C3D4E5F",
      "8f0c2d4e-1a2b-4c3d-8e9f-0a1b2c3d4e60", "lib/g1/sub2/i-3",
    ]
    let items = try ids.map { "{\"id\":\(try jsonString($0))}" }.joined(separator: ",")
    let selectAll = try ids.map(jsonString).joined(separator: ",")
    let path = try Handmade.record(
      in: dir,
      lines: [
        #"{"op":"configure","multipleSelection":true}"#,
        #"{"op":"appendSections","sections":["s"]}"#,
        "{\"op\":\"appendItems\",\"items\":[\(items)],\"section\":\"s\"}",
        "{\"op\":\"select\",\"items\":[\(selectAll)]}",
        "{\"op\":\"deselect\",\"items\":[\(try jsonString(ids[3]))]}",
      ])
    for (from, to) in [(4, 5), (2, 5)] {
      let r = try CLI.run(["diff", path, "--from", "\(from)", "--to", "\(to)", "--json"])
      #expect(r.code == 0 && r.err.isEmpty)
      let object = try #require(
        try JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [String: Any])
      let selection = try #require(
        (object["diff"] as? [String: Any])?["selection"] as? [String: Any])
      #expect(selection["from"] as? [String] == (from == 4 ? ids : []), "from \(from)")
      #expect(
        selection["to"] as? [String] == ids.filter { $0 != ids[3] }, "from \(from)")
    }
  }

  private func jsonString(_ s: String) throws -> String {
    String(
      decoding: try JSONSerialization.data(withJSONObject: s, options: .fragmentsAllowed),
      as: UTF8.self)
  }

  @Test func json() throws {
    let dir = try TempDir()
    let path = try Handmade.record(in: dir)
    let r = try CLI.run(["diff", path, "--from", "5", "--to", "12", "--json"])
    #expect(r.code == 0)
    let object = try #require(
      try JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [String: Any])
    #expect((object["from"] as? [String: Any])?["event"] as? Int == 5)
    #expect((object["to"] as? [String: Any])?["event"] as? Int == 12)
    #expect(object["identical"] as? Bool == false)
    #expect(object["changes"] as? Int == 7)
    let diff = try #require(object["diff"] as? [String: Any])
    let inserted = try #require(diff["inserted"] as? [[String: Any]])
    #expect(inserted.map { $0["id"] as? String } == ["keyboard"])
    #expect((inserted.first?["at"] as? [String: Any])?["parent"] as? String == "Devices")
    #expect((diff["deleted"] as? [[String: Any]])?.map { $0["id"] as? String } == ["phone"])
    let moved = try #require((diff["moved"] as? [[String: Any]])?.first)
    #expect(moved["id"] as? String == "mic")
    #expect((moved["from"] as? [String: Any])?["parent"] as? String == "Communication")
    #expect(diff["expanded"] as? [String] == ["Devices"])
    #expect(diff["collapsed"] as? [String] == ["Communication"])
    let selection = try #require(diff["selection"] as? [String: Any])
    #expect(selection["from"] as? [String] == ["mic"])
    #expect(selection["to"] as? [String] == ["keyboard"])
    #expect(diff["selectionMode"] is NSNull)
    let content = try #require((diff["content"] as? [[String: Any]])?.first)
    #expect(content["id"] as? String == "Weather")
    #expect(diff["unchanged"] as? Int == 1)
  }

  @Test func identicalStatesExitZero() throws {
    let dir = try TempDir()
    let path = try Handmade.record(in: dir)
    let r = try CLI.run(["diff", path, "--from", "4", "--to", "mark:before"])
    #expect(r.code == 0)
    #expect(r.out.hasSuffix("no differences (6 items unchanged)\n"))
    let json = try CLI.run(["diff", path, "--from", "4", "--to", "5", "--json"])
    #expect(json.code == 0)
    #expect(json.out.contains(#""identical":true,"exact":true,"changes":0"#))
  }

  @Test func twoLogsAtOnePoint() throws {
    let dir = try TempDir()
    let a = try Handmade.record(in: dir, name: "a.ltape")
    var lines = Handmade.lines
    lines[10] = #"{"op":"update","item":"Weather","title":"Sky"}"#
    let b = try Handmade.record(in: dir, name: "b.ltape", lines: lines)
    let same = try CLI.run(["diff", a, b, "--at", "10"])
    #expect(same.code == 0)
    #expect(same.out.hasPrefix("--- \(a) at event 10\n+++ \(b) at event 10\n"))
    let different = try CLI.run(["diff", a, b, "--at", "11"])
    #expect(different.code == 0)
    #expect(different.out.contains("  title Weather: \"Forecast\" → \"Sky\"\n"))
    // A mark is resolved in each log.
    #expect(try CLI.run(["diff", a, b, "--at", "mark:before"]).code == 0)
  }

  @Test func colourWhenAsked() throws {
    let dir = try TempDir()
    let path = try Handmade.record(in: dir)
    let r = try CLI.run(["diff", path, "--from", "5", "--color", "always"])
    #expect(r.out.contains("\u{1B}[32m+   keyboard"))
    #expect(r.out.contains("\u{1B}[31m- phone"))
    let json = try CLI.run(["diff", path, "--from", "5", "--color", "always", "--json"])
    #expect(!json.out.contains("\u{1B}["))
  }

  static let usage: [([String], String)] = [
    (["diff", "a.ltape"], "Error: Missing '--from <a>'"),
    (["diff", "a.ltape", "--at", "3"], "Error: '--at' compares two logs"),
    (["diff", "a.ltape", "b.ltape"], "Error: Missing '--at <point>'"),
    (["diff", "a.ltape", "b.ltape", "--at", "1", "--from", "0"], "Error: '--from' and '--to'"),
    (
      ["diff", "a.ltape", "--from", "0", "--context", "-1"],
      "Error: The value '-1' is invalid for '--context <n>'"
    ),
    (["diff", "a.ltape", "--from", "0", "--context", "x"], "Error: The value 'x' is invalid"),
  ]

  @Test(arguments: usage)
  func usageErrors(_ args: [String], _ message: String) throws {
    let r = try CLI.run(args)
    #expect(r.code == 64)
    #expect(r.err.hasPrefix(message), "\(r.err)")
  }

  @Test func pointOutOfRange() throws {
    let dir = try TempDir()
    let path = try Handmade.record(in: dir)
    let r = try CLI.run(["diff", path, "--from", "13"])
    #expect(r.code == 64)
    #expect(r.err.hasPrefix("Error: --from 13 is out of range"))
  }
}
