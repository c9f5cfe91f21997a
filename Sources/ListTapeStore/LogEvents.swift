import ListTapeLog
import ListTapeModel

/// A log's events decoded into operation records (`FoldOps`), in order: the one loop behind
/// every read of a log, on the caller's thread or a reader's second thread, and behind a
/// recorder that reopens a log.
///
/// 2.0 frames decode straight into records; 1.0 records decode into `Event`s that become
/// records through the decoder's dictionary, which for a 1.0 log is the reader's own
/// numbering of the ids it met (it starts as the ids of the state the fold starts from).
package enum LogEvents {
  /// Records per chunk handed over: a stop wastes at most one chunk's decoding, and a
  /// chunk stays a few hundred KiB.
  package static let chunkEvents = 4_096

  /// Bytes of records (`FoldOps.heldBytes`) after which a chunk is handed over however few
  /// events it holds: events of millions of items each would otherwise gather thousands of
  /// them (hundreds of MB) in one chunk.
  package static let chunkBytes = 4 << 20

  /// Records per `forEachRecord` call for 1.0 logs: once the fold stops, at most the rest
  /// of one window is inflated.
  package static let window = 65_536

  /// A number naming the log `reader` reads (its UUID's first eight bytes): the lineage of
  /// each segment's dictionary derives from it (`EventDecoder.lineage(log:segment:)`).
  package static func logID(_ reader: LogReader) -> UInt64 {
    var id: UInt64 = 0
    for b in reader.uuid.prefix(8) { id = id << 8 | UInt64(b) }
    return id
  }

  /// Decodes events `from...through` (within the readable prefix) into `ops` (which starts
  /// empty) and calls `hand` whenever it holds `chunk` records or `bytes` bytes or more
  /// (checked after each 2.0 frame and each 1.0 record), and once at the end when it holds
  /// any; `hand` empties it, or returns false to stop. `decoder` must stand
  /// right after event `from - 1` (1.0), or hold the dictionary of the frame holding `from`
  /// (2.0); it is left standing after the last frame or record read. Events a salvaged log
  /// cannot decode (they follow or name lost events) are passed over and counted through
  /// `skipped`.
  ///
  /// With `frames` (2.0), a `frameEnd` record follows the records of every frame read to its
  /// end, and of every dictionary restart. While `starving` is true (the fold waits on an
  /// empty queue: at a run's start, after a restart), a 2.0 frame's records are handed as
  /// soon as the frame is read, however few: a log's first frames hold a whole outline's
  /// definitions and take milliseconds each.
  package static func decode(
    _ reader: LogReader, path: String, decoder: inout EventDecoder, from: Int, through: Int,
    ops: inout FoldOps, chunk: Int = chunkEvents, bytes: Int = chunkBytes, frames: Bool = false,
    starving: () -> Bool = { false }, skipped: (Int) -> Void, _ hand: (inout FoldOps) -> Bool
  ) throws(StoreError) {
    let limit = Limit(records: chunk, bytes: bytes)
    let last = min(through, Int(reader.eventCount))
    let first = max(from, 1)
    guard first <= last else { return }
    var stopped = false
    do throws(StoreError) {
      if reader.formatVersion.major == 1 {
        try records(
          reader, path: path, &decoder, first, last, &ops, limit, skipped, &stopped, hand)
      } else {
        try frames2(
          reader, path: path, &decoder, first, last, &ops, limit, frames, starving, skipped,
          &stopped, hand)
      }
    } catch {
      // The events decoded before the failure are handed over first.
      if !stopped && !ops.isEmpty { _ = hand(&ops) }
      throw error
    }
    if !stopped && !ops.isEmpty { _ = hand(&ops) }
  }

  /// When a chunk is full.
  private struct Limit {
    var records: Int
    var bytes: Int
    func isFull(_ ops: FoldOps) -> Bool { ops.count >= records || ops.heldBytes >= bytes }
  }

  private static func frames2(
    _ reader: LogReader, path: String, _ decoder: inout EventDecoder, _ first: Int, _ last: Int,
    _ ops: inout FoldOps, _ limit: Limit, _ frames: Bool, _ starving: () -> Bool,
    _ skipped: (Int) -> Void, _ stopped: inout Bool, _ hand: (inout FoldOps) -> Bool
  ) throws(StoreError) {
    // Only a salvaged log has lost frames; elsewhere a missing entry is damage.
    let acrossGaps = !reader.gaps.isEmpty
    var failure: StoreError?
    var stop = false
    do {
      try reader.forEachFrame(from: UInt64(first), through: UInt64(last)) { view in
        let firstSeq = Int(view.firstSeq)
        switch view.kind {
        case .dictionary:
          // A run that starts at a restart the decoder was positioned by (a seek from the
          // checkpoint that follows it) already holds its dictionary, and the state its
          // numbering: entering the live ids again and renumbering the state would be the
          // same work twice.
          let entered =
            firstSeq == first && !acrossGaps && decoder.segment == UInt64(firstSeq)
            && decoder.expected == firstSeq
          do throws(CodecError) {
            if !entered {
              try decoder.restart(view.payload, seq: firstSeq, afterGaps: acrossGaps, into: &ops)
            }
          } catch {
            failure = .undecodableDictionary(event: firstSeq, error, path: path)
            return false
          }
          if frames {
            ops.endFrame(
              lastSeq: firstSeq - 1, offset: view.offset + view.length,
              segment: decoder.segment, dictionary: decoder.defined, restarted: true,
              aliasesFree: decoder.aliases.map.isEmpty)
          }
          return true
        case .checkpoint:
          return true
        case .events:
          let outcome: FrameOutcome
          do throws(CodecError) {
            outcome = try decoder.decodeFrame(
              view.payload, firstSeq: firstSeq, count: view.eventCount, from: first,
              through: last, acrossGaps: acrossGaps, lost: { if $0 <= last { skipped(1) } },
              into: &ops)
          } catch {
            failure = .undecodableEvent(event: error.event ?? firstSeq, error, path: path)
            return false
          }
          switch outcome {
          case .gap:
            let lo = max(first, firstSeq)
            let hi = min(last, firstSeq + view.eventCount - 1)
            skipped(max(0, hi - lo + 1))
          case .done:
            if frames {
              ops.endFrame(
                lastSeq: firstSeq + view.eventCount - 1, offset: view.offset + view.length,
                segment: decoder.segment, dictionary: decoder.defined,
                restarted: false, aliasesFree: decoder.aliases.map.isEmpty,
                sites: decoder.sites.live ? decoder.sites : nil)
            }
          case .stopped:
            break
          }
          if (limit.isFull(ops) || !ops.isEmpty && starving()) && !hand(&ops) {
            stop = true
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
    stopped = stop
  }

  private static func records(
    _ reader: LogReader, path: String, _ decoder: inout EventDecoder, _ first: Int, _ last: Int,
    _ ops: inout FoldOps, _ limit: Limit, _ skipped: (Int) -> Void, _ stopped: inout Bool,
    _ hand: (inout FoldOps) -> Bool
  ) throws(StoreError) {
    var stop = false
    try rawRecords(reader, first, last, skipped) { (seq, bytes) throws(StoreError) in
      try decode1(&decoder, bytes, seq, path: path, into: &ops)
      if limit.isFull(ops) && !hand(&ops) {
        stop = true
        return false
      }
      return true
    }
    stopped = stop
  }

  /// Decodes 1.0 record number `seq` into `ops`, naming the event number when it does not
  /// decode.
  package static func decode1(
    _ d: inout EventDecoder, _ bytes: UnsafeRawBufferPointer, _ seq: Int, path: String,
    into ops: inout FoldOps
  ) throws(StoreError) {
    if seq != d.expected && !EventCodecLayout.isResetPoint(seq) {
      // Events were lost before this one (a salvaged log): its back-references and time
      // delta point into them, so it cannot be decoded until the next reset point.
      let resume = EventCodecLayout.resetPoint(atOrBefore: seq) + EventCodecLayout.resetInterval
      throw .afterGap(event: seq, decodableFrom: resume, path: path)
    }
    do {
      try d.decode(bytes, seq: seq, into: &ops)
    } catch {
      throw .undecodableEvent(event: seq, error, path: path)
    }
  }

  /// Calls `body` with the raw records of a 1.0 log `first...last`, a window of event
  /// numbers at a time, until it returns false; a record whose `body` throws `.afterGap` is
  /// counted through `skipped`. A window that holds nothing (inside a lost gap) jumps to the
  /// next recorded event, so a gap of any size costs one lookup.
  package static func rawRecords(
    _ reader: LogReader, _ first: Int, _ last: Int, _ skipped: (Int) -> Void,
    _ body: (Int, UnsafeRawBufferPointer) throws(StoreError) -> Bool
  ) throws(StoreError) {
    var next = first
    while next <= last {
      let end = min(last, next + window - 1)
      var failure: StoreError?
      var stop = false
      var delivered = false
      do {
        try reader.forEachRecord(from: UInt64(next), through: UInt64(end)) { seq, bytes in
          delivered = true
          guard !stop else { return }
          do throws(StoreError) {
            if try !body(Int(seq), bytes) { stop = true }
          } catch .afterGap {
            skipped(1)
          } catch {
            failure = error
            stop = true
          }
        }
      } catch {
        // The reader's error wins over a decode error earlier in the window.
        throw StoreError.log(error)
      }
      if let failure { throw failure }
      if stop { return }
      next = end + 1
      if !delivered, next <= last {
        do {
          guard let n = try reader.firstRecordedEvent(after: UInt64(end)) else { return }
          next = Int(clamping: n)
        } catch {
          throw StoreError.log(error)
        }
      }
    }
  }
}
