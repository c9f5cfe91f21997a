/// When the writer forces written frames to stable storage.
public enum FsyncPolicy: Sendable, Equatable {
  /// fdatasync after every frame: nothing acknowledged is lost on power loss; slowest.
  case always
  /// A background fdatasync at most once per `seconds` (default 1 s): power loss loses at most
  /// that much; kill -9 loses nothing written.
  case interval(seconds: Double)
  /// Never fsync (tests, benchmarks): kill -9 is still safe, power loss may lose anything.
  case never
}

/// Tuning of a `LogWriter`: durability, frame batching, checkpoint spacing, compression.
package struct LogWriterOptions: Sendable, Equatable {
  /// Durability policy; default `.interval(seconds: 1)`.
  package var fsync: FsyncPolicy = .interval(seconds: 1)
  /// Cut a frame once it holds this many events (1...65535).
  package var maxEventsPerFrame = 4096
  /// Cut a frame once its records (with their length prefixes) reach this many bytes.
  package var maxRawBytesPerFrame = 64 << 10
  /// Write pending events at most this long (seconds) after the first of them arrived.
  package var batchDelay = 0.05
  /// `checkpointDue` turns true after this many events since the last checkpoint...
  package var maxEventsBetweenCheckpoints: UInt64 = 50_000
  /// ...or once the frames written since it reach this multiple of its on-disk size...
  package var checkpointBytesRatio: UInt64 = 4
  /// ...but never for fewer bytes than this (so tiny states do not checkpoint constantly).
  package var minCheckpointSpacingBytes: UInt64 = 64 << 10
  /// zlib level (0...9) for every frame (why 3: docs/log-format.md; `Recorder.options`, which
  /// the tools and the store write 2.0 logs with, takes 4).
  package var compressionLevel: Int32 = 3
  /// Event encoding version written into a new log's header (the model's schema).
  package var eventCodecVersion: UInt32 = 0
  /// Checkpoint encoding version written into a new log's header.
  package var stateCodecVersion: UInt32 = 0
  /// Format of a new log: 1 (frames of length-prefixed records) or 2 (event frames whose
  /// payload a `FramePayloadEncoder` makes; dictionary frames). An existing log keeps its
  /// own format.
  package var formatMajor: UInt16 = 1
  /// The data protection class a new log is created with (Apple platforms); nil leaves the
  /// system's default. Files the writer saves beside a log (a cut tail) get the log's class.
  package var protection: ProtectionClass?
  /// PARITY frames after every group of frames (docs/log-format.md, "Parity"); nil writes
  /// none. Recorders of 2.0 logs write them.
  package var parity: ParityOptions?
  /// `recoveryPointDue` turns true once the frames since the last dictionary restart (or
  /// the log's start) reach this multiple of the last restart's size on disk (its
  /// dictionary and checkpoint frames); 0 never. Spaces self-contained points by cost.
  package var recoveryPointRatio: UInt64 = 0
  /// `recoveryPointDue` also turns true once this many events came since the last restart
  /// (0: never), when the frames since it reach half of `recoveryPointRatio` × its size.
  package var recoveryPointEvents: UInt64 = 0
  /// The flusher's clock: nil, the system's monotonic clock and a flusher thread; a
  /// `ManualClock` makes a writer's background work happen only when it is advanced (tests
  /// that need the same operations every run).
  package var clock: ManualClock?
  /// Full batches are compressed and written on the flusher thread while appends fill the
  /// next one (one frame in flight; a failed write throws from the next call). Not under
  /// `.always` (an append returns with its frame durable) or a `ManualClock` (no thread).
  package var cutsAhead = false

  /// The defaults above.
  package init() {}
}

/// Turns the records pending for a 2.0 event frame into the frame's payload (the model's
/// columnar layout). Called by the writer, under its lock, on whichever thread cuts.
package protocol FramePayloadEncoder: AnyObject, Sendable {
  /// Appends to `out` the payload of `count` records (each a LEB128 length and its bytes)
  /// of the segment that began before event `segment` (0: the log's start); adds to
  /// `flushPoints` the payload offsets where a compressor should start new blocks. Returns
  /// nil, or why the records could not be encoded.
  func payload(
    records: UnsafeRawBufferPointer, count: Int, segment: UInt64, into out: inout [UInt8],
    flushPoints: inout [Int]
  ) -> String?
}

/// What the writer cut off when it opened a log with a torn tail.
package struct RecoveryReport: Sendable, Equatable, CustomStringConvertible {
  /// Where the cut was made (the end of the last valid frame).
  package var offset: UInt64
  /// How many bytes were cut.
  package var bytesCut: UInt64
  /// The file holding the cut bytes, `<log>.tail-<offset>.broken`.
  package var savedTo: String?
  /// The last event kept.
  package var lastGoodEvent: UInt64
  /// Why the bytes at `offset` did not form a frame.
  package var reason: DamageReason
  /// Whether readable frames followed the cut: all written after the last sync, so the
  /// damage is what a power loss leaves (docs/log-format.md, "Power loss").
  package var framesFollowed = false

  package var description: String {
    var s = "discarded \(bytesCut) bytes of incomplete tail at byte \(offset)"
    s += " (after event \(lastGoodEvent)): \(reason)"
    if framesFollowed { s += "; the frames after it were written after the last sync" }
    if let savedTo { s += "; saved to \(savedTo)" }
    return s
  }
}
