import Foundation
import ListTapeJSON
import Testing

@testable import ListTapeModel

/// Data as deep as it can be: nodes nested 100,000 levels (only the API makes them; a fold
/// faults past level 255), states at the nesting limit, and batches and nodes nested as deep
/// as a JSON line allows. Every test runs on a thread with 512 KiB of stack, what Apple
/// platforms give secondary threads: a recursion that follows the data overflows it and
/// crashes the test run.
@Suite struct DeepOutlineTests {
  static let depth = 100_000

  /// Holds what a test thread found, for the test to check once the thread is done.
  final class Box<T>: @unchecked Sendable {
    var value: T
    init(_ value: T) { self.value = value }
  }

  /// Runs `body` on a thread with a 512 KiB stack and waits for it.
  static func onSmallStack<T>(_ body: @escaping () -> T) -> T {
    let work = Box(body)
    let result = Box<T?>(nil)
    let done = DispatchSemaphore(value: 0)
    let thread = Thread {
      result.value = work.value()
      done.signal()
    }
    thread.stackSize = 512 * 1024
    thread.start()
    done.wait()
    guard let value = result.value else { fatalError("the thread returned nothing") }
    return value
  }

  /// `d0 > d1 > … > d(n-1)`, one node per level, built from the bottom up.
  static func chain(_ n: Int, prefix: String = "d") -> OutlineNode {
    var node = OutlineNode("\(prefix)\(n - 1)", title: "last")
    for i in (0..<(n - 1)).reversed() {
      node = OutlineNode("\(prefix)\(i)", expanded: true, children: [node])
    }
    return node
  }

  @Test func deepNodesCompareHashEncodeAndDropWithoutRecursion() {
    let found = Self.onSmallStack { () -> [String: Int] in
      var out: [String: Int] = [:]
      let a = Self.chain(Self.depth)
      var b = Self.chain(Self.depth)
      out["equal"] = a == b ? 1 : 0
      out["hashes"] = a.hashValue == b.hashValue ? 1 : 0
      // A change at the very bottom.
      var bottom = b
      var path: [OutlineNode] = []
      while let child = bottom.children.first {
        path.append(bottom)
        bottom = child
      }
      bottom.title = "changed"
      while var parent = path.popLast() {
        parent.children = [bottom]
        bottom = parent
      }
      b = bottom
      out["differ"] = a != b ? 1 : 0
      let event = Event(.appendItems([a], section: "S", parent: nil))
      out["json"] = event.jsonLine.utf8.count
      out["ids"] = event.operation.itemIDs.count
      out["names"] = event.operation.names(item: "d\(Self.depth - 1)") ? 1 : 0
      var count = 0
      a.forEachID { _ in count += 1 }
      out["forEach"] = count
      return out
    }
    #expect(found["equal"] == 1)
    #expect(found["hashes"] == 1)
    #expect(found["differ"] == 1)
    #expect(found["json", default: 0] > Self.depth * 10)
    #expect(found["ids"] == Self.depth)
    #expect(found["names"] == 1)
    #expect(found["forEach"] == Self.depth)
  }

  @Test func foldingDeepNodesFaultsAtTheLimitWithoutRecursion() throws {
    let found = Self.onSmallStack { () -> [String] in
      var out: [String] = []
      var s = ListState()
      try? s.appendSections(["S"])
      let before = s
      for op in [
        ListOperation.appendItems([Self.chain(Self.depth)], section: "S", parent: nil),
        .applySectionSnapshot(section: "S", items: [Self.chain(Self.depth)]),
      ] {
        do {
          try s.apply(Event(op))
          out.append("applied")
        } catch {
          out.append("\(error)")
        }
      }
      out.append(s == before ? "unchanged" : "changed")
      // A standalone outline keeps the first 256 levels.
      let snapshot = SectionSnapshot(nodes: [Self.chain(Self.depth)])
      out.append("\(snapshot.items.count) \(snapshot.level(of: "d255") ?? -1)")
      out.append("\(snapshot.nodes == SectionSnapshot(nodes: snapshot.nodes).nodes)")
      return out
    }
    let fault = ListFault.tooDeep(item: "d256", level: 256).description
    #expect(found == [fault, fault, "unchanged", "256 255", "true"])
  }

  /// A state at the nesting limit (256 levels) in every form the model gives it.
  @Test func aStateAtTheLimitInEveryForm() throws {
    let found = Self.onSmallStack { () -> [String] in
      var out: [String] = []
      var s = ListState()
      do {
        try s.appendSections(["S"])
        try s.appendItems([Self.chain(256)], toSection: "S")
        let copy = try ListState(encoded: s.encoded())
        out.append("\(copy == s) \(copy.json(event: 1) == s.json(event: 1))")
        out.append("\(s.level(of: "d255") ?? -1) \(s.indexPath(for: "d255")?.item ?? -1)")
        out.append("\(s.rows(inSection: "S")?.count ?? 0)")
        let snapshot = s.sectionSnapshot(for: "S")
        out.append("\(snapshot?.items.count ?? 0) \(snapshot?.nodes == [Self.chain(256)])")
        try s.appendItems([OutlineNode("deeper")], toParent: "d255")
      } catch {
        out.append("\(error)")
      }
      s.deleteItems(["d0"])
      out.append("\(s.numberOfAllItems)")
      return out
    }
    #expect(
      found == [
        "true true", "255 255", "256", "256 true",
        ListFault.tooDeep(item: "deeper", level: 256).description, "0",
      ])
  }

  /// Nodes and batches nested as deep as a JSON line may nest them (512 levels): decoded from
  /// the parsed value, encoded and folded on a small stack. (The parse itself is
  /// ListTapeJSON's and runs on the test's thread.)
  @Test func theDeepestJSONLinesDecodeEncodeAndFold() throws {
    // 190 nested batches around an append of a 60-level chain under level 199: JSON nesting
    // 2 × 190 + 2 × 60 = 500 of the parser's 512.
    var line = #"{"op":"appendItems","parent":"d199","items":["#
    for i in 0..<59 { line += #"{"id":"n\#(i)","children":["# }
    line += #""n59""# + String(repeating: "]}", count: 59) + "]}"
    let batches = 190
    line =
      String(repeating: #"{"op":"batch","events":["#, count: batches) + line
      + String(repeating: "]}", count: batches)
    let json = try JSONParser.parse(line)
    let found = Self.onSmallStack { () -> [String] in
      var out: [String] = []
      do {
        let event = try Event(json: json)
        out.append(event.jsonLine)
        var s = ListState()
        try s.appendSections(["S"])
        try s.appendItems([Self.chain(200)], toSection: "S")
        do throws(ListFault) {
          try s.apply(event)
        } catch {
          // The chain reaches level 256 at its 57th node: the innermost event faults.
          var fault = error
          var levels = 0
          while case .inBatch(_, _, let inner) = fault {
            levels += 1
            fault = inner
          }
          out.append("\(levels) \(fault)")
        }
        out.append("\(s.numberOfAllItems)")
      } catch {
        out.append("\(error)")
      }
      return out
    }
    try #require(found.count == 3)
    #expect(try Event(jsonLine: found[0]) == Event(json: json))
    #expect(found[1...] == ["190 \(ListFault.tooDeep(item: "n56", level: 256))", "200"])
  }
}
