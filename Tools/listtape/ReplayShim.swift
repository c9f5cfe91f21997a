// TEMPORARY stand-in for ListTapeReplay's announced API, so the CLI builds and its tests run
// before the real module lands on main. Logs are plain JSON Lines behind a magic line; no
// compression, frames or checkpoints. Delete this file when merging the Replay commit.
import Foundation
import ListTapeJSON
import ListTapeModel

struct ReplayError: Error, CustomStringConvertible {
  enum Kind { case cannotOpen, damaged, notALog, io, locked, notFound }
  var kind: Kind
  var description: String
  var exitCode: Int32 {
    switch kind {
    case .cannotOpen: return 66
    case .damaged, .notALog: return 2
    case .io, .locked: return 74
    case .notFound: return 1
    }
  }
}

enum FsyncMode { case always, interval, never }

private let shimMagic = "#listtape-shim"

private func shimLoad(_ path: String) throws(ReplayError) -> [Event] {
  guard let data = FileManager.default.contents(atPath: path) else {
    throw ReplayError(kind: .cannotOpen, description: "cannot open \(path): no such file")
  }
  let text = String(decoding: data, as: UTF8.self)
  var lines = text.split(separator: "\n", omittingEmptySubsequences: false)
  guard lines.first.map(String.init) == shimMagic else {
    throw ReplayError(kind: .notALog, description: "\(path) is not a ListTape log (byte 0)")
  }
  lines.removeFirst()
  var events: [Event] = []
  var offset = shimMagic.utf8.count + 1
  for l in lines where !l.isEmpty {
    do {
      events.append(try Event(jsonLine: String(l)))
    } catch {
      throw ReplayError(
        kind: .damaged,
        description: "\(path): damaged at byte \(offset) (event \(events.count + 1))")
    }
    offset += l.utf8.count + 1
  }
  return events
}

final class Recorder {
  private let path: String
  private var handle: FileHandle
  private(set) var eventCount: Int
  private(set) var state = ListState()
  var recoveryNote: String? { nil }
  private var pending: [UInt8] = []

  private init(path: String, handle: FileHandle, events: [Event]) {
    self.path = path
    self.handle = handle
    eventCount = events.count
    for e in events { try? state.apply(e) }
  }

  static func open(path: String, fsync: FsyncMode = .interval) throws(ReplayError) -> Recorder {
    var events: [Event] = []
    if !FileManager.default.fileExists(atPath: path) {
      guard FileManager.default.createFile(atPath: path, contents: Data((shimMagic + "\n").utf8))
      else { throw ReplayError(kind: .cannotOpen, description: "cannot create \(path)") }
    } else {
      events = try shimLoad(path)
    }
    guard let h = FileHandle(forWritingAtPath: path) else {
      throw ReplayError(kind: .cannotOpen, description: "cannot open \(path)")
    }
    h.seekToEndOfFile()
    return Recorder(path: path, handle: h, events: events)
  }

  func record(_ event: Event) throws(ReplayError) -> ListFault? {
    var e = event
    if e.time == nil { e.time = Int64(Date().timeIntervalSince1970 * 1000) }
    var w = JSONWriter()
    e.encode(to: &w)
    w.endLine()
    pending += w.bytes
    if pending.count > 1 << 16 { try sync() }
    eventCount += 1
    do {
      try state.apply(e)
      return nil
    } catch {
      return error
    }
  }

  func sync() throws(ReplayError) {
    handle.write(Data(pending))
    pending.removeAll()
  }

  func close() throws(ReplayError) {
    try sync()
    handle.closeFile()
  }
}

struct VerifyReport {
  var intact: Bool
  var events: Int
  var frames: Int
  var checkpoints: Int
  var bytes: Int
  var problem: String?
  var offset: Int?
  var event: Int?
}

struct LogStats {
  var events: Int
  var opCounts: [(op: String, count: Int)]
  var faults: Int
  var bytes: Int
  var frames: Int
  var checkpoints: Int
  var firstTime: Int64?
  var lastTime: Int64?
}

final class Timeline {
  private let path: String
  private let events: [Event]
  private var damage: (offset: Int, event: Int)?

  init(path: String) throws(ReplayError) {
    self.path = path
    do {
      events = try shimLoad(path)
    } catch where error.kind == .damaged {
      // Keep what can be read, as the real Timeline does.
      guard let data = FileManager.default.contents(atPath: path) else { throw error }
      var good: [Event] = []
      var offset = shimMagic.utf8.count + 1
      for l in String(decoding: data, as: UTF8.self).split(separator: "\n").dropFirst() {
        guard let e = try? Event(jsonLine: String(l)) else { break }
        good.append(e)
        offset += l.utf8.count + 1
      }
      events = good
      damage = (offset, good.count + 1)
    }
  }

  var eventCount: Int { events.count }
  var damageNote: String? {
    damage.map { "\(path): damaged at byte \($0.offset) (event \($0.event)); read \(events.count) events" }
  }
  var isDamaged: Bool { damage != nil }

  func forEachEvent(from: Int, through: Int, _ body: (Int, Event) throws -> Bool) throws {
    guard from <= through else { return }
    for n in max(1, from)...min(through, events.count) {
      if try !body(n, events[n - 1]) { return }
    }
  }

  func event(_ n: Int) throws(ReplayError) -> Event {
    guard n >= 1 && n <= events.count else {
      throw ReplayError(kind: .notFound, description: "no event \(n)")
    }
    return events[n - 1]
  }

  func state(at n: Int) throws(ReplayError) -> ListState {
    var s = ListState()
    for e in events.prefix(n) { try? s.apply(e) }
    return s
  }

  func replay(
    through n: Int, progress: ((Int, Int) -> Void)?,
    onFault: (Int, Event, ListFault) -> Bool
  ) throws(ReplayError) -> (state: ListState, stoppedAt: Int) {
    var s = ListState()
    for (i, e) in events.prefix(n).enumerated() {
      do {
        try s.apply(e)
      } catch {
        if !onFault(i + 1, e, error) { return (s, i + 1) }
      }
      if i % 10000 == 0 { progress?(i, n) }
    }
    return (s, n)
  }

  func resolve(_ point: String) throws(ReplayError) -> Int {
    if let n = Int(point) { return n }
    if point.hasPrefix("mark:") {
      let label = String(point.dropFirst(5))
      if let i = events.firstIndex(where: { $0.operation.markLabels.contains(label) }) {
        return i + 1
      }
      throw ReplayError(kind: .notFound, description: "no mark \"\(label)\" in \(path)")
    }
    if point.hasPrefix("time:") {
      let f = ISO8601DateFormatter()
      f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
      let text = String(point.dropFirst(5))
      guard let d = f.date(from: text) ?? ISO8601DateFormatter().date(from: text) else {
        throw ReplayError(kind: .notALog, description: "invalid time \"\(text)\"")
      }
      let ms = Int64(d.timeIntervalSince1970 * 1000)
      return events.lastIndex(where: { ($0.time ?? 0) <= ms }).map { $0 + 1 } ?? 0
    }
    throw ReplayError(kind: .notALog, description: "invalid point \"\(point)\"")
  }

  func verify() -> VerifyReport {
    let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
    return VerifyReport(
      intact: damage == nil, events: events.count, frames: events.count, checkpoints: 0,
      bytes: size, problem: damage.map { _ in "unreadable event" }, offset: damage?.offset,
      event: damage?.event)
  }

  func stats() throws(ReplayError) -> LogStats {
    var counts: [String: Int] = [:]
    var faults = 0
    var s = ListState()
    for e in events {
      counts[e.op, default: 0] += 1
      do { try s.apply(e) } catch { faults += 1 }
    }
    let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
    return LogStats(
      events: events.count,
      opCounts: counts.sorted { $0.value > $1.value }.map { (op: $0.key, count: $0.value) },
      faults: faults, bytes: size, frames: events.count, checkpoints: 0,
      firstTime: events.first?.time, lastTime: events.last?.time)
  }
}

enum SampleSession {
  static func generate(events: Int, seed: UInt64, _ emit: (Event) throws -> Void) rethrows {
    var x = seed
    func next() -> UInt64 {
      x &+= 0x9E37_79B9_7F4A_7C15
      var z = x
      z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
      z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
      return z ^ (z >> 31)
    }
    var t: Int64 = 1_600_000_000_000
    try emit(Event(.appendSections(["main"]), time: t))
    for i in 1..<max(1, events) {
      t += Int64(next() % 500)
      try emit(Event(.appendItems([OutlineNode("item\(i)")], section: "main", parent: nil), time: t))
    }
  }
}
