import Foundation
import ListTapeModel
import Testing

@testable import ListTapeStore

/// Every editing call records its caller's site (issue 30), and the fault handler hears it.
@Suite struct StoreSiteTests {
  static let file = "ListTapeStoreTests/StoreSiteTests.swift"

  func options(sites: Bool = true, heard: FaultLog? = nil) -> StoreOptions {
    var o = StoreOptions()
    o.fsync = .never
    o.recordsSites = sites
    if let heard { o.onFault = { heard.note($0) } }
    return o
  }

  @Test func everyEditingCallRecordsTheLineThatMadeIt() throws {
    let (dir, path) = temporaryStorePath()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let heard = FaultLog()
    let store = try ListStore<String, String>(path: path, options: options(heard: heard))
    var lines: [Int] = []
    lines.append(#line + 1)
    store.setAllowsMultipleSelection(true)
    lines.append(#line + 1)
    try store.perform { try $0.appendSections(["main"]) }
    lines.append(#line + 1)
    try store.perform { try $0.appendItems(["a", "b"], toSection: "main") }
    lines.append(#line + 1)
    try store.select(["a"])
    lines.append(#line + 1)
    store.deselect()
    lines.append(#line + 1)
    store.mark("m")
    var snapshot = store.snapshot()
    try snapshot.appendItems(["c"], toSection: "main")
    lines.append(#line + 1)
    store.apply(snapshot)
    var section = try #require(store.snapshot(for: "main"))
    try section.append(["d"])
    lines.append(#line + 1)
    try store.apply(section, to: "main")
    let faultLine = #line + 1
    #expect(throws: ListFault.self) { try store.select(["nothing"]) }
    lines.append(faultLine)
    try store.close()

    let function = "everyEditingCallRecordsTheLineThatMadeIt()"
    let sites = try LogFollowerTests.events(path).map(\.site)
    #expect(sites == lines.map { "\(Self.file):\($0) \(function)" })
    // The fault handler names the call's site; the thrown fault is the log's.
    let faults = heard.reports
    #expect(faults.count == 1)
    #expect(faults.first?.fault == .missingItem("nothing"))
    #expect(faults.first?.site == "\(Self.file):\(faultLine) \(function)")
    #expect(
      faults.first?.description
        == #"no item "nothing" (at \#(Self.file):\#(faultLine) \#(function))"#)
  }

  @Test func sitesCanBeTurnedOff() throws {
    let (dir, path) = temporaryStorePath()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let heard = FaultLog()
    let store = try ListStore<String, String>(
      path: path, options: options(sites: false, heard: heard))
    try store.perform { try $0.appendSections(["main"]) }
    #expect(throws: ListFault.self) { try store.select(["nothing"]) }
    try store.close()
    #expect(try LogFollowerTests.events(path).map(\.site) == [nil, nil])
    #expect(heard.reports == [StoreFault(.missingItem("nothing"), site: nil)])
  }
}
