import Foundation
import ListTapeLog
import ListTapeModel

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Folds on dictionary entries: a 2.0 log's frames decoded into `FoldOps` (no `Event`, no
/// `String` per event) and folded with `ListState.apply(_:_:_:)`. Seeks and replay fold this
/// way; scans that hand each event to a caller (find, history, stats, the viewers) still
/// decode events (`foldEach`).
extension Timeline {
  /// Whether `foldOps` can fold this log on entries: format 2.0 without lost frames (a
  /// salvaged log's events after a gap are skipped one by one, which only the event path
  /// does).
  var foldsOnEntries: Bool { formatMajor >= 2 && reader.gaps.isEmpty }

  /// Folds events `from...through` into `state` and calls `body` after each with its
  /// number, its fault (nil when it applied), a way to make the `Event` (only for those who
  /// read it) and the state; `body` returns false to stop there. `decoder` ends standing
  /// right after the last event folded. Logs that cannot fold on entries go through
  /// `foldEach`.
  ///
  /// With `frames`, `onFrame` hears of every frame read to its end (2.0), after its events
  /// went to `body`, with the state after them. When the fold goes on entries, `onOp` gets
  /// each event's record (with the fold's dictionary, synced past it) just before `body`
  /// gets the event: a reader of ids by entry needs no `Event`.
  package func foldOps(
    _ state: inout ListState, _ decoder: inout EventDecoder, from: Int, through: Int,
    progress: ((Int, Int) -> Void)? = nil, frames: Bool = false,
    onFrame: (FrameEnd, inout ListState) -> Void = { _, _ in },
    onOp: (FoldOps, Int, inout FoldEntries) -> Void = { _, _, _ in },
    _ body: (Int, ListFault?, () throws(StoreError) -> Event, inout ListState) -> Bool
  ) throws(StoreError) {
    guard foldsOnEntries else {
      try foldEach(
        &state, &decoder, from: from, through: through, progress: progress, frames: frames,
        onFrame: onFrame
      ) { seq, event, fault, s in
        body(seq, fault, { () throws(StoreError) in event }, &s)
      }
      return
    }
    let last = min(through, eventCount)
    let first = max(from, 1)
    guard first <= last else { return }
    var entries = FoldEntries(decoder.dictionary)
    // Entries the fold had when the last frame ended (those after it are the next frame's).
    var framed = decoder.dictionary.count
    var failure: StoreError?
    var stoppedAt: Int?
    let path = self.path
    func fold(_ ops: inout FoldOps) -> Bool {
      defer { ops.removeAll() }
      for i in 0..<ops.count {
        let seq = ops.seqs[i]
        let fault: ListFault?
        do throws(CodecError) {
          fault = try state.apply(ops, i, &entries)
        } catch {
          failure = .undecodableEvent(event: seq, error, path: path)
          return false
        }
        if let end = ops.frameEnd(i) {
          do throws(CodecError) {
            let defined = try entries.entries(
              from: end.restarted ? 0 : min(framed, end.dictionaryCount))
            framed = end.dictionaryCount
            onFrame(
              FrameEnd(
                lastSeq: end.lastSeq, nextOffset: end.offset, segment: end.segment,
                dictionaryCount: end.dictionaryCount, restarted: end.restarted, entries: defined,
                lineage: entries.lineage),
              &state)
          } catch {
            failure = .undecodableEvent(event: seq, error, path: path)
            return false
          }
          continue
        }
        guard ops.isEvent(i) else { continue }
        if let progress, seq % Self.progressInterval == 0 { progress(seq, through) }
        onOp(ops, i, &entries)
        let go = body(
          seq, fault,
          { () throws(StoreError) in
            do throws(CodecError) {
              return try ops.event(i, &entries)
            } catch {
              throw .undecodableEvent(event: seq, error, path: path)
            }
          }, &state)
        if !go {
          stoppedAt = seq
          return false
        }
      }
      return true
    }
    if last - first >= EventPipeline.minimumEvents,
      let pipeline = OpsPipeline(
        reader: reader, path: path, from: first, through: last, decoder: decoder, frames: frames)
    {
      defer { skippedAfterGaps += pipeline.skipped }
      try pipeline.consume(fold)
      if let failure { throw failure }
      if let stoppedAt {
        // The producer decoded past the stop: position a decoder there again.
        decoder = try self.decoder(after: stoppedAt)
      } else {
        decoder = pipeline.decoder
      }
      return
    }
    var ops = FoldOps()
    var skipped = 0
    defer { skippedAfterGaps += skipped }
    try LogEvents.forEachOps(
      reader, path: path, decoder: &decoder, from: first, through: last, ops: &ops,
      frames: frames, skipped: { skipped += $0 }, fold)
    if let failure { throw failure }
  }
}

extension LogEvents {
  /// Decodes events `from...through` of a 2.0 log into `ops` (which starts empty) and calls
  /// `hand` whenever it holds `chunk` operations or more, and once at the end; `hand`
  /// empties it, or returns false to stop. `decoder` must hold the dictionary of the frame
  /// holding `from`. Frames the decoder cannot read (another segment, missing entries) are
  /// counted through `skipped`, as `forEach` does.
  static func forEachOps(
    _ reader: LogReader, path: String, decoder: inout EventDecoder, from first: Int,
    through last: Int, ops: inout FoldOps, chunk: Int = EventPipeline.chunkEvents,
    frames: Bool = false, skipped: (Int) -> Void, _ hand: (inout FoldOps) -> Bool
  ) throws(StoreError) {
    guard first <= last else { return }
    var failure: StoreError?
    var stopped = false
    do {
      try reader.forEachFrame(from: UInt64(first), through: UInt64(last)) { view in
        let firstSeq = Int(view.firstSeq)
        switch view.kind {
        case .dictionary:
          do throws(CodecError) {
            try decoder.restart(view.payload, seq: firstSeq, into: &ops)
            if frames {
              ops.endFrame(
                lastSeq: firstSeq - 1, offset: view.offset + view.length,
                segment: decoder.segment, dictionary: decoder.dictionary.count, restarted: true)
            }
          } catch {
            failure = .undecodableDictionary(event: firstSeq, error, path: path)
            return false
          }
          return true
        case .checkpoint:
          return true
        case .events:
          let outcome: FrameOutcome
          do throws(CodecError) {
            outcome = try decoder.decodeFrame(
              view.payload, firstSeq: firstSeq, count: view.eventCount, from: first,
              through: last, into: &ops)
          } catch {
            failure = .undecodableEvent(event: error.event ?? firstSeq, error, path: path)
            return false
          }
          if frames && outcome == .done {
            ops.endFrame(
              lastSeq: firstSeq + view.eventCount - 1, offset: view.offset + view.length,
              segment: decoder.segment, dictionary: decoder.dictionary.count, restarted: false)
          }
          if outcome == .gap {
            let lo = max(first, firstSeq)
            let hi = min(last, firstSeq + view.eventCount - 1)
            skipped(max(0, hi - lo + 1))
          }
          if ops.count >= chunk && !hand(&ops) {
            stopped = true
            return false
          }
          if case .stopped = outcome { return false }
          return true
        }
      }
    } catch {
      throw StoreError.log(error)
    }
    if let failure { throw failure }
    if !stopped && !ops.isEmpty { _ = hand(&ops) }
  }
}

/// Reads, inflates and decodes a run of a 2.0 log's events into `FoldOps` chunks on a
/// second thread while the caller's thread folds them: `EventPipeline`'s protocol (a
/// bounded queue of chunks, the reader owned by the producer until `consume` returns),
/// with operation buffers in place of events.
///
/// `@unchecked Sendable`: the queue and flags are only touched under `cond`; `reader` only
/// by the producer thread, whose results the caller reads after joining it.
final class OpsPipeline: @unchecked Sendable {
  private let reader: LogReader
  private let path: String
  private let from: Int
  private let through: Int
  private let frames: Bool
  private let cond = NSCondition()
  // Under `cond`:
  private var ready: [FoldOps] = []
  private var spare: [FoldOps] = []
  private var done = false
  private var failure: StoreError?
  private var stopped = false
  /// The caller's decoder on entry; after `consume`, the producer's, past event `through`.
  private(set) var decoder: EventDecoder
  /// Events in frames the decoder could not read (counted as `skippedAfterGaps`).
  private(set) var skipped = 0
  #if canImport(Darwin)
  private var thread: pthread_t?
  #else
  private var thread = pthread_t()
  #endif

  init?(
    reader: LogReader, path: String, from: Int, through: Int, decoder: EventDecoder,
    frames: Bool
  ) {
    self.reader = reader
    self.frames = frames
    self.path = path
    self.from = from
    self.through = through
    self.decoder = decoder
    let context = Unmanaged.passRetained(self).toOpaque()
    guard pthread_create(&thread, nil, { OpsPipeline.threadMain($0) }, context) == 0 else {
      Unmanaged<OpsPipeline>.fromOpaque(context).release()
      return nil
    }
  }

  private static func threadMain(_ context: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
    guard let context else { return nil }
    Unmanaged<OpsPipeline>.fromOpaque(context).takeRetainedValue().produce()
    return nil
  }

  /// Calls `body` with each chunk in order on this thread until it returns false. The
  /// producer's error is thrown once the chunks before it went to `body`; the producer
  /// has ended when this returns.
  func consume(_ body: (inout FoldOps) -> Bool) throws(StoreError) {
    defer { stopAndJoin() }
    var chunk = FoldOps()
    var used = false
    while true {
      cond.lock()
      if used {
        chunk.removeAll()
        spare.append(chunk)
        // Hold no second reference: the producer then reuses the buffers in place.
        chunk = FoldOps()
      }
      used = true
      while ready.isEmpty && !done { cond.wait() }
      if ready.isEmpty {
        let failure = self.failure
        cond.unlock()
        if let failure { throw failure }
        return
      }
      chunk = ready.removeFirst()
      cond.signal()
      cond.unlock()
      if !body(&chunk) { return }
    }
  }

  private func stopAndJoin() {
    cond.lock()
    stopped = true
    cond.broadcast()
    cond.unlock()
    #if canImport(Darwin)
    if let thread { pthread_join(thread, nil) }
    #else
    pthread_join(thread, nil)
    #endif
  }

  private func produce() {
    var decoder = self.decoder
    var ops = FoldOps()
    var skipped = 0
    var failure: StoreError?
    do throws(StoreError) {
      try LogEvents.forEachOps(
        reader, path: path, decoder: &decoder, from: from, through: through, ops: &ops,
        frames: frames, skipped: { skipped += $0 }, hand)
    } catch {
      failure = error
    }
    self.decoder = decoder
    cond.lock()
    self.skipped = skipped
    if !stopped { self.failure = failure }
    done = true
    cond.signal()
    cond.unlock()
  }

  /// Queues a full chunk, waiting while the queue is full, and replaces it with an empty
  /// one; false once the consumer has stopped.
  private func hand(_ ops: inout FoldOps) -> Bool {
    cond.lock()
    defer { cond.unlock() }
    while ready.count >= EventPipeline.depth && !stopped { cond.wait() }
    guard !stopped else { return false }
    ready.append(ops)
    ops = spare.popLast() ?? FoldOps()
    cond.signal()
    return true
  }
}
