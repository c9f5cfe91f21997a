import Foundation
import ListTapeModel
import ListTapeRead
// listtape-app-sim: an app that records through ListStore until it is killed (crash tests).
import ListTapeSamples
import ListTapeStore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

let usage = """
  OVERVIEW: Edit a list through ListStore, as an app would, until killed (crash tests).

  USAGE: listtape-app-sim <log> [--seed <n>] [--events <n>] [--sync-every <n>]

  Opens <log> with ListStore (resuming from the state the log ends in) and prints
  "ready <events> <state hash>". Then sends --events (default: endless) random edits
  that follow the list's current state, about 1% of them faults, and calls sync() every
  --sync-every (default 40) edits; only after sync() returns does it print
  "ack <events> <state hash>": every event up to <events> is then in the log, and the
  state after it hashes to <state hash> (ListState.stateHash). With --events it closes
  the store at the end and prints "final <events> <state hash>".

  OPTIONS:
    -h, --help   Show this help.
  """

/// One line on standard output, written at once (no buffering a kill could lose).
func say(_ line: String) {
  FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

/// Ends the process with `message` on standard error: exit 64 (usage) names `--help`.
func fail(_ message: String, code: Int32) -> Never {
  let hint = code == 64 ? "\nSee 'listtape-app-sim --help'" : ""
  FileHandle.standardError.write(Data("listtape-app-sim: error: \(message)\(hint)\n".utf8))
  exit(code)
}

/// The next edit for `state`: mostly valid, the kind of thing a list screen does, with a
/// fault now and then (a duplicate insert, selecting a hidden row).
func nextEdit(_ state: ListState, _ rng: inout SplitMix64, fresh: () -> String) -> ListOperation {
  let sections = state.sectionIdentifiers
  guard let section = sections.randomElement(using: &rng), state.numberOfAllItems > 0 else {
    return sections.isEmpty
      ? .appendSections(["main", "more"])
      : .appendItems([OutlineNode(fresh(), title: "Item")], section: sections.first, parent: nil)
  }
  let items = state.allItems(inSection: section) ?? []
  let some = items.randomElement(using: &rng)
  let roll = rng.below(100)
  switch (roll, some) {
  case (0..<20, _), (_, nil):
    let node = OutlineNode(fresh(), title: "Item \(roll)", children: [OutlineNode(fresh())])
    if let parent = some, roll % 3 == 0, (state.level(of: parent) ?? 0) < 8 {
      return .appendItems([node], section: nil, parent: parent)
    }
    return .appendItems([node], section: section, parent: nil)
  case (20..<30, let x?):
    return items.count > 400 || roll % 2 == 0
      ? .deleteItems([x]) : .insertItems([OutlineNode(fresh())], .after(x))
  case (30..<45, let x?): return .expand([x])
  case (45..<55, let x?): return .collapse([x])
  case (55..<65, let x?): return state.isVisible(x) ? .select([x]) : .deselect(nil)
  case (65..<72, let x?):
    guard let y = items.randomElement(using: &rng), state.parent(of: y) != nil else {
      return .moveItem(x, .before(x))  // a fault: next to itself
    }
    return .moveItem(x, .after(y))
  case (72..<82, let x?): return .update(item: x, title: "t\(roll)", fields: ["k": "\(roll)"])
  case (82..<88, let x?):
    return .batch([
      Event(.expand([x])),
      Event(.appendItems([OutlineNode(fresh())], section: section, parent: nil)),
    ])
  case (88..<90, let x?): return .appendItems([OutlineNode(x)], section: section, parent: nil)
  case (90..<93, _): return .mark("m\(roll)")
  case (93..<96, _): return .configure(multipleSelection: roll % 2 == 0)
  case (96..<98, let x?): return .replaceChildren(parent: x, items: [OutlineNode(fresh())])
  default: return .reloadItems(some.map { [$0] } ?? [])
  }
}

func run(_ args: [String]) {
  guard let path = args.first, !path.hasPrefix("-") else { fail("missing <log>", code: 64) }
  var seed: UInt64 = 1
  var events = Int.max
  var syncEvery = 40
  var i = 1
  while i < args.count {
    let flag = args[i]
    guard i + 1 < args.count, let value = Int(args[i + 1]), value > 0 else {
      fail("\(flag) needs a positive number", code: 64)
    }
    switch flag {
    case "--seed": seed = UInt64(value)
    case "--events": events = value
    case "--sync-every": syncEvery = value
    default: fail("unknown option \(flag)", code: 64)
    }
    i += 2
  }
  var options = StoreOptions()
  // Never drop: every event sent must reach the log, so that the counts below are exact.
  options.bufferCapacity = 1 << 30
  let store: StoreCore
  do {
    store = try StoreCore(path: path, options: options)
  } catch {
    fail("\(error)", code: 74)
  }
  let start: Int
  do {
    start = try Timeline(path: path).eventCount
  } catch {
    fail("\(error)", code: 74)
  }
  say("ready \(start) \(store.state.stateHash)")
  var rng = SplitMix64(seed: seed ^ UInt64(start))
  var serial = 0
  let prefix = "r\(start)."
  var sent = 0
  while sent < events {
    let op = nextEdit(store.state, &rng) {
      serial += 1
      return prefix + String(serial)
    }
    store.send(op)
    sent += 1
    if sent % syncEvery == 0 || sent == events {
      do {
        try store.sync()
      } catch {
        fail("sync: \(error)", code: 74)
      }
      guard store.droppedEvents == 0 else { fail("dropped events", code: 70) }
      say("ack \(start + store.acceptedEvents) \(store.state.stateHash)")
    }
  }
  do {
    try store.close()
  } catch {
    fail("close: \(error)", code: 74)
  }
  say("final \(start + store.acceptedEvents) \(store.state.stateHash)")
}

let arguments = Array(CommandLine.arguments.dropFirst())
switch arguments.first {
case "-h", "--help", "help": print(usage)
case nil: fail("missing <log>", code: 64)
default: run(arguments)
}
