/// When a writer asks its caller for a checkpoint (`checkpointDue`) or a recovery point
/// (`recoveryPointDue`): counters of what was written since the last of each, fed by every
/// frame written. The writer does not fold; the caller answers with the state.
struct CheckpointPolicy {
  let options: LogWriterOptions
  private(set) var eventsSinceCheckpoint: UInt64
  private(set) var bytesSinceCheckpoint: UInt64
  private(set) var lastCheckpointLength: UInt64
  /// Bytes of frames since the last dictionary frame (or the log's start).
  private(set) var bytesSinceRestart: UInt64
  /// Events since the last dictionary frame (or the log's start).
  private(set) var eventsSinceRestart: UInt64
  /// The last recovery point's size: its dictionary frame and the checkpoint right after.
  private(set) var lastRestartCost: UInt64
  /// The last frame was a dictionary frame: a checkpoint now completes its recovery point.
  private var restartOpen = false

  /// The counters as the scan of an existing log left them.
  init(options: LogWriterOptions, scan: FrameScan) {
    self.options = options
    eventsSinceCheckpoint = scan.lastSeq - (scan.lastCheckpointSeq ?? 0)
    bytesSinceCheckpoint = scan.bytesSinceCheckpoint
    lastCheckpointLength = scan.lastCheckpointLength
    bytesSinceRestart = scan.bytesSinceRestart
    eventsSinceRestart = scan.lastSeq - min(scan.lastSeq, scan.lastRestartSeq &- 1)
    if scan.lastRestartSeq == 0 { eventsSinceRestart = scan.lastSeq }
    lastRestartCost = scan.lastRestartCost
  }

  /// At least `maxEventsBetweenCheckpoints` events since the last checkpoint, or frames
  /// since it reaching `max(minCheckpointSpacingBytes, checkpointBytesRatio × its size)`.
  var checkpointDue: Bool {
    guard eventsSinceCheckpoint > 0 else { return false }
    if eventsSinceCheckpoint >= options.maxEventsBetweenCheckpoints { return true }
    let spacing = max(
      options.minCheckpointSpacingBytes,
      options.checkpointBytesRatio.multipliedReportingOverflow(by: lastCheckpointLength)
        .partialValue)
    return bytesSinceCheckpoint >= spacing
  }

  /// Since the last restart (or the log's start): frames reaching `recoveryPointRatio` ×
  /// its cost (by bytes), or `recoveryPointEvents` events with frames reaching half that
  /// (by events); before the first restart, `estimate` (the caller's guess) stands for its
  /// cost. So a recovery point costs at most 1 / ratio of the log it follows, or 2 / ratio
  /// of it when that many events are cheaper.
  func recoveryPointDue(estimate: UInt64) -> Bool {
    guard options.recoveryPointRatio > 0 else { return false }
    let cost = lastRestartCost > 0 ? lastRestartCost : estimate
    guard cost > 0 else { return false }
    let spacing = options.recoveryPointRatio.multipliedReportingOverflow(by: cost).partialValue
    if bytesSinceRestart >= spacing { return true }
    let events = options.recoveryPointEvents
    return events > 0 && eventsSinceRestart >= events && bytesSinceRestart >= spacing / 2
  }

  /// An event entered the log.
  mutating func appended() {
    eventsSinceCheckpoint += 1
    eventsSinceRestart += 1
  }

  /// A frame of `type` and `length` bytes was written (and a PARITY frame of
  /// `parityLength` after it).
  mutating func wrote(_ type: UInt8, length: UInt64, parityLength: UInt64 = 0) {
    bytesSinceRestart += parityLength
    switch type {
    case Format.typeCheckpoint:
      if restartOpen { lastRestartCost += length }
      restartOpen = false
      lastCheckpointLength = length
      bytesSinceCheckpoint = 0
      eventsSinceCheckpoint = 0
      bytesSinceRestart += length
    case Format.typeDictionary:
      bytesSinceCheckpoint += length
      bytesSinceRestart = parityLength
      eventsSinceRestart = 0
      lastRestartCost = length
      restartOpen = true
    default:
      restartOpen = false
      bytesSinceCheckpoint += length
      bytesSinceRestart += length
    }
  }
}
