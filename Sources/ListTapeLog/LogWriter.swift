import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Appends records and checkpoints to a log: the only process allowed to write it.
///
/// Records are batched into frames (group commit): a frame is cut when it reaches
/// `maxEventsPerFrame` events or `maxRawBytesPerFrame` bytes, on `flush()`, or by a background
/// thread once its first event is `batchDelay` old; each frame is one `write()`. Thread safe.
/// After any write or fsync failure every call throws `.poisoned`: reopen to recover.
package final class LogWriter: @unchecked Sendable {
  /// The log file.
  package let path: String
  /// What was cut from a torn tail when the log was opened, or nil if nothing was.
  package let recovery: RecoveryReport?
  private let core: WriterCore

  private init(path: String, recovery: RecoveryReport?, core: WriterCore) {
    self.path = path
    self.recovery = recovery
    self.core = core
  }

  deinit { try? core.close() }

  /// Creates the log (its header written and synced under a temporary name, then linked into
  /// place) or opens it for appending.
  ///
  /// Takes an exclusive lock (a second writer fails at once with `.locked`). On an existing log
  /// it scans every frame: a torn tail, or damage followed only by frames written after the
  /// last sync (what a power loss leaves), is cut, saved to `<path>.tail-<offset>.broken` and
  /// described in `recovery`; other mid-file damage throws `.damaged` (see
  /// `LogReader.salvage`).
  ///
  /// `frames` makes the payload of each event frame of a 2.0 log (ignored for a 1.0 log);
  /// without it a 2.0 event frame holds its records as they are.
  package static func open(
    path: String, options: LogWriterOptions = LogWriterOptions(),
    frames: (any FramePayloadEncoder)? = nil
  ) throws(LogError) -> LogWriter {
    try open(path: path, options: options, frames: frames, files: SystemFiles.shared)
  }

  /// Opens through `files` (a simulated disk in the power-loss tests).
  package static func open(
    path: String, options: LogWriterOptions, frames: (any FramePayloadEncoder)? = nil,
    files: any FileLayer
  ) throws(LogError) -> LogWriter {
    var created = false
    var fd: Int32 = -1
    // Another process may create the log between our open and our link: then open again.
    // A link to nothing is followed: the log is created where it points.
    for _ in 0..<3 where fd < 0 {
      switch files.open(path, O_RDWR | O_APPEND) {
      case .success(let f): fd = f
      case .failure(ENOENT):
        let target = Posix.creationTarget(path)
        do throws(LogError) {
          if let f = try create(path: target, options: options, files: files) {
            fd = f
            created = true
          }
        } catch {
          guard target != path, error.kind == .io else { throw error }
          throw .io(
            "cannot create", path: "\(target), where \(path) links", errno: error.errno ?? EIO)
        }
      case .failure(let e): throw .io("cannot open", path: path, errno: e)
      }
    }
    guard fd >= 0 else { throw .io("cannot create", path: path, errno: EEXIST) }
    do throws(LogError) {
      if !created { try lock(fd, path: path) }
      let prepared = try WriterCore.prepare(
        fd: fd, path: path, options: options, created: created, files: files)
      let core = try WriterCore(
        fd: fd, path: path, options: options, frames: frames, files: files, prepared: prepared)
      core.startFlusher()
      return LogWriter(path: path, recovery: prepared.recovery, core: core)
    } catch {
      _ = files.close(fd)
      throw error
    }
  }

  /// flock(LOCK_EX|LOCK_NB), retried for a few milliseconds so a reader's liveness probe
  /// (a momentary shared lock) is not mistaken for a writer.
  static func lock(_ fd: Int32, path: String) throws(LogError) {
    for attempt in 0..<10 {
      if flock(fd, LOCK_EX | LOCK_NB) == 0 { return }
      let e = errno
      guard e == EWOULDBLOCK || e == EINTR else {
        throw .io("cannot lock", path: path, errno: e)
      }
      if attempt < 9 { usleep(2000) }
    }
    throw LogError(
      .locked, path: path, message: "log is being recorded by another process", errno: EWOULDBLOCK)
  }

  /// Events in the log, pending ones included; the next record gets `eventCount + 1`.
  package var eventCount: UInt64 { core.eventCount }

  /// Appended events not yet written in a frame (what a kill -9 now would lose).
  package var unwrittenEvents: Int { core.unwrittenEvents }

  /// Times the background flusher woke up (deadlines reached, new work, close).
  package var flusherWakeups: Int { core.flusherWakeups }

  /// Full batches handed to the flusher thread to frame and write (`cutsAhead`).
  package var batchesCutAhead: Int { core.batchesCutAhead }

  /// The log's format major version (1 or 2): an existing log keeps its own.
  package var formatMajor: UInt16 { core.major }

  /// Appends one record (an encoded event); it is written with its frame.
  /// - Complexity: amortised O(record size); a frame cut compresses and writes.
  package func append(_ record: UnsafeRawBufferPointer) throws(LogError) {
    try core.append(record)
  }

  /// Appends one record held in an array.
  package func append(_ record: [UInt8]) throws(LogError) {
    let failure: LogError? = record.withUnsafeBytes { p in
      do throws(LogError) { try core.append(p) } catch { return error }
      return nil
    }
    if let failure { throw failure }
  }

  /// True when the caller should call `appendCheckpoint` with the state after `eventCount` events.
  package var checkpointDue: Bool { core.checkpointDue }

  /// Whether the caller owes a checkpoint (`checkpointDue`) and a recovery point: a
  /// dictionary restart and its checkpoint, once the frames since the last restart reach
  /// `LogWriterOptions.recoveryPointRatio` × its size on disk; before the first,
  /// `restartEstimate` (bytes) stands for that size. One lock: recorders ask after every
  /// event.
  package func due(restartEstimate: UInt64) -> (checkpoint: Bool, recoveryPoint: Bool) {
    core.due(restartEstimate: restartEstimate)
  }

  /// Writes the folded state after exactly `eventCount` events (pending events are cut first).
  /// `flushPoints` are offsets where the compressor starts a new block (one per column).
  package func appendCheckpoint(_ state: UnsafeRawBufferPointer, flushPoints: [Int] = [])
    throws(LogError)
  {
    try core.appendFrame(Format.typeCheckpoint, state, flushPoints: flushPoints)
  }

  /// Writes the folded state held in an array.
  package func appendCheckpoint(_ state: [UInt8], flushPoints: [Int] = []) throws(LogError) {
    let failure: LogError? = state.withUnsafeBytes { p in
      do throws(LogError) {
        try core.appendFrame(Format.typeCheckpoint, p, flushPoints: flushPoints)
      } catch { return error }
      return nil
    }
    if let failure { throw failure }
  }

  /// Format 2.0: starts a new segment whose dictionary is `entries` (pending events are cut
  /// first); event frames written after it belong to the segment beginning at the next event.
  package func appendDictionary(_ entries: [UInt8], flushPoints: [Int] = []) throws(LogError) {
    let failure: LogError? = entries.withUnsafeBytes { p in
      do throws(LogError) {
        try core.appendFrame(Format.typeDictionary, p, flushPoints: flushPoints)
      } catch { return error }
      return nil
    }
    if let failure { throw failure }
  }

  /// Records that the next `count` event numbers hold no event (a META gap frame, as
  /// salvage writes for lost events; pending events are cut first): a copy of a salvaged
  /// log keeps its numbering. Readers call the states after it inexact until a recovery
  /// point.
  package func appendGap(_ count: UInt64) throws(LogError) { try core.appendGap(count) }

  /// Format 2.0: the event number the current segment began before (0: the log's start).
  package var segment: UInt64 { core.currentSegment }

  /// Writes the pending frame now (kill -9 safe once this returns).
  package func flush() throws(LogError) { try core.flush() }

  /// Writes the pending frame and fdatasyncs (power-loss safe once this returns).
  package func sync() throws(LogError) { try core.sync() }

  /// Flushes, syncs (unless the policy is `.never`), stops the background thread, unlocks.
  package func close() throws(LogError) { try core.close() }

  /// Where the writer is in its life: open, writing, flushing, failed or closed.
  package var state: WriterState { core.currentState }
}
