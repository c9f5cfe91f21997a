import Foundation
import ListTapeInvestigate
import ListTapeLog
import ListTapeModel
import ListTapeRead
import ListTapeSamples
import ListTapeStore

/// Child modes for profiling: replay and seeks, or the encoded size per op.
enum ProfileMode {
  static func run(_ path: String) {
    guard let t = try? Timeline(path: path) else { return }
    if ProcessInfo.processInfo.environment["SKIP_REPLAY"] == nil {
      let start = Clock.now()
      _ = try? t.replay(through: .max) { _, _, _ in true }
      print("replay", Clock.now() - start)
    }
    var rng = Rng(seed: 3)
    let s2 = Clock.now()
    for _ in 0..<20 { _ = try? t.state(at: 1 + rng.below(t.eventCount)) }
    print("checkpoints", t.checkpointCount)
    print("seeks", (Clock.now() - s2) / 20)
  }

  static func sizes() {
    var encoder = EventEncoder()
    var bytes: [String: (count: Int, bytes: Int)] = [:]
    SampleSession.generate(events: 200_000, seed: 1) { e in
      let r = (try? encoder.encode(e)) ?? []
      bytes[e.op, default: (0, 0)].count += 1
      bytes[e.op, default: (0, 0)].bytes += r.count
    }
    for (op, v) in bytes.sorted(by: { $0.value.bytes > $1.value.bytes }) {
      print(op, v.count, v.bytes, Double(v.bytes) / Double(v.count))
    }
  }
}

/// Where a seek's checkpoint time goes: inflating the checkpoint frame, then rebuilding
/// the state from it (past the checkpoint's 9-byte header), at 20 random events.
enum CheckpointParts {
  static func run(_ path: String) throws {
    let reader = try LogReader(path: path)
    guard reader.formatVersion.major < 2 else {
      // A 2.0 checkpoint is a compact state against the segment's dictionary.
      return print("\(path) is a 2.0 log: its checkpoints are measured by __seek-parts")
    }
    var rng = Rng(seed: 3)
    var inflate: [Double] = []
    var decode: [Double] = []
    var items = 0
    for _ in 0..<20 {
      let n = 1 + rng.below(Int(reader.eventCount))
      let start = Clock.now()
      guard let cp = try reader.checkpoint(atOrBefore: UInt64(n)) else { continue }
      let inflated = Clock.now()
      let state = try cp.state.withUnsafeBytes {
        try ListState(encoded: UnsafeRawBufferPointer(rebasing: $0[9...]))
      }
      decode.append(Clock.now() - inflated)
      inflate.append(inflated - start)
      items = max(items, state.numberOfAllItems)
    }
    func median(_ v: [Double]) -> String { fmt(v.sorted()[v.count / 2] * 1000) }
    guard !decode.isEmpty else { return print("no checkpoints") }
    print(
      "checkpoint inflate \(median(inflate)) ms, state decode \(median(decode)) ms (medians; up to \(items) items)"
    )
  }
}

/// The floor under a replay: folding events already decoded in memory, with fold hints
/// made beforehand (no reading, inflating or decoding at all).
enum DecodedFold {
  /// Best of three folds of `events` from the empty state.
  static func best(_ events: [Event]) -> Double {
    var ops = FoldOps()
    var empty = ListState()
    var ids = empty.sharedIDs()
    for (k, e) in events.enumerated() { ops.append(e, seq: k + 1, defining: &ids) }
    var best = Double.infinity
    for _ in 0..<3 {
      var state = ListState()
      _ = try? state.adopt(ids, aliases: DefinitionAliases())
      let start = Clock.now()
      foldRecords(&state, ops)
      best = min(best, Clock.now() - start)
      precondition(state.numberOfAllItems >= 0)
    }
    return best
  }

  /// The same for a log's events (for profiling: `perf record … __decoded-fold LOG`).
  static func run(_ path: String) throws {
    let timeline = try Timeline(path: path)
    var events: [Event] = []
    events.reserveCapacity(timeline.eventCount)
    try timeline.forEachEvent { _, e in
      events.append(e)
      return true
    }
    print("folded \(events.count) decoded events in \(fmt(best(events))) s (best of 3)")
  }
}

/// The other half of a replay: reading, inflating and decoding a log's events on one thread
/// with no fold, best of three (`__decode-only LOG`).
enum DecodeOnly {
  static func run(_ path: String) throws {
    let timeline = try Timeline(path: path)
    var marks = 0
    let best = try Clock.best {
      marks = 0
      try timeline.forEachEvent { _, e in
        if case .mark = e.operation { marks += 1 }
        return true
      }
    }
    print(
      "read, inflated and decoded \(timeline.eventCount) events (\(marks) marks) in \(fmt(best)) s (best of 3)"
    )
  }
}

/// `listtape-bench __fold-split LOG`: the two halves of a replay measured apart, on one
/// thread: reading, inflating and decoding the whole log into record chunks (kept in
/// memory), then folding those chunks (restarts and frame ends included). Best of three.
enum FoldSplit {
  static func run(_ path: String) throws {
    let timeline = try Timeline(path: path)
    var decodeBest = Double.infinity
    var foldBest = Double.infinity
    var events = 0
    let ignore: (Int) -> Void = { _ in }
    for _ in 0..<3 {
      var chunks: [FoldOps] = []
      var decoder = timeline.startDecoder()
      var ops = FoldOps()
      let t0 = Clock.now()
      try LogEvents.decode(
        timeline.reader, path: path, decoder: &decoder, from: 1, through: timeline.eventCount,
        ops: &ops, skipped: ignore
      ) { chunk in
        chunks.append(chunk)
        chunk = FoldOps()
        return true
      }
      if !ops.isEmpty { chunks.append(ops) }
      decodeBest = min(decodeBest, Clock.now() - t0)
      var state = ListState()
      try state.adopt(timeline.startDecoder().dictionary, aliases: DefinitionAliases())
      let t1 = Clock.now()
      events = 0
      for chunk in chunks {
        for i in 0..<chunk.count {
          _ = try state.apply(chunk, i)
          if chunk.isEvent(i) { events += 1 }
        }
      }
      foldBest = min(foldBest, Clock.now() - t1)
      precondition(state.numberOfAllItems >= 0)
    }
    print(
      "decode \(fmt(decodeBest)) s, fold \(fmt(foldBest)) s of \(events) events (best of 3, one thread)"
    )
  }
}

/// `listtape-bench __absorb-split LOG`: what reading a segment's definitions costs a seek
/// without an index (the decoder after the second event before the first restart, or its
/// last event, or event N): reading and inflating those frames alone, then the whole of it,
/// and the dictionary it comes to. Best of 3.
enum AbsorbSplit {
  static func run(_ path: String, through fixed: Int? = nil) throws {
    let reader = try LogReader(path: path)
    let start = LogStart(reader: reader, path: path)
    let restart = reader.restart(atOrBefore: reader.eventCount).map { Int($0.seq) } ?? 0
    let through = fixed ?? (restart > 2 ? restart - 2 : Int(reader.eventCount))
    var frames = 0
    var raw = 0
    let inflate = try Clock.best {
      (frames, raw) = (0, 0)
      try reader.forEachFrame(from: 1, through: UInt64(through)) { view in
        frames += 1
        raw += view.payload.count
        return true
      }
    }
    // As far as a reader of definitions inflates each event frame (`absorbDefinitions`).
    let prefix = FramePrefix(head: EventDecoder.definitionsHead) {
      EventDecoder.definitionsEnd(ofFrame: $0)
    }
    var inPrefix = 0
    let prefixes = try Clock.best {
      inPrefix = 0
      try reader.forEachFrame(from: 1, through: UInt64(through), eventPrefix: prefix) { view in
        inPrefix += view.payload.count
        return true
      }
    }
    var decoder = start.startDecoder()
    let whole = try Clock.best { decoder = try start.decoder(after: through) }
    let serial = try Clock.best {
      var d = start.startDecoder()
      try start.absorbDefinitions(
        &d, from: 1, through: through, start: reader.firstFrameOffset, aheadFrom: .max)
    }
    print("read on one thread: \(fmt(serial * 1000)) ms (best of 3)")
    let ids = decoder.dictionary
    let bare = ids.withoutStringTable()
    let table = Clock.best {
      var fresh = bare
      fresh.buildTable()
      precondition(fresh.heldBytes > 0)
    }
    print("its string table built in one piece: \(fmt(table * 1000)) ms (best of 3)")
    print(
      "dictionary: \(ids.count) entries, \(ids.bytes.count) bytes stored "
        + "(\(ids.heldBytes) held with its table and room)")
    print(
      "definitions of events 1...\(through) (\(frames) frames): inflating \(fmt(inflate * 1000)) ms "
        + "(\(raw) bytes), through their definitions \(fmt(prefixes * 1000)) ms (\(inPrefix) bytes), "
        + "with the definitions read and entered \(fmt(whole * 1000)) ms (best of 3)")
  }
}
