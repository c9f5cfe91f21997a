import Foundation
import ListTapeInvestigate
import ListTapeModel
import ListTapeRead
import ListTapeSamples
import ListTapeStore

/// What recording costs an app: latency of the store's calls on the caller's thread, events
/// per second, bytes per event, and what a full snapshot apply costs (docs/recording.md).
enum StoreBench {
  /// Runs the store benchmarks and prints a small table.
  static func run(quick: Bool) {
    let count = quick ? 50_000 : 400_000
    let maxItems = quick ? 2_000 : 10_000
    var events: [Event] = []
    events.reserveCapacity(count)
    SampleSession.generate(events: count, seed: 0x5709E, maxItems: maxItems) {
      events.append(Event($0.operation))  // no time: the store stamps it at the call
    }
    print("store benchmark: \(count) sample-session events, list up to \(maxItems) items")
    reducerOnly(events)
    burst(events, capacity: StoreOptions().bufferCapacity, label: "burst, default buffer")
    burst(events, capacity: count + 1, label: "burst, unbounded buffer")
    performBurst(events)
    paced(events.prefix(quick ? 2_000 : 10_000), perSecond: 2_000)
    snapshots(items: 1_000, rounds: quick ? 100 : 500)
    if !quick { snapshots(items: 10_000, rounds: 100) }
  }

  /// The fold alone (`ListState.apply`), no store: the floor under every store call.
  static func reducerOnly(_ events: [Event]) {
    var state = ListState()
    var latencies = [UInt64](repeating: 0, count: events.count)
    for (i, e) in events.enumerated() {
      let t0 = DispatchTime.now().uptimeNanoseconds
      try? state.apply(e)
      latencies[i] = DispatchTime.now().uptimeNanoseconds - t0
    }
    print("  reducer only (no store, no log):")
    print(
      "    apply latency     p50 \(micro(latencies, 50)) µs, p99 \(micro(latencies, 99)) µs, max \(micro(latencies, 100)) µs"
    )
  }

  /// Every event as fast as the caller can send: caller latency, caller and writer rates,
  /// bytes per event, events dropped when the writer falls behind.
  static func burst(_ events: [Event], capacity: Int, label: String) {
    let path = NSTemporaryDirectory() + "listtape-storebench-\(getpid()).log"
    defer { _ = unlink(path) }
    _ = unlink(path)
    do {
      var options = StoreOptions()
      options.bufferCapacity = capacity
      let store = try StoreCore(path: path, options: options)
      var latencies = [UInt64](repeating: 0, count: events.count)
      let start = DispatchTime.now().uptimeNanoseconds
      for (i, e) in events.enumerated() {
        let t0 = DispatchTime.now().uptimeNanoseconds
        store.send(e)
        latencies[i] = DispatchTime.now().uptimeNanoseconds - t0
      }
      let callerEnd = DispatchTime.now().uptimeNanoseconds
      let dropped = store.droppedEvents
      try store.close()
      let end = DispatchTime.now().uptimeNanoseconds
      let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
      let written = try Timeline(path: path).eventCount
      print("  \(label):")
      print(
        "    send latency      p50 \(micro(latencies, 50)) µs, p99 \(micro(latencies, 99)) µs, max \(micro(latencies, 100)) µs"
      )
      print("    caller rate       \(rate(events.count, callerEnd - start)) events/s")
      print(
        "    recorded          \(written) events (\(dropped) dropped), end to end \(rate(events.count, end - start)) events/s"
      )
      print(
        "    file              \(size) bytes, \(fmt(Double(size) / Double(max(written, 1)))) B/event"
      )
    } catch {
      print("  \(label) failed: \(error)")
    }
  }

  /// The app's call, `ListStore.perform`, one event per call as fast as the caller can:
  /// what its transaction and snapshot add to `send` (the unbounded burst above).
  static func performBurst(_ events: [Event]) {
    let path = NSTemporaryDirectory() + "listtape-storebench-perform-\(getpid()).log"
    defer { _ = unlink(path) }
    _ = unlink(path)
    do {
      var options = StoreOptions()
      options.bufferCapacity = events.count + 1
      let store = try ListStore<String, String>(path: path, options: options)
      var latencies = [UInt64](repeating: 0, count: events.count)
      for (i, e) in events.enumerated() {
        let t0 = DispatchTime.now().uptimeNanoseconds
        try? store.perform { try $0.edit(e.operation) }
        latencies[i] = DispatchTime.now().uptimeNanoseconds - t0
      }
      try store.close()
      print("  burst through ListStore.perform, unbounded buffer:")
      print(
        "    perform latency   p50 \(micro(latencies, 50)) µs, p99 \(micro(latencies, 99)) µs, max \(micro(latencies, 100)) µs"
      )
    } catch {
      print("  perform burst failed: \(error)")
    }
  }

  /// An app's pace: events spaced in time, as a person drives a list; latency of each call.
  static func paced(_ events: ArraySlice<Event>, perSecond: Int) {
    let path = NSTemporaryDirectory() + "listtape-storebench-paced-\(getpid()).log"
    defer { _ = unlink(path) }
    _ = unlink(path)
    do {
      let store = try StoreCore(path: path)
      var latencies: [UInt64] = []
      let gap = UInt64(1_000_000_000 / perSecond)
      var next = DispatchTime.now().uptimeNanoseconds
      for e in events {
        // Sleep between events, as a main thread idles between touches.
        let now = DispatchTime.now().uptimeNanoseconds
        if now < next { usleep(UInt32((next - now) / 1000)) }
        let t0 = DispatchTime.now().uptimeNanoseconds
        store.send(e)
        latencies.append(DispatchTime.now().uptimeNanoseconds - t0)
        next += gap
      }
      try store.close()
      print("  paced at \(perSecond) events/s (\(events.count) events, fsync every second):")
      print(
        "    send latency      p50 \(micro(latencies, 50)) µs, p99 \(micro(latencies, 99)) µs, max \(micro(latencies, 100)) µs; \(store.droppedEvents) dropped"
      )
    } catch {
      print("  paced failed: \(error)")
    }
  }

  /// `apply(ListState)` on a list of `items` items, each round moving one item, toggling one
  /// flag and changing the selection: the cost of the diff that finds the minimal events.
  static func snapshots(items: Int, rounds: Int) {
    let path = NSTemporaryDirectory() + "listtape-storebench-apply-\(getpid()).log"
    defer { _ = unlink(path) }
    _ = unlink(path)
    do {
      var options = StoreOptions()
      options.fsync = .never
      let store = try StoreCore(path: path, options: options)
      store.send(.appendSections(["main"]))
      let groups = max(items / 20, 1)
      store.send(
        .appendItems(
          (0..<groups).map { g in
            OutlineNode(
              "g\(g)", expanded: true, children: (0..<19).map { OutlineNode("g\(g).\($0)") })
          }, section: "main", parent: nil))
      var latencies: [UInt64] = []
      var events = 0
      for r in 0..<rounds {
        var next = store.state
        let g = r % groups
        try next.moveItem("g\(g).0", afterItem: "g\((g + 1) % groups).18")
        try next.select(["g\((g * 7) % groups)"])
        try next.collapse(["g\((g * 3) % groups)"])
        let t0 = DispatchTime.now().uptimeNanoseconds
        events += store.apply(state: next).count
        latencies.append(DispatchTime.now().uptimeNanoseconds - t0)
      }
      try store.close()
      print(
        "  apply(ListState) on \(groups * 20) items (a move, a collapse, a selection per apply):")
      print(
        "    apply latency     p50 \(micro(latencies, 50)) µs, p99 \(micro(latencies, 99)) µs; \(fmt(Double(events) / Double(rounds))) events per apply"
      )
    } catch {
      print("  apply failed: \(error)")
    }
  }

  private static func micro(_ xs: [UInt64], _ percentile: Int) -> String {
    let sorted = xs.sorted()
    guard !sorted.isEmpty else { return "-" }
    let i = min(sorted.count - 1, sorted.count * percentile / 100)
    return fmt(Double(sorted[i]) / 1000)
  }

  private static func rate(_ n: Int, _ nanos: UInt64) -> String {
    String(Int((Double(n) / (Double(nanos) / 1e9)).rounded()))
  }
}
