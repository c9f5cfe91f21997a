import Foundation
import ListTapeLog
import ListTapeModel
import ListTapeStore

/// Reads, inflates and decodes a run of a log's events into record chunks on a second
/// thread (`LogEvents.decode`) while the caller's thread folds them: a queue bounded in
/// chunks and in bytes, so memory stays a few chunks plus the state whatever the log's
/// length and however large its events.
///
/// `@unchecked Sendable`: the queue and flags are only touched under `cond`; `reader` only
/// by the producer thread until `consume` returns (it joins the thread), after which the
/// caller reads `decoder` and `skipped`.
final class ReadAhead: @unchecked Sendable {
  /// Chunks decoded ahead of the fold: enough for the reading thread (idle half the time)
  /// to get through a dictionary restart's frame before the fold catches up with it.
  static let depth = 24
  /// Bytes of records (`FoldOps.heldBytes`) the queue holds at most, beside one chunk of
  /// any size: 24 chunks of the usual events are a few MB, of events of millions of items
  /// each they were hundreds.
  static let byteBudget = 32 << 20
  /// Runs shorter than this are decoded on the caller's thread: starting a thread costs
  /// more than it saves.
  static let minimumEvents = 16_384

  private let reader: LogReader
  private let path: String
  private let from: Int
  private let through: Int
  private let frames: Bool
  private let chunkBytes: Int
  private let byteBudget: Int
  private let cond = NSCondition()
  // Under `cond`:
  private var ready: [FoldOps] = []
  /// The bytes of the chunks in `ready` (`FoldOps.heldBytes`, which a queued chunk keeps).
  private var queuedBytes = 0
  /// Whether the reading thread waits for room in the queue.
  private var producerWaits = false
  private var spare: [FoldOps] = []
  private var done = false
  private var failure: StoreError?
  private var stopped = false
  /// Whether the fold waits for a chunk.
  private var waiting = false
  /// The caller's decoder on entry; after `consume`, the producer's.
  private(set) var decoder: EventDecoder
  /// Events the decoder passed over (a salvaged log's), counted as `skippedAfterGaps`.
  private(set) var skipped = 0
  /// Records handed to the fold's queue so far (read under `cond`).
  private(set) var decoded = 0
  private var thread: JoinableThread?

  /// Starts reading ahead with `decoder`, which should be handed over (no other copy
  /// kept): the reading thread's first definition would otherwise copy its dictionary and
  /// string table. When no thread could be started (`isRunning` false), `decoder` is
  /// there to take back. Chunks are cut at `chunkBytes` bytes of records, and the queue
  /// holds `byteBudget` bytes of them at most beside one chunk.
  init(
    reader: LogReader, path: String, from: Int, through: Int, decoder: consuming EventDecoder,
    frames: Bool, chunkBytes: Int = LogEvents.chunkBytes, byteBudget: Int = byteBudget
  ) {
    self.reader = reader
    self.frames = frames
    self.chunkBytes = chunkBytes
    self.byteBudget = byteBudget
    self.path = path
    self.from = from
    self.through = through
    self.decoder = decoder
    thread = JoinableThread({ [self] in produce() })
  }

  /// Whether the reading thread was started.
  var isRunning: Bool { thread != nil }

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
      waiting = true
      while ready.isEmpty && !done { cond.wait() }
      waiting = false
      if ready.isEmpty {
        let failure = self.failure
        cond.unlock()
        if let failure { throw failure }
        return
      }
      chunk = ready.removeFirst()
      queuedBytes -= chunk.heldBytes
      cond.signal()
      cond.unlock()
      if !body(&chunk) { return }
    }
  }

  /// The queue as it stands: its chunks, their bytes, and whether the reading thread waits
  /// for room (for tests of its bounds).
  var queue: (chunks: Int, bytes: Int, producerWaits: Bool) {
    cond.lock()
    defer { cond.unlock() }
    return (ready.count, queuedBytes, producerWaits)
  }

  private func stopAndJoin() {
    cond.lock()
    stopped = true
    cond.broadcast()
    cond.unlock()
    thread?.join()
  }

  private func produce() {
    // Moved out, so that this is its only copy.
    var decoder = EventDecoder()
    swap(&decoder, &self.decoder)
    var ops = FoldOps()
    var skipped = 0
    var failure: StoreError?
    do throws(StoreError) {
      try LogEvents.decode(
        reader, path: path, decoder: &decoder, from: from, through: through, ops: &ops,
        bytes: chunkBytes, frames: frames, starving: starving, skipped: { skipped += $0 }, hand)
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

  /// Whether the fold waits on an empty queue (the reading thread then hands each frame's
  /// records as soon as they are decoded).
  private func starving() -> Bool {
    cond.lock()
    defer { cond.unlock() }
    return waiting && ready.isEmpty
  }

  /// Queues a full chunk, waiting while the queue is full (in chunks, or in bytes unless
  /// it is empty), and replaces it with an empty one; false once the consumer has stopped.
  private func hand(_ ops: inout FoldOps) -> Bool {
    let bytes = ops.heldBytes
    cond.lock()
    defer { cond.unlock() }
    while !stopped
      && (ready.count >= Self.depth || !ready.isEmpty && queuedBytes + bytes > byteBudget)
    {
      producerWaits = true
      cond.wait()
    }
    producerWaits = false
    guard !stopped else { return false }
    decoded += ops.count
    ready.append(ops)
    queuedBytes += bytes
    ops = spare.popLast() ?? FoldOps()
    cond.signal()
    return true
  }
}
