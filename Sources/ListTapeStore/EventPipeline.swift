import Foundation
import ListTapeLog
import ListTapeModel

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads, inflates and decodes a run of events on a second thread while the caller's thread
/// folds them: the fold is most of a replay's time, so the two halves overlap on two cores.
///
/// The producer thread owns the timeline's `LogReader` (not thread safe) from `init` until
/// `consume` returns; the caller must not use the reader in between. Events travel in chunks
/// through a queue of at most `depth` chunks, so memory stays bounded whatever the log's
/// length. `consume` stops the producer and joins its thread before it returns.
///
/// `@unchecked Sendable`: the queue and flags are only touched under `cond`; `reader` only
/// by the producer thread, whose results (`decoder`, `decoded`) the caller reads after
/// joining it.
final class EventPipeline: @unchecked Sendable {
  /// Runs shorter than this stay on the caller's thread: there the overlap would save well
  /// under a millisecond, and short reads (single events, decoders rebuilt from a reset
  /// point, nearby cursor moves) need no thread.
  static let minimumEvents = 8_192
  /// Events per chunk: the lock is taken about 250 times per million events, and the
  /// events in flight stay a few MiB.
  static let chunkEvents = 4_096
  /// Full chunks the queue holds before the producer waits.
  static let depth = 3

  /// Decoded events in order with their numbers and fold hints, and the events after a
  /// salvaged gap skipped among them. Parallel arrays rather than one of tuples: handing an
  /// event from an array of tuples to the fold copied it through a generic witness.
  struct Chunk {
    var seqs: [Int] = []
    var events: [Event] = []
    /// `FoldHint(events[i])`, made here so that the folding thread only prefetches.
    var hints: [FoldHint] = []
    var skipped = 0
    /// Frames that ended among these events (only when the pipeline reports frames).
    var frames: [FrameEnd] = []

    mutating func removeAll() {
      seqs.removeAll(keepingCapacity: true)
      events.removeAll(keepingCapacity: true)
      hints.removeAll(keepingCapacity: true)
      skipped = 0
      frames.removeAll()
    }
  }

  private let reader: LogReader
  private let path: String
  private let from: Int
  private let through: Int
  private let reportsFrames: Bool
  private let cond = NSCondition()
  // Under `cond`:
  private var ready: [Chunk] = []
  private var spare: [Chunk] = []
  private var done = false
  private var failure: StoreError?
  private var stopped = false
  /// The caller's decoder on entry; once `consume` has taken every event, the producer's,
  /// positioned after event `through`.
  private(set) var decoder: EventDecoder
  /// Events skipped after a salvaged gap, among the chunks handed to the caller.
  private(set) var skippedAfterGaps = 0
  /// Events the producer decoded, once `consume` has returned: after an early stop, only
  /// what the queue held past it.
  private(set) var decoded = 0
  #if canImport(Darwin)
  private var thread: pthread_t?
  #else
  private var thread = pthread_t()
  #endif

  /// Starts reading events `from...through` (within the readable prefix) on a new thread,
  /// decoding with `decoder`; nil if no thread could be started.
  ///
  /// With `reportsFrames`, `consume` also hands over where each frame ended (`FrameEnd`).
  init?(
    reader: LogReader, path: String, from: Int, through: Int, decoder: EventDecoder,
    reportsFrames: Bool = false
  ) {
    self.reader = reader
    self.path = path
    self.from = from
    self.through = through
    self.reportsFrames = reportsFrames
    self.decoder = decoder
    let context = Unmanaged.passRetained(self).toOpaque()
    guard pthread_create(&thread, nil, { EventPipeline.threadMain($0) }, context) == 0 else {
      Unmanaged<EventPipeline>.fromOpaque(context).release()
      return nil
    }
  }

  private static func threadMain(_ context: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
    guard let context else { return nil }
    Unmanaged<EventPipeline>.fromOpaque(context).takeRetainedValue().produce()
    return nil
  }

  // MARK: Consumer

  /// Calls `body` with each event in order on this thread until it returns false; returns
  /// the event it stopped at (nil when it took them all). Before each event, `prefetch`
  /// gets the chunk's hints and the event's index among them. The producer's error is
  /// thrown once the events before it went to `body`. The producer has ended when this
  /// returns.
  func consume(
    prefetch: (UnsafeBufferPointer<FoldHint>, Int) -> Void,
    onFrame: (FrameEnd) -> Void = { _ in }, _ body: (Int, Event) -> Bool
  ) throws(StoreError) -> Int? {
    defer { stopAndJoin() }
    var chunk = Chunk()
    while let next = try take(recycling: &chunk) {
      chunk = next
      var frame = 0
      let stop = chunk.hints.withUnsafeBufferPointer { hints -> Int? in
        for i in chunk.events.indices {
          // Frames that ended before this event, once the events before them are folded.
          while frame < chunk.frames.count && chunk.frames[frame].lastSeq < chunk.seqs[i] {
            onFrame(chunk.frames[frame])
            frame += 1
          }
          prefetch(hints, i)
          if !body(chunk.seqs[i], chunk.events[i]) { return chunk.seqs[i] }
        }
        return nil
      }
      if let stop { return stop }
      while frame < chunk.frames.count {
        onFrame(chunk.frames[frame])
        frame += 1
      }
    }
    return nil
  }

  /// The next chunk, after handing `used` back to the producer for reuse; nil at the end.
  private func take(recycling used: inout Chunk) throws(StoreError) -> Chunk? {
    cond.lock()
    defer { cond.unlock() }
    if used.events.capacity > 0 { spare.append(used) }
    used = Chunk()
    while ready.isEmpty && !done { cond.wait() }
    if ready.isEmpty {
      if let failure { throw failure }
      return nil
    }
    let next = ready.removeFirst()
    skippedAfterGaps += next.skipped
    cond.signal()
    return next
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

  // MARK: Producer

  /// Reads and decodes (`LogEvents`, as the timeline's own scans do) and queues the events
  /// a chunk at a time until the end, an error, or the consumer stops.
  private func produce() {
    var decoder = self.decoder
    var count = 0
    var chunk = Chunk()
    var failure: StoreError?
    func queue(_ seq: Int, _ event: Event) -> Bool {
      chunk.events.append(event)
      chunk.hints.append(FoldHint(event))
      chunk.seqs.append(seq)
      count += 1
      return chunk.events.count < Self.chunkEvents || hand(&chunk)
    }
    do throws(StoreError) {
      try LogEvents.forEach(
        reader, path: path, decoder: &decoder, from: from, through: through,
        skipped: { chunk.skipped += $0 },
        onFrame: reportsFrames ? { chunk.frames.append($0) } : nil, queue)
    } catch {
      failure = error
    }
    self.decoder = decoder
    decoded = count
    cond.lock()
    if !stopped {
      if !chunk.events.isEmpty || chunk.skipped > 0 { ready.append(chunk) }
      self.failure = failure
    }
    done = true
    cond.signal()
    cond.unlock()
  }

  /// Queues a full chunk, waiting while the queue is full, and replaces it with an empty
  /// one; false once the consumer has stopped.
  private func hand(_ chunk: inout Chunk) -> Bool {
    cond.lock()
    while ready.count >= Self.depth && !stopped { cond.wait() }
    guard !stopped else {
      cond.unlock()
      return false
    }
    ready.append(chunk)
    chunk = spare.popLast() ?? Chunk()
    cond.signal()
    cond.unlock()
    // Release the consumed events here, off the folding thread.
    chunk.removeAll()
    return true
  }
}
