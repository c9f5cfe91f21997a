import Foundation
import ListTapeLog
import ListTapeModel

/// Records events into a log while folding them, so it always knows the current state and
/// can warn about faults as they arrive. Faults are recorded: the log is the evidence.
///
/// New logs are format 2.0: identifiers go into a dictionary once, and when most of its
/// entries name items that no longer exist the recorder restarts it with the live ones
/// (a dictionary frame, then a checkpoint), so a reader's dictionary stays in proportion
/// to the list. A log that began as 1.0 is appended to in 1.0 (`listtape upgrade`
/// rewrites it as 2.0).
package final class Recorder {
  let writer: LogWriter
  /// The state after every recorded event.
  package private(set) var state: ListState
  /// 1.0 logs: the record encoder.
  var encoder: EventEncoder
  /// 2.0 logs: the row encoder and its dictionary.
  var rows: EventRowEncoder?
  var scratch: [UInt8] = []
  /// 2.0 logs: whether `state`'s ids are the writer's dictionary, entry for entry, so that
  /// each event is folded from its row (no id looked up twice); else from the `Event`.
  var foldsRows = false
  /// The dictionary's repeats (a restart listing an id as a section and as an item) and
  /// the entry each repeats, as a reader's decoder finds them.
  var aliases = DefinitionAliases()
  /// What recovery cut from a torn tail when the log was opened, if anything.
  package var recovery: RecoveryReport? { writer.recovery }
  /// The log being recorded.
  package var path: String { writer.path }
  /// A restart comes once dead entries outnumber live ids by this factor (and by
  /// `restartSlack`), bounding a reader's dictionary to about (1 + ratio) × live ids.
  package var restartRatio = 1
  package var restartSlack = 4_096
  /// Whether `state` is the recorded one: false after `recordGap`, until `adopt`. While it
  /// is not, no checkpoint or recovery point is written (a reader would take one for the
  /// recorded state).
  package private(set) var isExact = true

  /// Writer tuning used by the tools: checkpoints close enough together that a seek replays
  /// only a few thousand events, far enough apart that they stay a small share of the file.
  package static func options(_ fsync: FsyncPolicy) -> LogWriterOptions {
    var o = LogWriterOptions()
    o.fsync = fsync
    o.formatMajor = 2
    // Checkpoints in the log only bound how far a reopening recorder (or a reader without
    // the index file) folds: at most 1M events apart, and at least 10 times their own size
    // of frames apart, so that they stay about a tenth of the file at most; seeks use the
    // index file's denser seek points. See docs/log-format.md.
    o.maxEventsBetweenCheckpoints = 1_000_000
    o.checkpointBytesRatio = 10
    o.minCheckpointSpacingBytes = 256 << 10
    o.maxRawBytesPerFrame = 256 << 10
    // zlib's first level with lazy matching: 1-2 % smaller logs than level 3 at the same
    // recording speed (docs/performance.md, "The frames at zlib level 4").
    o.compressionLevel = 4
    o.eventCodecVersion = 2
    o.stateCodecVersion = UInt32(ListState.compactVersion)
    // Damage costs a bounded stretch (docs/log-format.md, "Damage and recovery points"):
    // parity frames rebuild a damaged block exactly, and a dictionary restart by bytes
    // (every 4 × its own size) and by events (every 2^20 events, when those took 2 × its
    // size) makes a recovery point for damage parity cannot mend.
    o.parity = ParityOptions()
    o.recoveryPointRatio = recoveryPointRatio
    o.recoveryPointEvents = recoveryPointEvents
    // Frames are laid out and compressed on the flusher thread while the recorder folds
    // and encodes the next events (what that gives: docs/performance.md).
    o.cutsAhead = true
    return o
  }

  /// Frames between forced recovery points, as a multiple of the last one's size.
  package static let recoveryPointRatio: UInt64 = 4
  /// Events after which a recovery point is forced, when the frames since the last one
  /// reach half of `recoveryPointRatio` × its size.
  package static let recoveryPointEvents: UInt64 = 1 << 20

  /// Options for appending to a 1.0 log (only `open` on an existing 1.0 file uses them):
  /// checkpoints at most 200k events apart (a seek folds at most that many), and at least
  /// four times their own size of events apart, whichever comes first.
  static func options1(_ o: LogWriterOptions) -> LogWriterOptions {
    var o = o
    o.maxEventsBetweenCheckpoints = 200_000
    o.checkpointBytesRatio = 4
    o.minCheckpointSpacingBytes = 64 << 10
    o.maxRawBytesPerFrame = 64 << 10
    o.parity = nil  // a 1.0 log stays as 1.0 writers made it
    o.recoveryPointRatio = 0
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

  /// Opens with explicit writer tuning (tests use tight checkpoint spacing; the bench writes
  /// 1.0 logs to upgrade).
  package static func open(path: String, options: LogWriterOptions) throws(StoreError)
    -> Recorder
  {
    try open(path: path, options: options, files: SystemFiles.shared)
  }

  /// Opens through `files` (a simulated disk in tests); `onFold` sees the number of each
  /// event folded to rebuild the state (at most one checkpoint interval of them).
  package static func open(
    path: String, options: LogWriterOptions, files: any FileLayer,
    onFold: ((Int) -> Void)? = nil
  ) throws(StoreError) -> Recorder {
    let writer: LogWriter
    let existing = LogReader.formatMajor(ofFileAt: path)
    do {
      writer = try LogWriter.open(
        path: path, options: existing == 1 ? options1(options) : options,
        frames: FrameEncoding(), files: files)
    } catch {
      throw .log(error)
    }
    var state = ListState()
    var encoder = EventEncoder()
    var rows: EventRowEncoder?
    var aliases = DefinitionAliases()
    // Whether the state's ids end up as the writer's dictionary (see `foldsRows`).
    var follows = false
    if writer.formatMajor >= 2 {
      rows = EventRowEncoder()
      // A new log: its dictionary and the state's ids are both empty.
      follows = (try? state.follow(restart: [], aliases: aliases)) != nil
    }
    if writer.eventCount > 0 {
      let reader: LogReader
      do {
        reader = try LogReader(path: path)
      } catch {
        throw .log(error)
      }
      let log = LogStart(reader: reader, path: path)
      let n = Int(reader.eventCount)
      var decoder = log.startDecoder()
      var start = 1
      if let cp = try log.checkpoint(atOrBefore: n) {
        state = cp.state
        decoder = cp.decoder
        start = cp.seq + 1
      }
      try log.fold(&state, &decoder, from: start, through: n) { onFold?($0) }
      if writer.formatMajor >= 2 {
        // A dictionary frame after the last event (a restart whose checkpoint was never
        // written) is past what the fold read: the frames after event n need its dictionary.
        if decoder.segment != writer.segment { decoder = try log.decoder(after: n) }
        rows = EventRowEncoder(table: IdTable(decoder.dictionary))
        aliases = decoder.aliases
        // Else left to fold from `Event`s.
        follows =
          (try? state.adopt(decoder.dictionary, aliases: decoder.aliases)) != nil
          && state.idCount == decoder.dictionary.count
      } else {
        encoder = EventEncoder(continuing: decoder)
      }
    }
    let recorder = Recorder(writer: writer, state: state, encoder: encoder, rows: rows)
    recorder.aliases = aliases
    recorder.foldsRows = follows
    return recorder
  }

  init(writer: LogWriter, state: ListState, encoder: EventEncoder, rows: EventRowEncoder?) {
    self.writer = writer
    self.state = state
    self.encoder = encoder
    self.rows = rows
  }

  /// Events in the log so far (the next one gets `eventCount + 1`).
  package var eventCount: Int { Int(writer.eventCount) }

  /// The log's format major version (2 for new logs).
  package var formatMajor: Int { Int(writer.formatMajor) }

  /// Milliseconds since the Unix epoch, now.
  static func now() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded()) }

  /// Stamps a missing time with now, appends the event, folds it; returns the fault when the
  /// event faulted (it is recorded anyway). An event no reader could decode (nested deeper
  /// than the protocol allows, strings or lists over the caps) is refused (`.unrecordableEvent`).
  @discardableResult
  package func record(_ event: Event) throws(StoreError) -> ListFault? {
    try record(event, stampingTime: true)
  }

  /// `record`, optionally keeping a missing time missing (rewriting a log as it was).
  package func record(_ event: Event, stampingTime: Bool) throws(StoreError) -> ListFault? {
    var event = event
    if stampingTime && event.time == nil { event.time = Self.now() }
    scratch.removeAll(keepingCapacity: true)
    do throws(CodecError) {
      if rows != nil {
        try rows?.encode(event, into: &scratch)
      } else {
        try encoder.encode(event, into: &scratch)
      }
    } catch {
      throw .unrecordableEvent(event: eventCount + 1, error, path: writer.path)
    }
    do {
      try writer.append(scratch)
    } catch {
      throw .log(error)
    }
    var fault: ListFault?
    var folded = false
    if foldsRows {
      do throws(CodecError) {
        fault = try state.apply(row: scratch, aliases: aliases)
        folded = true
      } catch {
        // The row does not follow the state's ids (never expected): fold the event.
        foldsRows = false
      }
    }
    if !folded {
      do throws(ListFault) {
        try state.apply(event)
      } catch {
        fault = error
      }
    }
    if !isExact {
      // No checkpoint of a state that is not the recorded one.
    } else if rows != nil {
      try maintainDictionary()
    } else if writer.checkpointDue {
      do {
        try writer.appendCheckpoint(Checkpoint(state: state, lastTime: encoder.lastTime).encoded())
      } catch {
        throw .log(error)
      }
    }
    return fault
  }

  /// Records that the next `count` event numbers hold no event (2.0 logs): a copy of a
  /// salvaged log keeps the log's numbering, its lost events (and those that did not decode
  /// after them) a gap as salvage writes one. The state from here on is not the recorded
  /// one, until `adopt`.
  package func recordGap(_ count: Int) throws(StoreError) {
    guard count > 0 else { return }
    guard rows != nil else {
      throw .log(
        LogError(.unsupportedVersion, path: writer.path, message: "a 1.0 log records no gaps"))
    }
    do {
      try writer.appendGap(UInt64(count))
    } catch {
      throw .log(error)
    }
    isExact = false
  }

  /// After a gap: takes `state` as the recorded state after the last event (a recovery
  /// point of the log being copied restored it) and writes a recovery point (a dictionary
  /// restart and its checkpoint), so a reader of this log finds the states exact from here,
  /// as in the original.
  package func adopt(_ state: ListState) throws(StoreError) {
    self.state = state
    isExact = true
    try restartDictionary()
  }

  /// 2.0: restarts the dictionary when dead entries dominate, and writes due checkpoints.
  private func maintainDictionary() throws(StoreError) {
    guard let count = rows?.table.count else { return }
    let live = Self.liveIDs(&state)
    // Before the first restart its size is unknown: 16 bytes per live id (a UUID's) is at
    // least what one costs, so the first forced restart never comes early.
    let due = writer.due(restartEstimate: UInt64(live) * 16)
    if count - live > restartRatio * live + restartSlack || due.recoveryPoint {
      try restartDictionary()
    } else if due.checkpoint {
      try writeCheckpoint()
    }
  }

  /// The live ids of `s`, read through an exclusive access: reading the class's stored
  /// state across a call into the model copies the whole state first (every event).
  private static func liveIDs(_ s: inout ListState) -> Int {
    s.numberOfAllItems + s.numberOfSections
  }

  /// Starts a new segment whose dictionary is the live ids, sections first, then items in
  /// pre-order (so the checkpoint written after it numbers them 0, 1, 2, ...).
  func restartDictionary() throws(StoreError) {
    var ids = state.sectionIdentifiers
    for section in state.sectionIdentifiers {
      ids.append(contentsOf: state.allItems(inSection: section) ?? [])
    }
    let payload = DictionaryPayload.encode(ids)
    do {
      try writer.appendDictionary(payload.bytes, flushPoints: payload.flushPoints)
    } catch {
      throw .log(error)
    }
    let listing = IdTable.listing(ids)
    rows = EventRowEncoder(table: listing.table)
    aliases = listing.aliases
    do {
      try state.follow(restart: ids, aliases: aliases)
      foldsRows = true
    } catch {
      foldsRows = false
    }
    try writeCheckpoint()
  }

  /// A compact checkpoint of the state, its ids numbered by the current dictionary.
  private func writeCheckpoint() throws(StoreError) {
    guard let table = rows?.table else { return }
    let encoded: (bytes: [UInt8], flushPoints: [Int])
    do {
      // A state following the dictionary names its ids by their entries already.
      encoded = try state.compactEncoded(
        segment: writer.segment, dictionaryCount: table.count, table: foldsRows ? nil : table)
    } catch {
      throw .unrecordableCheckpoint(event: eventCount, error, path: writer.path)
    }
    do {
      try writer.appendCheckpoint(encoded.bytes, flushPoints: encoded.flushPoints)
    } catch {
      throw .log(error)
    }
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

extension Recorder {
  /// What turns 2.0 rows into frame payloads for a `LogWriter` (the bench writes rows
  /// through the writer alone).
  package static func frameEncoder() -> any FramePayloadEncoder { FrameEncoding() }
}

/// Turns a 2.0 frame's rows into its columns for the writer (`FrameAssembler`).
///
/// `@unchecked Sendable`: the writer calls it for one frame at a time (under its lock, or on
/// the flusher thread for a batch handed ahead, which every other cut waits for).
final class FrameEncoding: FramePayloadEncoder, @unchecked Sendable {
  private var assembler = FrameAssembler()

  func payload(
    records: UnsafeRawBufferPointer, count: Int, segment: UInt64, into out: inout [UInt8],
    flushPoints: inout [Int]
  ) -> String? {
    do throws(CodecError) {
      try assembler.assemble(
        rows: records, count: count, segment: segment, into: &out, flushPoints: &flushPoints)
      return nil
    } catch {
      return error.description
    }
  }
}
