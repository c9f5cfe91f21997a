import Foundation
import ListTapeLog
import ListTapeModel

/// Records events into a log while folding them, so it always knows the current state and
/// can warn about faults as they arrive. Faults are recorded: the log is the evidence.
package final class Recorder {
  let writer: LogWriter
  /// The state after every recorded event.
  package private(set) var state: ListState
  var encoder: EventEncoder
  var scratch: [UInt8] = []
  /// What recovery cut from a torn tail when the log was opened, if anything.
  package var recovery: RecoveryReport? { writer.recovery }
  /// The log being recorded.
  package var path: String { writer.path }

  /// Writer tuning used by the tools: checkpoints close enough together that a seek replays
  /// only a few thousand events, far enough apart that they stay a small share of the file.
  static func options(_ fsync: FsyncPolicy) -> LogWriterOptions {
    var o = LogWriterOptions()
    o.fsync = fsync
    // Checkpoints: at most 200k events apart (a seek folds at most that many), and at
    // least four times their own size of events apart (so they stay a small share of the
    // file), whichever comes first; see docs/log-format.md.
    o.maxEventsBetweenCheckpoints = 200_000
    o.eventCodecVersion = 1
    o.stateCodecVersion = UInt32(Checkpoint.version)
    return o
  }

  /// Opens LOG for appending (creating it if absent), cutting a torn tail, and folds what it
  /// already holds through its last checkpoint.
  package static func open(path: String, fsync: FsyncPolicy = .interval(seconds: 1))
    throws(StoreError)
    -> Recorder
  {
    try open(path: path, options: options(fsync))
  }

  /// Opens with explicit writer tuning (tests use tight checkpoint spacing).
  static func open(path: String, options: LogWriterOptions) throws(StoreError) -> Recorder {
    try open(path: path, options: options, files: SystemFiles.shared)
  }

  /// Opens through `files` (a simulated disk in tests); `onFold` sees the number of each
  /// event folded to rebuild the state (at most one checkpoint interval of them).
  static func open(
    path: String, options: LogWriterOptions, files: any FileLayer,
    onFold: ((Int) -> Void)? = nil
  ) throws(StoreError) -> Recorder {
    let writer: LogWriter
    do {
      writer = try LogWriter.open(path: path, options: options, files: files)
    } catch {
      throw .log(error)
    }
    var state = ListState()
    var decoder = EventDecoder()
    if writer.eventCount > 0 {
      let timeline = try Timeline(path: path)
      let n = timeline.eventCount
      var start = 1
      if let cp = try timeline.checkpoint(atOrBefore: n) {
        state = cp.checkpoint.state
        decoder = try timeline.decoder(after: cp.seq)
        start = cp.seq + 1
      }
      _ = try timeline.fold(&state, &decoder, from: start, through: n) { seq, _ in
        onFold?(seq)
        return false
      }
    }
    return Recorder(writer: writer, state: state, encoder: EventEncoder(continuing: decoder))
  }

  init(writer: LogWriter, state: ListState, encoder: EventEncoder) {
    self.writer = writer
    self.state = state
    self.encoder = encoder
  }

  /// Events in the log so far (the next one gets `eventCount + 1`).
  package var eventCount: Int { Int(writer.eventCount) }

  /// Milliseconds since the Unix epoch, now.
  static func now() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded()) }

  /// Stamps a missing time with now, appends the event, folds it; returns the fault when the
  /// event faulted (it is recorded anyway).
  @discardableResult
  package func record(_ event: Event) throws(StoreError) -> ListFault? {
    var event = event
    if event.time == nil { event.time = Self.now() }
    scratch.removeAll(keepingCapacity: true)
    encoder.encode(event, into: &scratch)
    do {
      try writer.append(scratch)
    } catch {
      throw .log(error)
    }
    var fault: ListFault?
    do throws(ListFault) {
      try state.apply(event)
    } catch {
      fault = error
    }
    if writer.checkpointDue {
      do {
        try writer.appendCheckpoint(Checkpoint(state: state, lastTime: encoder.lastTime).encoded())
      } catch {
        throw .log(error)
      }
    }
    return fault
  }

  /// Forces everything recorded so far to stable storage.
  package func sync() throws(StoreError) {
    do {
      try writer.sync()
    } catch {
      throw .log(error)
    }
  }

  /// Writes what is pending, syncs, and releases the log.
  package func close() throws(StoreError) {
    do {
      try writer.close()
    } catch {
      throw .log(error)
    }
  }
}
