import Foundation
import ListTapeRead
import ListTapeSamples
import Testing

@testable import ListTapeLog
@testable import ListTapeModel
@testable import ListTapeStore

/// The recorder folds each event from the row it just encoded (its state's ids are the
/// writer's dictionary), not from the `Event` again: states and faults must be those of the
/// reducer on the events, across restarts, reopening and repeated ids.
@Suite struct RecorderRowFoldTests {
  /// Every event's fault and, every 97 events, the state equal a direct fold of the events,
  /// across many dictionary restarts (a tiny slack), with sites and batches; the recorder
  /// never falls back to folding `Event`s, and the log replays to the same state.
  @Test(arguments: [(IdShape.short, UInt64(31)), (.path, 32), (.uuid, 33)])
  func recordedStatesAndFaultsAreTheReducers(shape: IdShape, seed: UInt64) throws {
    let path = temporaryLogPath()
    defer { removeLog(path) }
    let options = Self.options(perFrame: 200, checkpointEvery: 700)
    let recorder = try Recorder.open(path: path, options: options)
    recorder.restartSlack = 8
    #expect(recorder.foldsRows)
    var reducer = ListState()
    var count = 0
    var faults = 0
    try SampleSession.generate(
      events: 5_000, seed: seed, maxItems: 300, opening: .outline(items: 200, shape: shape),
      sites: SampleSession.Sites(count: 40, model: .uniform)
    ) { e in
      let fault = try recorder.record(e, stampingTime: false)
      var expected: ListFault?
      do throws(ListFault) { try reducer.apply(e) } catch { expected = error }
      #expect(fault == expected, "event \(count + 1)")
      if fault != nil { faults += 1 }
      count += 1
      if count % 97 == 0 { #expect(recorder.state == reducer, "event \(count)") }
    }
    #expect(recorder.foldsRows)
    #expect(recorder.state == reducer)
    try recorder.close()
    #expect(faults > 0)
    #expect(try LogReader(path: path).dictionaryFrameCount > 0)
    let timeline = try Timeline(path: path)
    #expect(timeline.verify().intact)
    #expect(try timeline.state(at: count) == reducer)
  }

  /// A restart lists an id both as a section and as an item (the two entries a reader's
  /// decoder aliases): events after it that name the item, and a reopened recorder, fold
  /// as the reducer does, and the log's checkpoints and replay agree.
  @Test func aRestartListingAnIdTwiceFoldsAsTheLogReads() throws {
    let path = temporaryLogPath()
    defer { removeLog(path) }
    let options = Self.options(perFrame: 5, checkpointEvery: 7)
    var events: [Event] = [
      Event(.appendSections(["A", "B"])),
      Event(
        .appendItems(
          [
            OutlineNode("A"), OutlineNode("x"),
            OutlineNode("p", children: [OutlineNode("c1"), OutlineNode("c2")]),
          ], section: "B", parent: nil)),
    ]
    // Churn that leaves dead entries, so that restarts come.
    for i in 0..<40 {
      events.append(Event(.appendItems([OutlineNode("t\(i)")], section: "A", parent: nil)))
      events.append(Event(.deleteItems(["t\(i)"])))
    }
    events += [
      Event(.select(["A"])), Event(.moveItem("A", .after("p"))), Event(.expand(["p"])),
      Event(.deleteItems(["ghost"])),
      Event(.appendItems([OutlineNode("A")], section: "A", parent: nil)),
      Event(.deleteSections(["A"])), Event(.deleteItems(["A"])),
      Event(.appendSections(["A"])),
      Event(.appendItems([OutlineNode("y")], section: "A", parent: "x")),
    ]
    let recorder = try Recorder.open(path: path, options: options)
    recorder.restartSlack = 0
    var reducer = ListState()
    for (i, e) in events.enumerated() {
      if i == 60 {
        // Reopen halfway: the state loads from the log, the rows go on from its dictionary.
        try recorder.close()
        let again = try Recorder.open(path: path, options: options)
        #expect(again.foldsRows)
        #expect(again.state == reducer)
        again.restartSlack = 0
        try check(again, from: i)
        return
      }
      try record(e, into: recorder)
    }
    Issue.record("the events ran out before the reopening")

    func record(_ e: Event, into r: Recorder) throws {
      let fault = try r.record(e, stampingTime: false)
      var expected: ListFault?
      do throws(ListFault) { try reducer.apply(e) } catch { expected = error }
      #expect(fault == expected, "\(e)")
      #expect(r.state == reducer, "\(e)")
      #expect(r.foldsRows)
    }
    func check(_ r: Recorder, from start: Int) throws {
      for e in events[start...] { try record(e, into: r) }
      try r.close()
      #expect(try LogReader(path: path).dictionaryFrameCount > 5)
      let timeline = try Timeline(path: path)
      #expect(timeline.verify().intact)
      for n in [1, 2, 30, 59, 60, 61, events.count - 3, events.count] {
        #expect(try timeline.state(at: n) == direct(events, through: n), "event \(n)")
      }
    }
  }

  /// Writer options with small frames and close checkpoints, cut by count alone (a manual
  /// clock), so that the log's layout is the same however slow the machine.
  /// A recorder cuts full batches ahead (the flusher thread frames and writes them while
  /// it folds): its frames, checkpoints and restarts fall where a second recording of the
  /// same events puts them (the policy counts a frame written ahead at the next cut, never
  /// when the thread happens to finish it), and the log reads back to its state.
  @Test func recordingTwiceCutsAheadToTheSameFrames() throws {
    var layouts: [[String]] = []
    for _ in 0..<2 {
      let path = temporaryLogPath()
      defer { removeLog(path) }
      var options = Recorder.options(.never)
      options.maxEventsPerFrame = 100
      options.maxEventsBetweenCheckpoints = 1_500
      options.batchDelay = 3_600  // frames cut when full, never by time
      let recorder = try Recorder.open(path: path, options: options)
      recorder.restartSlack = 64
      try SampleSession.generate(
        events: 8_000, seed: 5, maxItems: 300, opening: .outline(items: 200, shape: .uuid)
      ) { e in _ = try recorder.record(e, stampingTime: false) }
      #expect(recorder.writer.batchesCutAhead > 40)
      let state = recorder.state
      try recorder.close()
      let reader = try LogReader(path: path)
      var layout: [String] = []
      try reader.forEachFrame(from: 1, through: reader.eventCount, checkpoints: true) { view in
        layout.append("\(view.kind) \(view.firstSeq) \(view.eventCount)")
        return true
      }
      layouts.append(layout)
      #expect(try Timeline(path: path).state(at: 8_000) == state)
    }
    #expect(layouts[0] == layouts[1])
    #expect(layouts[0].contains { $0.hasPrefix("checkpoint") })
    #expect(layouts[0].contains { $0.hasPrefix("dictionary") })
  }

  static func options(perFrame: Int, checkpointEvery: Int) -> LogWriterOptions {
    var options = Recorder.options(.never)
    options.maxEventsPerFrame = perFrame
    options.maxEventsBetweenCheckpoints = UInt64(checkpointEvery)
    options.clock = ManualClock()
    return options
  }
}

/// Removes the temporary directory of the log at `path`.
private func removeLog(_ path: String) {
  try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent)
}
