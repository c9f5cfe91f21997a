import Foundation
import ListTapeLog

/// Reads and inflates a run of a log's frames on a second thread, up to `aheadBytes` of
/// them ahead of the caller's thread, which takes each as an owned copy: reading
/// definitions then costs the slower of inflating and entering them, not their sum.
///
/// `@unchecked Sendable`: the queue and flags are only touched under `cond`; `reader` only
/// by the producer thread until `consume` returns (it joins the thread). A thread of its
/// own, not a dispatch queue's: callers may be workers of `concurrentPerform`.
package final class FramesAhead: @unchecked Sendable {
  /// Runs shorter than this are read on the caller's thread: a thread costs more.
  package static let minimumEvents = 65_536
  /// Bytes of inflated frames kept ahead of the consumer: enough to inflate on while it
  /// enters a frame of 100,000 new ids (~40 average frames; four frames left the reader
  /// waiting there, then the consumer waiting on it: docs/performance.md).
  static let aheadBytes = 4 << 20
  /// Frames kept ahead at most, however small.
  static let depth = 256
  /// Buffers kept for reuse at most: each keeps the size of the largest frame it held.
  static let spares = 8

  /// A frame as `LogReader.forEachFrame` gave it, its payload (or prefix) copied.
  struct Frame {
    var kind: FrameView.Kind
    var firstSeq: Int
    var eventCount: Int
    var payload: [UInt8]
  }

  private let reader: LogReader
  private let from: Int
  private let through: Int
  private let start: UInt64
  private let prefix: FramePrefix?
  private let cond = NSCondition()
  // Under `cond`:
  private var ready: [Frame] = []
  private var readyBytes = 0
  private var spare: [[UInt8]] = []
  private var done = false
  private var stopped = false
  private var failure: LogError?
  private var thread: JoinableThread?

  /// Starts the producer thread; nil when no thread can be started.
  init?(reader: LogReader, from: Int, through: Int, start: UInt64, prefix: FramePrefix?) {
    self.reader = reader
    self.from = from
    self.through = through
    self.start = start
    self.prefix = prefix
    guard let thread = JoinableThread({ [self] in produce() }) else { return nil }
    self.thread = thread
  }

  /// Calls `body` with each frame in order on this thread until it returns false; the
  /// reader's error is thrown once the frames before it went to `body`. The producer has
  /// ended when this returns.
  func consume(_ body: (Frame) -> Bool) throws(LogError) {
    defer {
      cond.lock()
      stopped = true
      cond.broadcast()
      cond.unlock()
      thread?.join()
    }
    while true {
      cond.lock()
      while ready.isEmpty && !done { cond.wait() }
      guard !ready.isEmpty else {
        let failure = self.failure
        cond.unlock()
        if let failure { throw failure }
        return
      }
      var frame = ready.removeFirst()
      readyBytes -= frame.payload.count
      cond.signal()
      cond.unlock()
      let go = body(frame)
      // The payload's buffer goes back to the producer with no second reference to it.
      var payload: [UInt8] = []
      swap(&payload, &frame.payload)
      cond.lock()
      if spare.count < Self.spares { spare.append(consume payload) }
      cond.unlock()
      if !go { return }
    }
  }

  /// Frames inflated and waiting for the consumer.
  var waiting: Int {
    cond.lock()
    defer { cond.unlock() }
    return ready.count
  }

  private func produce() {
    var failure: LogError?
    do {
      try reader.forEachFrame(
        from: UInt64(from), through: UInt64(max(through, 0)), start: start, eventPrefix: prefix
      ) { view in
        cond.lock()
        while (ready.count >= Self.depth || readyBytes >= Self.aheadBytes) && !stopped {
          cond.wait()
        }
        var bytes = spare.popLast() ?? []
        let stop = stopped
        cond.unlock()
        guard !stop else { return false }
        bytes.removeAll(keepingCapacity: true)
        bytes.append(contentsOf: view.payload)
        let frame = Frame(
          kind: view.kind, firstSeq: Int(view.firstSeq), eventCount: view.eventCount,
          payload: bytes)
        cond.lock()
        readyBytes += frame.payload.count
        ready.append(frame)
        cond.signal()
        cond.unlock()
        return true
      }
    } catch {
      failure = error
    }
    cond.lock()
    if !stopped { self.failure = failure }
    done = true
    cond.signal()
    cond.unlock()
  }
}
