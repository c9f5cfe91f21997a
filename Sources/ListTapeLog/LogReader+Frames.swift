#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One frame as `LogReader.forEachFrame` hands it over; `payload` (inflated) is valid only
/// during the call.
package struct FrameView {
  /// What a frame holds.
  package enum Kind: Sendable, Equatable {
    case events
    case checkpoint
    /// 2.0: a dictionary restart.
    case dictionary
  }

  package var kind: Kind
  /// Where the frame starts in the file.
  package var offset: UInt64
  /// Events: the first event's number. Checkpoint: the events folded into it. Dictionary:
  /// the event number it comes before.
  package var firstSeq: UInt64
  /// Events in an event frame (0 otherwise).
  package var eventCount: Int
  /// Bytes the frame takes in the file (header and payload): the next frame starts at
  /// `offset + length`.
  package var length: UInt64
  package var payload: UnsafeRawBufferPointer
}

/// How much of each event frame's payload a reader needs (the log layer keeps payloads
/// opaque): inflate the first `head` bytes, and `want` says how many in all (nil: all).
package struct FramePrefix {
  package var head: Int
  package var want: (UnsafeRawBufferPointer) -> Int?

  package init(head: Int, want: @escaping (UnsafeRawBufferPointer) -> Int?) {
    self.head = head
    self.want = want
  }
}

extension LogReader {
  /// Calls `body` with frames in file order, until it returns false: every event frame
  /// holding events `from...through` (the first may start before `from`), every dictionary
  /// frame coming before an event of `from...(through + 1)`, and (with `checkpoints`)
  /// checkpoint frames among them. Starts at the frame offset `start` when given (an index file's seek
  /// point, checked as it is read), else at the nearest mark of the scan.
  ///
  /// Each frame is re-checked (header, payload checksum) and inflated into one reusable
  /// buffer, so memory is bounded by one frame. Throws `.damaged` with offsets when a frame
  /// no longer checks out. With `eventPrefix`, an event frame's payload is inflated only as
  /// far as it asks (the view's payload is that prefix).
  package func forEachFrame(
    from: UInt64, through: UInt64 = .max, start: UInt64? = nil, checkpoints: Bool = false,
    eventPrefix: FramePrefix? = nil, _ body: (FrameView) -> Bool
  ) throws(LogError) {
    let first = max(from, 1)
    let last = min(through, scan.lastSeq)
    var offset: UInt64
    if let start {
      offset = start
    } else {
      let lo = Self.countThrough(first, in: scan.marks)
      offset = lo > 0 ? scan.marks[lo - 1].offset : UInt64(header.headerLength)
      // A dictionary frame right before event `first` may sit before that mark.
      if let r = restart(atOrBefore: first), r.seq == first { offset = min(offset, r.offset) }
    }
    var lastGood = first &- 1
    while offset < scan.end {
      let h = try frameHeader(at: offset, lastGood: lastGood)
      var kind: FrameView.Kind?
      switch h.type {
      case Format.typeEvents:
        let frameLast = h.firstSeq + UInt64(h.eventCount) - 1
        if h.firstSeq > last { return }
        if frameLast >= first { kind = .events }
      case Format.typeDictionary:
        // A restart right after `through` is still part of reading up to it.
        if h.firstSeq > last &+ 1 { return }
        if h.firstSeq >= first { kind = .dictionary }
      case Format.typeCheckpoint:
        if checkpoints && h.firstSeq >= first && h.firstSeq <= last { kind = .checkpoint }
      default: break
      }
      if let kind {
        let p = try inflate(
          h, at: offset, lastGood: lastGood, prefix: kind == .events ? eventPrefix : nil)
        let view = FrameView(
          kind: kind, offset: offset, firstSeq: h.firstSeq, eventCount: Int(h.eventCount),
          length: h.frameLength, payload: p)
        if !body(view) { return }
        if kind == .events {
          lastGood = h.firstSeq + UInt64(h.eventCount) - 1
          if lastGood >= last { return }
        }
      }
      offset += h.frameLength
    }
  }

  /// The frame at `offset` (which the scan or an index found), checked and inflated;
  /// `payload` is valid only during `body`.
  package func withFrame<R>(at offset: UInt64, _ body: (FrameView) -> R) throws(LogError) -> R {
    let h = try frameHeader(at: offset, lastGood: 0)
    let kind: FrameView.Kind
    switch h.type {
    case Format.typeEvents: kind = .events
    case Format.typeCheckpoint: kind = .checkpoint
    case Format.typeDictionary: kind = .dictionary
    default: throw damage(at: offset, lastGood: 0, .unknownFrameType(h.type))
    }
    let p = try inflate(h, at: offset, lastGood: h.firstSeq)
    return body(
      FrameView(
        kind: kind, offset: offset, firstSeq: h.firstSeq, eventCount: Int(h.eventCount),
        length: h.frameLength, payload: p))
  }

  /// 2.0: the latest dictionary frame before event `seq` or at it (offset, and the event it
  /// comes before); nil when the segment holding `seq` began at the log's start.
  package func restart(atOrBefore seq: UInt64) -> (offset: UInt64, seq: UInt64)? {
    let n = Self.countThrough(seq, in: scan.restarts)
    guard n > 0 else { return nil }
    return (scan.restarts[n - 1].offset, scan.restarts[n - 1].seq)
  }

  /// The event numbers the log's dictionary restarts come before, in order (2.0): those the
  /// scan keeps (every one below 2^18 restarts, then every other), as `restartSeq(after:)`
  /// finds them.
  package var restartSeqs: [UInt64] { scan.restarts.map(\.seq) }

  /// The event number the first dictionary restart after event `seq` comes before (2.0).
  package func restartSeq(after seq: UInt64) -> UInt64? {
    let n = Self.countThrough(seq, in: scan.restarts)
    return n < scan.restarts.count ? scan.restarts[n].seq : nil
  }

  /// The latest checkpoint folding at most `seq` events: its event count and frame offset.
  package func checkpointMark(atOrBefore seq: UInt64) -> (seq: UInt64, offset: UInt64)? {
    let n = Self.countThrough(seq, in: scan.checkpoints)
    guard n > 0 else { return nil }
    return (scan.checkpoints[n - 1].seq, scan.checkpoints[n - 1].offset)
  }

  /// Dictionary frames the scan accepted (2.0).
  package var dictionaryFrameCount: Int { scan.dictionaryFrames }

  /// Where the first frame starts (after the file header).
  package var firstFrameOffset: UInt64 { UInt64(header.headerLength) }
}

extension LogReader {
  /// The format major version in the header of the file at `path`, without scanning it;
  /// nil when there is no such file or its header is not a valid log header.
  package static func formatMajor(ofFileAt path: String) -> UInt16? {
    guard let fd = try? Posix.openFile(path) else { return nil }
    defer { _ = Posix.close(fd) }
    var bytes = [UInt8](repeating: 0, count: Format.headerLength)
    let n = bytes.withUnsafeMutableBytes { p -> Int in
      guard let base = p.baseAddress else { return 0 }
      return (try? Posix.pread(fd, base, Format.headerLength, 0, path: path)) ?? 0
    }
    guard n == Format.headerLength else { return nil }
    let header: FileHeader? = bytes.withUnsafeBytes { p in
      do throws(LogError) { return try FileHeader.decode(p, path: path) } catch { return nil }
    }
    return header?.major
  }
}

extension LogReader {
  /// Uses the index file next to the log when it describes this log: its scan snapshot
  /// replaces the scan of the frames it covers.
  func adoptIndex() throws(LogError) {
    let index: LogIndex
    do {
      index = try LogIndex(path: LogIndex.path(forLog: path))
    } catch {
      switch error {
      case .missing: indexStatus = .missing
      case .damaged(let why): indexStatus = .damaged(why)
      }
      return
    }
    if let why = try index.mismatch(header: header, source: source) {
      indexStatus = .stale(why)
      return
    }
    scan = index.restoreScan(source: source, header: header)
    self.index = index
    indexStatus = .valid
  }

  /// Stops using the index (a part of it did not check out when read): later seeks fall
  /// back to the log's own checkpoints until a new index is adopted.
  package func discardIndex(_ why: String) {
    index = nil
    indexStatus = .damaged(why)
  }

  /// Takes `index` (just written for this log) as the reader's index.
  package func adopt(_ index: LogIndex) {
    self.index = index
    indexStatus = .valid
  }
}

/// What identifies a frame's content without reading its payload: its kind, place in the
/// event numbering, and payload checksum. Two logs whose frames have equal fingerprints
/// from the start hold the same events (up to a CRC-32 collision).
package struct FrameFingerprint: Sendable, Equatable {
  package var type: UInt8
  package var firstSeq: UInt64
  package var eventCount: Int
  package var payloadCRC: UInt32
  package var payloadLength: UInt32
}

extension LogReader {
  /// Fingerprints of the event and dictionary frames holding or coming before events
  /// `from...through`, from the frame headers alone (no payload is read or inflated).
  package func frameFingerprints(from: UInt64, through: UInt64) throws(LogError)
    -> [FrameFingerprint]
  {
    let first = max(from, 1)
    let last = min(through, scan.lastSeq)
    var out: [FrameFingerprint] = []
    guard first <= last else { return out }
    let lo = Self.countThrough(first, in: scan.marks)
    var offset = lo > 0 ? scan.marks[lo - 1].offset : UInt64(header.headerLength)
    if let r = restart(atOrBefore: first), r.seq == first { offset = min(offset, r.offset) }
    while offset < scan.end {
      let h = try frameHeader(at: offset, lastGood: first &- 1)
      if h.firstSeq > last { break }
      let relevant =
        (h.type == Format.typeEvents && h.firstSeq + UInt64(h.eventCount) > first)
        || (h.type == Format.typeDictionary && h.firstSeq >= first)
      if relevant {
        out.append(
          FrameFingerprint(
            type: h.type, firstSeq: h.firstSeq, eventCount: Int(h.eventCount),
            payloadCRC: h.payloadCRC, payloadLength: h.payloadLength))
      }
      offset += h.frameLength
    }
    return out
  }
}
