import ListTapeLog
import ListTapeModel

/// Where a 2.0 log's frame ended while its events were read (for building an index file):
/// the state after `lastSeq` can be resumed from `nextOffset` with the segment's first
/// `dictionaryCount` entries.
package struct FrameEnd {
  package var lastSeq: Int
  package var nextOffset: UInt64
  package var segment: UInt64
  package var dictionaryCount: Int
  /// A dictionary frame: `entries` is the whole new dictionary.
  package var restarted: Bool
  /// Entries the frame defined (every entry, for a restart).
  package var entries: [String]
  /// The lineage of the fold that read the frame (`FoldEntries.lineage`; 0 for a fold of
  /// events): states it hands over know their items' entries in it.
  package var lineage: UInt64 = 0
}

/// Decoded events of a log of either format, read in order: the one loop behind every scan,
/// on the caller's thread or the pipeline's.
enum LogEvents {
  /// Records per `forEachRecord` call for 1.0 logs: once `body` stops, at most the rest of
  /// one window is inflated, and a window's records stay a few MiB.
  static let window = Timeline.recordWindow

  /// Calls `body` with events `from...through` (within the readable prefix) decoded with
  /// `decoder`, until it returns false. `decoder` must stand right after event `from - 1`
  /// (1.0), or hold the dictionary of the frame holding `from` (2.0; it is left holding
  /// the dictionary of the frames read). Events that follow lost events and cannot be
  /// decoded (a salvaged log) are passed over and counted through `skipped`.
  ///
  /// `onFrame` (2.0 only) hears of every frame read to its end, after its events went to
  /// `body`.
  static func forEach(
    _ reader: LogReader, path: String, decoder: inout EventDecoder, from: Int, through: Int,
    skipped: (Int) -> Void, onFrame: ((FrameEnd) -> Void)? = nil,
    _ body: (Int, Event) throws(StoreError) -> Bool
  ) throws(StoreError) {
    let last = min(through, Int(reader.eventCount))
    let first = max(from, 1)
    if reader.formatVersion.major == 1 {
      try records(reader, path: path, &decoder, first, last, skipped, body)
    } else {
      try frames(reader, path: path, &decoder, first, last, skipped, onFrame, body)
    }
  }

  private static func records(
    _ reader: LogReader, path: String, _ decoder: inout EventDecoder, _ first: Int,
    _ last: Int, _ skipped: (Int) -> Void, _ body: (Int, Event) throws(StoreError) -> Bool
  ) throws(StoreError) {
    try rawRecords(reader, first, last, skipped) { (seq, bytes) throws(StoreError) in
      try body(seq, try Timeline.decode(&decoder, bytes, seq, path: path))
    }
  }

  /// Calls `body` with the raw records of a 1.0 log `first...last`, a window of event
  /// numbers at a time, until it returns false; a record whose `body` throws `.afterGap` is
  /// counted through `skipped`. A window that holds nothing (inside a lost gap) jumps to the
  /// next recorded event, so a gap of any size costs one lookup.
  static func rawRecords(
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

  private static func frames(
    _ reader: LogReader, path: String, _ decoder: inout EventDecoder, _ first: Int,
    _ last: Int, _ skipped: (Int) -> Void, _ onFrame: ((FrameEnd) -> Void)?,
    _ body: (Int, Event) throws(StoreError) -> Bool
  ) throws(StoreError) {
    guard first <= last else { return }
    // Only a salvaged log has lost frames; elsewhere a missing entry is damage.
    let acrossGaps = !reader.gaps.isEmpty
    var failure: StoreError?
    do {
      try reader.forEachFrame(from: UInt64(first), through: UInt64(last)) { view in
        let firstSeq = Int(view.firstSeq)
        switch view.kind {
        case .dictionary:
          do throws(CodecError) {
            try decoder.restart(view.payload, seq: firstSeq)
            if let onFrame {
              onFrame(
                FrameEnd(
                  lastSeq: firstSeq - 1, nextOffset: view.offset + view.length,
                  segment: decoder.segment, dictionaryCount: decoder.dictionary.count,
                  restarted: true, entries: try decoder.entries(from: 0)))
            }
          } catch {
            failure = .undecodableDictionary(event: firstSeq, error, path: path)
            return false
          }
          return true
        case .checkpoint:
          return true
        case .events:
          var stopped = false
          let outcome: FrameOutcome
          let before = onFrame == nil ? 0 : decoder.dictionary.count
          do throws(CodecError) {
            outcome = try decoder.decodeFrame(
              view.payload, firstSeq: firstSeq, count: view.eventCount, from: first,
              acrossGaps: acrossGaps, lost: { if $0 <= last { skipped(1) } }
            ) { seq, event in
              guard seq <= last else { return false }
              do throws(StoreError) {
                if try !body(seq, event) { stopped = true }
              } catch {
                failure = error
                stopped = true
              }
              return !stopped
            }
          } catch {
            failure = .undecodableEvent(event: error.event ?? firstSeq, error, path: path)
            return false
          }
          if outcome == .gap {
            let lo = max(first, firstSeq)
            let hi = min(last, firstSeq + view.eventCount - 1)
            skipped(max(0, hi - lo + 1))
          } else if outcome == .done, let onFrame {
            do throws(CodecError) {
              onFrame(
                FrameEnd(
                  lastSeq: firstSeq + view.eventCount - 1, nextOffset: view.offset + view.length,
                  segment: decoder.segment, dictionaryCount: decoder.dictionary.count,
                  restarted: false,
                  entries: try decoder.entries(from: min(before, decoder.dictionary.count))))
            } catch {
              // A salvaged log: the frame names entries lost with a gap; an index build
              // then keeps none of the segment's later entries (Timeline+Index).
              if !acrossGaps {
                failure = .undecodableEvent(event: error.event ?? firstSeq, error, path: path)
                return false
              }
            }
          }
          return !stopped
        }
      }
    } catch {
      throw StoreError.log(error)
    }
    if let failure { throw failure }
  }
}
