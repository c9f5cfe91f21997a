import Dispatch

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Byte-level constants of the index file (docs/log-format.md, "The index file").
enum IndexFormat {
  static let magic: [UInt8] = [0x89, 0x55, 0x4C, 0x49, 0x44, 0x58, 0x0D, 0x0A]  // \x89ULIDX\r\n
  /// 2: segment dictionaries front-coded (`FrontCoding`); 1 stored them as they are.
  static let major: UInt16 = 2
  static let minor: UInt16 = 0
  static let headerLength = 128
  static let seekPointLength = 56
  static let segmentLength = 48
  /// A row of the site-model table (header bytes 112-123: its offset and row count, zero
  /// in an index without one): the point's event count, the model's offset, length, CRC.
  static let siteModelRowLength = 24
  static let maxSiteModelBytes = 64 << 20
  /// Caps on the tables, checked before anything is allocated for them.
  static let maxSeekPoints = 1 << 22
  static let maxSegments = 1 << 22
  static let maxSnapshotBytes = 256 << 20
  static let maxDictionaryEntries = 1 << 28
  /// States of at least this many bytes are stored in two parts (`IndexSeekPoint.partOffset`).
  static let twoPartState = 64 << 10
}

/// The last column of a two-part state (its second raw deflate stream), inflated on
/// another thread from the state's compressed bytes, which it owns; that thread also takes
/// the CRC of all of them. A reader waits for it where it needs the column.
package final class StateTail: @unchecked Sendable {
  private let compressed: UnsafeMutableRawBufferPointer
  private let split: Int
  private let output: UnsafeMutableRawBufferPointer
  private var result: (written: Int, ended: Bool)?
  private var crc: UInt32 = 0
  private let done = DispatchSemaphore(value: 0)
  /// The bytes the column must inflate to: the state's length less its first part's.
  package fileprivate(set) var count = 0

  /// Takes `compressed` (allocated by the caller, freed here); the second part starts at
  /// `split` and inflates to at most `capacity` bytes.
  fileprivate init(_ compressed: UnsafeMutableRawBufferPointer, split: Int, capacity: Int) {
    self.compressed = compressed
    self.split = split
    output = .allocate(byteCount: max(capacity, 1), alignment: 16)
  }

  deinit {
    compressed.deallocate()
    output.deallocate()
  }

  fileprivate var head: UnsafeRawBufferPointer {
    UnsafeRawBufferPointer(rebasing: compressed[..<split])
  }

  fileprivate func run() {
    let tail = UnsafeRawBufferPointer(rebasing: compressed[split...])
    let tailCRC = crc32Bytes(0, tail)
    result = Inflater(raw: true)?.inflatePart(tail, into: output)
    crc = crc32Combine(crc32Bytes(0, head), tailCRC, secondLength: tail.count)
    done.signal()
  }

  /// Waits for the other thread (any number of callers, any number of times).
  private func wait() {
    done.wait()
    done.signal()
  }

  /// The column, once inflated: nil when it did not inflate to `count` bytes (`check`
  /// says why).
  package func bytes() -> UnsafeRawBufferPointer? {
    wait()
    guard let r = result, r.ended, r.written == count else { return nil }
    return UnsafeRawBufferPointer(rebasing: output[..<r.written])
  }

  /// The CRC of the whole compressed state and whether the column inflated to `count`.
  fileprivate func outcome() -> (crc: UInt32, inflated: Bool) {
    let inflated = bytes() != nil
    return (crc, inflated)
  }
}

/// A seek point's state as `LogIndex.stateParts` gives it: inflated whole, or all but its
/// last column with that column still inflating beside.
package struct StateParts {
  /// The state, or (with `tail`) all of it before its last column.
  package var head: [UInt8]
  /// The last column, inflating on another thread; nil when `head` is all of the state.
  package var tail: StateTail?
}

/// A point of an index file where reading can start: the state after event `seq`, and
/// where the frames after it begin.
package struct IndexSeekPoint: Sendable, Equatable {
  /// Events folded into the stored state.
  package var seq: UInt64
  /// Offset in the log of the first frame after that state.
  package var frameOffset: UInt64
  /// The segment the frames from `frameOffset` belong to (2.0: the event number its
  /// dictionary restart came before; 0: the log's start).
  package var segment: UInt64
  /// Dictionary entries of that segment defined before `frameOffset`.
  package var dictionaryCount: Int
  /// Where the state is stored in the index file.
  var segmentIndex: Int
  var blobOffset: UInt64
  var blobLength: Int
  var rawLength: Int
  var blobCRC: UInt32
  /// Where in the stored state a second raw deflate stream starts (its last column, after
  /// a full flush), so that two threads inflate it; 0: one stream.
  var partOffset = 0

  /// Whether the state is stored in two parts, inflated side by side.
  package var isInTwoParts: Bool { partOffset > 0 }
}

/// Bytes an index file stores apart from its tables: where, how many, their CRC.
struct IndexBlob: Sendable, Equatable {
  var offset: UInt64
  var length: Int
  var crc: UInt32
}

/// A segment's dictionary as an index file stores it: its entries' stored forms, front-coded.
package struct IndexSegment: Sendable, Equatable {
  /// The event number the segment's dictionary restart came before (0: the log's start).
  package var key: UInt64
  /// Entries stored.
  package var entries: Int
  /// Where the coded entries lie in the index file, and their length.
  var codedOffset: UInt64
  var codedLength: Int
  /// Bytes of the entries' stored forms, decoded.
  var storedLength: Int
  /// CRC-32 of the coded entries.
  var crc: UInt32
}

/// What became of a log's index file when the log was opened.
package enum IndexStatus: Sendable, Equatable {
  /// There is none (or the reader was asked not to use one).
  case missing
  /// It matches the log and was used: the frames it covers were not scanned.
  case valid
  /// It belongs to another state of the log (another log, a longer or rewritten one).
  case stale(String)
  /// It is not a readable index file.
  case damaged(String)
}

/// A derived index file next to a log (`<log>.idx`): the reader's scan of the log up to a
/// point, and seek points with their states, so that opening skips the scan and seeking
/// starts near its target. Only a cache: it names the log (identity, covered length, the
/// last covered frame's checksum), its own tables carry checksums, and anything that does
/// not match makes the reader ignore it.
package final class LogIndex {
  /// The index file.
  package let path: String
  let source: ByteSource
  private let fd: Int32?
  /// Seek points in event order.
  package let seekPoints: [IndexSeekPoint]
  /// Segment dictionaries, in order.
  package let segments: [IndexSegment]
  /// Where each seek point's site model lies (layout 3 logs; by the point's event count).
  let siteModels: [UInt64: IndexBlob]
  let uuid: [UInt8]
  let coveredEnd: UInt64
  /// The last frame the index covers: its offset and payload checksum (which its salted
  /// header checksum binds to its place and content).
  let lastFrameOffset: UInt64
  let lastFrameCRC: UInt32
  let snapshot: ScanSnapshot
  private let inflater: Inflater
  /// For a two-part state's first part, read as a raw stream.
  private let rawInflater: Inflater

  /// The index file of the log at `logPath`.
  package static func path(forLog logPath: String) -> String { logPath + ".idx" }

  /// The index file of the log at `logPath` as it stands (not checked against the log),
  /// or nil when there is none or it does not read.
  package static func open(forLog logPath: String) -> LogIndex? {
    do {
      return try LogIndex(path: path(forLog: logPath))
    } catch {
      return nil
    }
  }

  /// Size of the index file in bytes.
  package var fileSize: UInt64 { source.size }

  /// Events the index covers (its snapshot's last event).
  package var eventsCovered: UInt64 { snapshot.nextSeq - 1 }

  /// Opens and checks the index file at `path` on its own (not yet against a log).
  convenience init(path: String) throws(IndexProblem) {
    let fd: Int32
    do {
      fd = try Posix.openFile(path)
    } catch {
      throw error.errno == ENOENT ? .missing : .damaged(error.message)
    }
    do throws(IndexProblem) {
      let source: ByteSource
      do {
        source = try ByteSource(fd: fd, path: path)
      } catch {
        throw IndexProblem.damaged(error.message)
      }
      try self.init(source: source, fd: fd)
    } catch {
      _ = Posix.close(fd)
      throw error
    }
  }

  /// Parses index bytes held in memory (tests and fuzzing).
  package convenience init(bytes: [UInt8], label: String = "<memory>") throws(IndexProblem) {
    try self.init(source: ByteSource(bytes: bytes, path: label), fd: nil)
  }

  private init(source: ByteSource, fd: Int32?) throws(IndexProblem) {
    self.path = source.path
    self.source = source
    self.fd = fd
    guard let inflater = Inflater() else { throw .damaged("zlib inflateInit failed") }
    self.inflater = inflater
    guard let rawInflater = Inflater(raw: true) else { throw .damaged("zlib inflateInit failed") }
    self.rawInflater = rawInflater
    func bytes(_ offset: UInt64, _ count: Int, _ what: String) throws(IndexProblem)
      -> UnsafeRawBufferPointer
    {
      let b: UnsafeRawBufferPointer?
      do {
        b = try source.bytes(at: offset, count: count)
      } catch {
        throw .damaged("cannot read \(what): \(error.message)")
      }
      guard let b else { throw .damaged("\(what) lies outside the file") }
      return b
    }
    let h = try bytes(0, IndexFormat.headerLength, "header")
    for i in 0..<8 where h[i] != IndexFormat.magic[i] { throw .damaged("not an index file") }
    guard
      crc32Bytes(0, UnsafeRawBufferPointer(rebasing: h[0..<124])) == h.loadLE(UInt32.self, at: 124)
    else { throw .damaged("header checksum mismatch") }
    let major = h.loadLE(UInt16.self, at: 8)
    guard major == IndexFormat.major else {
      throw .damaged(
        major < IndexFormat.major
          ? "index format \(major), written by an older version" : "index format \(major)")
    }
    guard h.loadLE(UInt32.self, at: 12) == UInt32(IndexFormat.headerLength) else {
      throw .damaged("bad header length")
    }
    uuid = Array(h[16..<32])
    coveredEnd = h.loadLE(UInt64.self, at: 32)
    lastFrameOffset = h.loadLE(UInt64.self, at: 40)
    lastFrameCRC = h.loadLE(UInt32.self, at: 48)
    let snapshotOffset = h.loadLE(UInt64.self, at: 64)
    let snapshotLength = Int(h.loadLE(UInt32.self, at: 72))
    let snapshotCRC = h.loadLE(UInt32.self, at: 76)
    let seekOffset = h.loadLE(UInt64.self, at: 80)
    let seekCount = Int(h.loadLE(UInt32.self, at: 88))
    let seekCRC = h.loadLE(UInt32.self, at: 92)
    let segmentOffset = h.loadLE(UInt64.self, at: 96)
    let segmentCount = Int(h.loadLE(UInt32.self, at: 104))
    let segmentCRC = h.loadLE(UInt32.self, at: 108)
    let modelOffset = h.loadLE(UInt64.self, at: 112)
    let modelCount = Int(h.loadLE(UInt32.self, at: 120))
    guard snapshotLength <= IndexFormat.maxSnapshotBytes, seekCount <= IndexFormat.maxSeekPoints,
      segmentCount <= IndexFormat.maxSegments
    else { throw .damaged("table sizes out of range") }

    let snap = try bytes(snapshotOffset, snapshotLength, "scan snapshot")
    guard crc32Bytes(0, snap) == snapshotCRC else { throw .damaged("scan snapshot checksum") }
    snapshot = try ScanSnapshot(snap)
    guard snapshot.end == coveredEnd else { throw .damaged("snapshot and header disagree") }

    let segTable = try bytes(segmentOffset, segmentCount * IndexFormat.segmentLength, "segments")
    guard crc32Bytes(0, segTable) == segmentCRC else { throw .damaged("segment table checksum") }
    var segments: [IndexSegment] = []
    segments.reserveCapacity(segmentCount)
    for i in 0..<segmentCount {
      let at = i * IndexFormat.segmentLength
      let s = IndexSegment(
        key: segTable.loadLE(UInt64.self, at: at),
        entries: Int(segTable.loadLE(UInt32.self, at: at + 8)),
        codedOffset: segTable.loadLE(UInt64.self, at: at + 16),
        codedLength: Int(truncatingIfNeeded: segTable.loadLE(UInt64.self, at: at + 24)),
        storedLength: Int(segTable.loadLE(UInt32.self, at: at + 32)),
        crc: segTable.loadLE(UInt32.self, at: at + 36))
      guard s.entries <= IndexFormat.maxDictionaryEntries,
        Self.fits(s.codedOffset, s.codedLength, source.size),
        s.codedLength >= 2 * s.entries,
        FrontCoding.withinCap(stored: s.storedLength, coded: s.codedLength),
        segments.last.map({ $0.key < s.key }) ?? true
      else { throw .damaged("segment \(i) out of range") }
      segments.append(s)
    }
    self.segments = segments

    let seekTable = try bytes(seekOffset, seekCount * IndexFormat.seekPointLength, "seek points")
    guard crc32Bytes(0, seekTable) == seekCRC else { throw .damaged("seek table checksum") }
    var points: [IndexSeekPoint] = []
    points.reserveCapacity(seekCount)
    for i in 0..<seekCount {
      let at = i * IndexFormat.seekPointLength
      let p = IndexSeekPoint(
        seq: seekTable.loadLE(UInt64.self, at: at),
        frameOffset: seekTable.loadLE(UInt64.self, at: at + 8),
        segment: seekTable.loadLE(UInt64.self, at: at + 16),
        dictionaryCount: Int(seekTable.loadLE(UInt32.self, at: at + 24)),
        segmentIndex: Int(seekTable.loadLE(UInt32.self, at: at + 28)),
        blobOffset: seekTable.loadLE(UInt64.self, at: at + 32),
        blobLength: Int(seekTable.loadLE(UInt32.self, at: at + 40)),
        rawLength: Int(seekTable.loadLE(UInt32.self, at: at + 44)),
        blobCRC: seekTable.loadLE(UInt32.self, at: at + 48),
        partOffset: Int(seekTable.loadLE(UInt32.self, at: at + 52)))
      guard p.segmentIndex < segments.count, segments[p.segmentIndex].key == p.segment,
        p.dictionaryCount <= segments[p.segmentIndex].entries,
        p.seq < snapshot.nextSeq, p.frameOffset <= coveredEnd,
        Self.fits(p.blobOffset, p.blobLength, source.size),
        p.rawLength <= Format.maxCheckpointRaw, p.blobLength >= 8,
        p.rawLength <= p.blobLength * Format.maxInflateRatio,
        points.last.map({ $0.seq < p.seq && $0.frameOffset < p.frameOffset }) ?? true
      else { throw .damaged("seek point \(i) out of range") }
      points.append(p)
    }
    self.seekPoints = points

    // The site models (an index written before them has none: header bytes are zero).
    var models: [UInt64: IndexBlob] = [:]
    if modelCount > 0 {
      guard modelCount <= seekCount else { throw .damaged("site model table out of range") }
      let table = try bytes(
        modelOffset, 4 + modelCount * IndexFormat.siteModelRowLength, "site models")
      let rows = UnsafeRawBufferPointer(rebasing: table[4...])
      guard crc32Bytes(0, rows) == table.loadLE(UInt32.self, at: 0) else {
        throw .damaged("site model table checksum")
      }
      let seqs = Set(points.map(\.seq))
      for i in 0..<modelCount {
        let at = i * IndexFormat.siteModelRowLength
        let seq = rows.loadLE(UInt64.self, at: at)
        let blob = IndexBlob(
          offset: rows.loadLE(UInt64.self, at: at + 8),
          length: Int(rows.loadLE(UInt32.self, at: at + 16)),
          crc: rows.loadLE(UInt32.self, at: at + 20))
        guard seqs.contains(seq), blob.length <= IndexFormat.maxSiteModelBytes,
          Self.fits(blob.offset, blob.length, source.size),
          models.updateValue(blob, forKey: seq) == nil
        else { throw .damaged("site model \(i) out of range") }
      }
    }
    siteModels = models
  }

  /// The seek points that store a site model, in order, and where each model lies.
  package var siteModelRanges: [(seq: UInt64, offset: UInt64, length: Int)] {
    siteModels.map { ($0.key, $0.value.offset, $0.value.length) }.sorted { $0.seq < $1.seq }
  }

  /// The site model stored with seek point `p` (checked against its CRC), or nil when the
  /// index stores none for it.
  package func siteModel(at p: IndexSeekPoint) throws(LogError) -> [UInt8]? {
    guard let blob = siteModels[p.seq] else { return nil }
    guard let bytes = try source.bytes(at: blob.offset, count: blob.length),
      crc32Bytes(0, bytes) == blob.crc
    else {
      throw LogError(
        .damaged, path: path, message: "site model after event \(p.seq) does not check out")
    }
    return Array(bytes)
  }

  deinit {
    if let fd { _ = Posix.close(fd) }
  }

  private static func fits(_ offset: UInt64, _ count: Int, _ size: UInt64) -> Bool {
    count >= 0 && offset <= size && UInt64(count) <= size - offset
  }

  /// The latest seek point at or before event `seq`, if any.
  package func seekPoint(atOrBefore seq: UInt64) -> IndexSeekPoint? {
    var lo = 0
    var hi = seekPoints.count
    while lo < hi {
      let mid = (lo + hi) / 2
      if seekPoints[mid].seq <= seq { lo = mid + 1 } else { hi = mid }
    }
    return lo > 0 ? seekPoints[lo - 1] : nil
  }

  /// The stored state of `point`, inflated and checked.
  package func state(at point: IndexSeekPoint) throws(LogError) -> [UInt8] {
    var parts = try stateParts(at: point)
    try check(parts, of: point)
    guard let tail = parts.tail, let bytes = tail.bytes() else { return parts.head }
    parts.head.append(contentsOf: bytes)
    return parts.head
  }

  /// The stored state of `point`, inflated: a large state's last column inflates on another
  /// thread meanwhile, so that a reader starts on the rest at once. Nothing is trusted
  /// before `check(_:of:)` passes (which waits for that thread); a reader may read the
  /// parts before, as it reads any bytes, but keeps what it made only if they check out.
  package func stateParts(at point: IndexSeekPoint) throws(LogError) -> StateParts {
    guard point.partOffset >= 8, point.partOffset < point.blobLength, point.rawLength >= 2
    else {
      guard let compressed = try source.bytes(at: point.blobOffset, count: point.blobLength),
        crc32Bytes(0, compressed) == point.blobCRC
      else { throw mismatch(point) }
      var raw = [UInt8](repeating: 0, count: point.rawLength)
      let problem = raw.withUnsafeMutableBytes { inflater.inflateExact(compressed, into: $0) }
      if let problem { throw damaged(point, problem) }
      source.shrink()
      return StateParts(head: raw, tail: nil)
    }
    let compressed = UnsafeMutableRawBufferPointer.allocate(
      byteCount: point.blobLength, alignment: 16)
    do throws(LogError) {
      guard let base = compressed.baseAddress,
        try source.detachedRead(at: point.blobOffset, count: point.blobLength, into: base)
      else { throw mismatch(point) }
    } catch {
      compressed.deallocate()
      throw error
    }
    let tail = StateTail(compressed, split: point.partOffset, capacity: point.rawLength)
    DispatchQueue.global(qos: .userInitiated).async { tail.run() }
    // The first part inflates here meanwhile: a raw stream once its zlib header checks out
    // (the Adler-32 is the whole stream's, at the end of the second part, and the CRC
    // covers every byte).
    var written: Int?
    let head = [UInt8](unsafeUninitializedCapacity: point.rawLength) { buffer, initialized in
      let h = tail.head
      guard Self.isZlibHeader(h[0], h[1]),
        let part = rawInflater.inflatePart(
          UnsafeRawBufferPointer(rebasing: h[2...]), into: UnsafeMutableRawBufferPointer(buffer)),
        !part.ended
      else { return }
      written = part.written
      initialized = part.written
    }
    guard let written else {
      guard tail.outcome().crc == point.blobCRC else { throw mismatch(point) }
      throw unsplit(point)
    }
    tail.count = point.rawLength - written
    var parts = StateParts(head: head, tail: tail)
    // A first part too short to hold the state's header is joined to the second.
    if written < Self.shortestHead {
      try check(parts, of: point)
      parts.head.append(contentsOf: tail.bytes() ?? UnsafeRawBufferPointer(start: nil, count: 0))
      parts.tail = nil
    }
    return parts
  }

  /// Checks a state `stateParts(at: point)` gave: its CRC, and that its second part (which
  /// this waits for) inflated to the rest of its length.
  package func check(_ parts: StateParts, of point: IndexSeekPoint) throws(LogError) {
    guard let tail = parts.tail else { return }
    let (crc, inflated) = tail.outcome()
    guard crc == point.blobCRC else { throw mismatch(point) }
    guard inflated else { throw unsplit(point) }
  }

  /// A first part shorter than this is joined to the second before anything reads it.
  static let shortestHead = 64

  /// Whether `cmf`, `flg` open a zlib stream that deflate wrote without a preset dictionary.
  private static func isZlibHeader(_ cmf: UInt8, _ flg: UInt8) -> Bool {
    cmf & 0x0F == 8 && cmf >> 4 <= 7 && flg & 0x20 == 0
      && (UInt16(cmf) << 8 | UInt16(flg)) % 31 == 0
  }

  private func mismatch(_ point: IndexSeekPoint) -> LogError {
    LogError(
      .damaged, path: path, message: "index state after event \(point.seq) does not check out",
      offset: point.blobOffset)
  }

  private func damaged(_ point: IndexSeekPoint, _ problem: String) -> LogError {
    LogError(
      .damaged, path: path, message: "index state after event \(point.seq): \(problem)",
      offset: point.blobOffset)
  }

  private func unsplit(_ point: IndexSeekPoint) -> LogError {
    damaged(point, "its two parts do not inflate to \(point.rawLength) bytes")
  }

  /// The dictionary a decoder needs at `point`: its segment's entries as far as the index
  /// covers them (those after the point are the ones the log defines next), in stored form,
  /// with their ends.
  package func dictionary(at point: IndexSeekPoint) throws(LogError) -> (
    stored: [UInt8], ends: [UInt32]
  ) {
    try dictionary(segment: point.segmentIndex)
  }

  /// Segment `index`'s dictionary: stored bytes and ends, checked against its CRC. Read
  /// without the index's read window, in pieces decoded as they come (no copy of the whole
  /// coding), so another thread may read it while this one reads a seek point's state.
  func dictionary(segment index: Int) throws(LogError) -> (stored: [UInt8], ends: [UInt32]) {
    let s = segments[index]
    var crc: UInt32 = 0
    var at = s.codedOffset
    var failure: LogError?
    let decoded = FrontCoding.decode(
      entries: s.entries, count: s.entries, storedLength: s.storedLength,
      codedLength: s.codedLength
    ) { dst, n in
      do throws(LogError) {
        guard try source.detachedRead(at: at, count: n, into: dst) else {
          failure = LogError(.damaged, path: path, message: "index dictionary outside the file")
          return false
        }
      } catch {
        failure = LogError(.damaged, path: path, message: "index dictionary: \(error.message)")
        return false
      }
      crc = crc32Bytes(crc, UnsafeRawBufferPointer(start: dst, count: n))
      at += UInt64(n)
      return true
    }
    if let failure { throw failure }
    guard crc == s.crc else {
      throw LogError(
        .damaged, path: path, message: "index dictionary checksum mismatch",
        offset: s.codedOffset)
    }
    guard let decoded else {
      throw LogError(
        .damaged, path: path, message: "index dictionary of \(s.key) does not decode",
        offset: s.codedOffset)
    }
    return decoded
  }

  /// How many entries the dictionary a decoder needs at `point` holds.
  package func dictionaryCount(at point: IndexSeekPoint) -> Int {
    segments[point.segmentIndex].entries
  }
}

/// Why an index file could not be read.
package enum IndexProblem: Error, Sendable, Equatable {
  /// There is no such file.
  case missing
  /// It is not a readable index file (what is wrong).
  case damaged(String)
}

/// The scan state an index file stores: everything `FrameScan` learned about the frames it
/// covers, so a reader restores it instead of scanning them.
struct ScanSnapshot {
  var end: UInt64 = 0
  var nextSeq: UInt64 = 1
  var counters: [UInt64] = []
  var marks: [Mark] = []
  var checkpoints: [Mark] = []
  var restarts: [Mark] = []
  var gaps: [LogGap] = []

  static let counterCount = 14

  init(_ scan: FrameScan) {
    end = scan.end
    nextSeq = scan.nextSeq
    counters = [
      UInt64(scan.frames), UInt64(scan.eventFrames), UInt64(scan.checkpointFrames),
      UInt64(scan.metaFrames), UInt64(scan.dictionaryFrames), UInt64(scan.skippedFrames),
      scan.payloadBytes, scan.rawBytes, scan.checkpointBytes,
      scan.lastCheckpointSeq.map { $0 + 1 } ?? 0, scan.lastCheckpointLength,
      scan.bytesSinceCheckpoint, scan.lastRestartSeq, UInt64(scan.gapCount),
    ]
    marks = scan.marks
    checkpoints = scan.checkpoints
    restarts = scan.restarts
    gaps = scan.gaps
  }

  func encode() -> [UInt8] {
    var out: [UInt8] = []
    func put(_ v: UInt64) { withUnsafeBytes(of: v.littleEndian) { out.append(contentsOf: $0) } }
    put(end)
    put(nextSeq)
    for c in counters { put(c) }
    for list in [marks, checkpoints, restarts] { put(UInt64(list.count)) }
    put(UInt64(gaps.count))
    for list in [marks, checkpoints, restarts] {
      for m in list {
        put(m.offset)
        put(m.seq)
      }
    }
    for g in gaps {
      put(g.firstEvent)
      put(g.count)
    }
    return out
  }

  init(_ p: UnsafeRawBufferPointer) throws(IndexProblem) {
    var at = 0
    func get() throws(IndexProblem) -> UInt64 {
      guard at + 8 <= p.count else { throw .damaged("scan snapshot truncated") }
      defer { at += 8 }
      return p.loadLE(UInt64.self, at: at)
    }
    end = try get()
    nextSeq = try get()
    for _ in 0..<Self.counterCount { counters.append(try get()) }
    var sizes: [Int] = []
    for _ in 0..<4 {
      let n = try get()
      guard n <= UInt64(p.count / 16) else { throw .damaged("scan snapshot list too long") }
      sizes.append(Int(n))
    }
    func readMarks(_ n: Int) throws(IndexProblem) -> [Mark] {
      var out: [Mark] = []
      out.reserveCapacity(n)
      for _ in 0..<n {
        let m = Mark(offset: try get(), seq: try get())
        guard m.offset < end, m.seq <= nextSeq, out.last.map({ $0.offset < m.offset }) ?? true
        else { throw .damaged("scan snapshot marks out of order") }
        out.append(m)
      }
      return out
    }
    marks = try readMarks(sizes[0])
    checkpoints = try readMarks(sizes[1])
    restarts = try readMarks(sizes[2])
    for _ in 0..<sizes[3] { gaps.append(LogGap(firstEvent: try get(), count: try get())) }
    guard at == p.count, nextSeq >= 1 else { throw .damaged("scan snapshot has trailing bytes") }
  }

  /// The scan this snapshot describes, for `source`; the last frame's place and checksum
  /// come from the index header.
  func restore(
    source: ByteSource, salt: UInt32, major: UInt16, lastFrameOffset: UInt64,
    lastFrameCRC: UInt32
  ) -> FrameScan {
    var s = FrameScan(source: source, salt: salt, start: end, major: major)
    s.nextSeq = nextSeq
    s.frames = Int(truncatingIfNeeded: counters[0])
    s.eventFrames = Int(truncatingIfNeeded: counters[1])
    s.checkpointFrames = Int(truncatingIfNeeded: counters[2])
    s.metaFrames = Int(truncatingIfNeeded: counters[3])
    s.dictionaryFrames = Int(truncatingIfNeeded: counters[4])
    s.skippedFrames = Int(truncatingIfNeeded: counters[5])
    s.payloadBytes = counters[6]
    s.rawBytes = counters[7]
    s.checkpointBytes = counters[8]
    s.lastCheckpointSeq = counters[9] == 0 ? nil : counters[9] - 1
    s.lastCheckpointLength = counters[10]
    s.bytesSinceCheckpoint = counters[11]
    s.lastRestartSeq = counters[12]
    s.gapCount = Int(truncatingIfNeeded: counters[13])
    s.marks = marks
    s.checkpoints = checkpoints
    s.restarts = restarts
    s.gaps = gaps
    s.lastFrameOffset = lastFrameOffset
    s.lastFramePayloadCRC = lastFrameCRC
    return s
  }
}

/// Writes a new index file for a log, seek point by seek point, into a temporary file that
/// replaces the old index only when complete (a torn or half-written index is never read:
/// its checksums fail). Keeps the states of an older index it extends.
package final class LogIndexBuilder {
  private let logPath: String
  private let target: String
  private let temporary: String
  private let fd: Int32
  private var end: UInt64 = UInt64(IndexFormat.headerLength)
  private var points: [IndexSeekPoint] = []
  private var segments: [IndexSegment] = []
  /// Site models written so far, with their points' event counts.
  private var siteModels: [(seq: UInt64, blob: IndexBlob)] = []
  /// The seek points and segment dictionaries added and not yet written, in order, coded
  /// meanwhile by `compressor` (each written as soon as it and those before it are done).
  private var pending: [Pending] = []
  private enum Pending {
    case point(IndexSeekPoint)
    case segment(key: UInt64, entries: Int, storedLength: Int)
  }
  private let compressor: PointCompressor
  private var finished = false

  /// Starts an index for the log `reader` reads (at `LogIndex.path(forLog:)`), keeping the
  /// seek points and segment dictionaries of `old` that come before event `keepThrough`.
  package init(reader: LogReader, keeping old: LogIndex? = nil, through keepThrough: UInt64 = 0)
    throws(LogError)
  {
    logPath = reader.path
    target = LogIndex.path(forLog: reader.path)
    temporary = "\(target).tmp-\(getpid())"
    guard let compressor = PointCompressor(level: 1) else {
      throw LogError(.io, path: target, message: "zlib deflateInit failed")
    }
    self.compressor = compressor
    switch Posix.open(temporary, O_RDWR | O_CREAT | O_TRUNC) {
    case .success(let f): fd = f
    case .failure(let e): throw .io("cannot create index", path: temporary, errno: e)
    }
    SystemFiles.shared.protect(temporary, like: logPath)
    do throws(LogError) {
      try writeAt(0, [UInt8](repeating: 0, count: IndexFormat.headerLength))
      if let old { try keep(old, through: keepThrough) }
    } catch {
      _ = Posix.close(fd)
      _ = unlink(temporary)
      throw error
    }
  }

  deinit {
    compressor.stop()
    _ = Posix.close(fd)
    if !finished { _ = unlink(temporary) }
  }

  private func keep(_ old: LogIndex, through: UInt64) throws(LogError) {
    var kept = Set<Int>()
    for p in old.seekPoints where p.seq <= through {
      guard let blob = try old.source.bytes(at: p.blobOffset, count: p.blobLength),
        crc32Bytes(0, blob) == p.blobCRC
      else {
        throw LogError(
          .damaged, path: old.path, message: "index state after event \(p.seq) does not check out")
      }
      var q = p
      q.blobOffset = end
      try append(blob)
      points.append(q)
      kept.insert(p.segmentIndex)
      if let model = try old.siteModel(at: p) { try addSiteModel(seq: p.seq, model) }
    }
    // Segments of the kept points, except the last (whose dictionary grows from there on).
    let last = points.last?.segmentIndex
    for (i, s) in old.segments.enumerated() where kept.contains(i) && i != last {
      let (stored, ends) = try old.dictionary(segment: i)
      try addSegment(key: s.key, stored: stored, ends: ends)
    }
  }

  /// Writes the first `count` of `bytes` (all of them without) at `offset`.
  private func writeAt(_ offset: UInt64, _ bytes: [UInt8], count: Int? = nil) throws(LogError) {
    let failure = bytes.withUnsafeBytes {
      pwriteAll(offset, UnsafeRawBufferPointer(rebasing: $0[0..<(count ?? bytes.count)]))
    }
    if let failure { throw .io("cannot write index", path: temporary, errno: failure) }
  }

  private func writeAt(_ offset: UInt64, _ p: UnsafeRawBufferPointer) throws(LogError) {
    if let failure = pwriteAll(offset, p) {
      throw .io("cannot write index", path: temporary, errno: failure)
    }
  }

  /// Writes all of `p` at `offset`: nil, or the errno that stopped it.
  private func pwriteAll(_ offset: UInt64, _ p: UnsafeRawBufferPointer) -> Int32? {
    var done = 0
    while done < p.count {
      guard let base = p.baseAddress else { return nil }
      let n = pwrite(fd, base + done, p.count - done, off_t(offset) + off_t(done))
      if n > 0 {
        done += n
      } else if n < 0 && errno == EINTR {
        continue
      } else {
        return n == 0 ? ENOSPC : errno
      }
    }
    return nil
  }

  private func append(_ p: UnsafeRawBufferPointer) throws(LogError) {
    try writeAt(end, p)
    end += UInt64(p.count)
  }

  /// Adds a seek point: the state after event `seq`, encoded (`state`, its columns starting
  /// at `flushPoints`; compressed here, each column its own block), resuming at frame
  /// `frameOffset` of segment `segment` with `dictionaryCount` entries defined. Points must
  /// come in event order, each segment's after `addSegment` for an earlier one (the
  /// segment's dictionary is written when it is complete).
  package func addSeekPoint(
    seq: UInt64, frameOffset: UInt64, segment: UInt64, dictionaryCount: Int,
    state: [UInt8], flushPoints: [Int]
  ) throws(LogError) {
    try addSeekPoint(
      seq: seq, frameOffset: frameOffset, segment: segment, dictionaryCount: dictionaryCount
    ) { (state, flushPoints) }
  }

  /// `addSeekPoint(seq:frameOffset:segment:dictionaryCount:state:flushPoints:)` with the
  /// state encoded by `encode` where it is compressed (nil: it could not be, which fails
  /// this call or a later one).
  package func addSeekPoint(
    seq: UInt64, frameOffset: UInt64, segment: UInt64, dictionaryCount: Int,
    encode: @escaping @Sendable () -> (bytes: [UInt8], flushPoints: [Int])?
  ) throws(LogError) {
    pending.append(
      .point(
        IndexSeekPoint(
          seq: seq, frameOffset: frameOffset, segment: segment, dictionaryCount: dictionaryCount,
          segmentIndex: -1, blobOffset: 0, blobLength: 0, rawLength: 0, blobCRC: 0)))
    compressor.add(encode)
    try writePending(wait: false)
  }

  /// Stores `model` as the site model of the seek point after event `seq` (its stored
  /// form, `SiteSync.stored`), added before or after the point itself.
  package func addSiteModel(seq: UInt64, _ model: [UInt8]) throws(LogError) {
    let blob = model.withUnsafeBytes {
      IndexBlob(offset: end, length: $0.count, crc: crc32Bytes(0, $0))
    }
    try writeAt(end, model)
    end += UInt64(model.count)
    siteModels.append((seq, blob))
  }

  /// Writes the seek points and segment dictionaries coded so far, in order, after what
  /// is written; with `wait`, all of them.
  private func writePending(wait: Bool = true) throws(LogError) {
    while let next = pending.first, let outcome = compressor.take(wait: wait) {
      pending.removeFirst()
      let c: CompressedPoint
      switch outcome {
      case .success(let done): c = done
      case .failure(let failure):
        var what = "zlib deflate failed"
        if failure == .notEncoded, case .point(let point) = next {
          what = "the state after event \(point.seq) was not encoded"
        }
        throw LogError(.io, path: temporary, message: what)
      }
      try writeAt(end, c.bytes, count: c.length)
      switch next {
      case .point(var point):
        point.rawLength = c.rawLength
        point.blobOffset = end
        point.blobLength = c.length
        point.blobCRC = c.crc
        point.partOffset = c.split
        points.append(point)
      case .segment(let key, let entries, let storedLength):
        segments.removeAll { $0.key == key }
        segments.append(
          IndexSegment(
            key: key, entries: entries, codedOffset: end, codedLength: c.length,
            storedLength: storedLength, crc: c.crc))
      }
      end += UInt64(c.length)
    }
  }

  /// Stores segment `key`'s dictionary (entries in stored form and their ends); a later
  /// call for the same key replaces it. It is coded on the compressing thread, after the
  /// seek points before it, so that the fold does not wait for them at a restart.
  package func addSegment(key: UInt64, stored: [UInt8], ends: [UInt32]) throws(LogError) {
    pending.append(.segment(key: key, entries: ends.count, storedLength: stored.count))
    compressor.add(work: { _ in
      let coded = FrontCoding.encode(stored: stored, ends: ends)
      let crc = coded.withUnsafeBytes { crc32Bytes(0, $0) }
      return .success(
        CompressedPoint(
          bytes: coded, length: coded.count, split: 0, crc: crc, rawLength: stored.count))
    })
    try writePending(wait: false)
  }

  /// Writes the tables and the header for the frames `reader` has scanned, and moves the
  /// file into place; returns the index as a reader would open it.
  package func finish(reader: LogReader) throws(LogError) -> LogIndex {
    try writePending()
    segments.sort { $0.key < $1.key }
    for i in points.indices {
      guard let s = segments.firstIndex(where: { $0.key == points[i].segment }) else {
        throw LogError(
          .io, path: target, message: "seek point after event \(points[i].seq) has no dictionary")
      }
      points[i].segmentIndex = s
    }
    let snapshot = ScanSnapshot(reader.scan).encode()
    let snapshotOffset = end
    try writeAt(end, snapshot)
    end += UInt64(snapshot.count)
    var seekTable = [UInt8](repeating: 0, count: points.count * IndexFormat.seekPointLength)
    seekTable.withUnsafeMutableBytes { t in
      for (i, p) in points.enumerated() {
        let at = i * IndexFormat.seekPointLength
        t.storeLE(p.seq, at: at)
        t.storeLE(p.frameOffset, at: at + 8)
        t.storeLE(p.segment, at: at + 16)
        t.storeLE(UInt32(p.dictionaryCount), at: at + 24)
        t.storeLE(UInt32(p.segmentIndex), at: at + 28)
        t.storeLE(p.blobOffset, at: at + 32)
        t.storeLE(UInt32(p.blobLength), at: at + 40)
        t.storeLE(UInt32(p.rawLength), at: at + 44)
        t.storeLE(p.blobCRC, at: at + 48)
        t.storeLE(UInt32(p.partOffset), at: at + 52)
      }
    }
    let seekOffset = end
    try writeAt(end, seekTable)
    end += UInt64(seekTable.count)
    var segTable = [UInt8](repeating: 0, count: segments.count * IndexFormat.segmentLength)
    segTable.withUnsafeMutableBytes { t in
      for (i, s) in segments.enumerated() {
        let at = i * IndexFormat.segmentLength
        t.storeLE(s.key, at: at)
        t.storeLE(UInt32(s.entries), at: at + 8)
        t.storeLE(s.codedOffset, at: at + 16)
        t.storeLE(UInt64(s.codedLength), at: at + 24)
        t.storeLE(UInt32(s.storedLength), at: at + 32)
        t.storeLE(s.crc, at: at + 36)
      }
    }
    let segmentOffset = end
    try writeAt(end, segTable)
    end += UInt64(segTable.count)
    // The site models of the points kept (a point whose model has no point is dropped).
    let seqs = Set(points.map(\.seq))
    let models = siteModels.filter { seqs.contains($0.seq) }
    var modelTable = [UInt8](
      repeating: 0, count: 4 + models.count * IndexFormat.siteModelRowLength)
    modelTable.withUnsafeMutableBytes { t in
      for (i, m) in models.enumerated() {
        let at = 4 + i * IndexFormat.siteModelRowLength
        t.storeLE(m.seq, at: at)
        t.storeLE(m.blob.offset, at: at + 8)
        t.storeLE(UInt32(m.blob.length), at: at + 16)
        t.storeLE(m.blob.crc, at: at + 20)
      }
      t.storeLE(crc32Bytes(0, UnsafeRawBufferPointer(rebasing: t[4...])), at: 0)
    }
    let modelOffset = end
    if !models.isEmpty {
      try writeAt(end, modelTable)
      end += UInt64(modelTable.count)
    }

    let scan = reader.scan
    let lastOffset = scan.lastFrameOffset
    let lastCRC = scan.lastFramePayloadCRC
    var h = [UInt8](repeating: 0, count: IndexFormat.headerLength)
    let uuid = reader.uuid
    h.withUnsafeMutableBytes { p in
      for i in 0..<8 { p[i] = IndexFormat.magic[i] }
      p.storeLE(IndexFormat.major, at: 8)
      p.storeLE(IndexFormat.minor, at: 10)
      p.storeLE(UInt32(IndexFormat.headerLength), at: 12)
      for i in 0..<16 { p[16 + i] = uuid[i] }
      p.storeLE(scan.end, at: 32)
      p.storeLE(lastOffset, at: 40)
      p.storeLE(lastCRC, at: 48)
      p.storeLE(scan.nextSeq - 1, at: 56)
      p.storeLE(snapshotOffset, at: 64)
      p.storeLE(UInt32(snapshot.count), at: 72)
      snapshot.withUnsafeBytes { p.storeLE(crc32Bytes(0, $0), at: 76) }
      p.storeLE(seekOffset, at: 80)
      p.storeLE(UInt32(points.count), at: 88)
      seekTable.withUnsafeBytes { p.storeLE(crc32Bytes(0, $0), at: 92) }
      p.storeLE(segmentOffset, at: 96)
      p.storeLE(UInt32(segments.count), at: 104)
      segTable.withUnsafeBytes { p.storeLE(crc32Bytes(0, $0), at: 108) }
      if !models.isEmpty {
        p.storeLE(modelOffset, at: 112)
        p.storeLE(UInt32(models.count), at: 120)
      }
      let crc = crc32Bytes(0, UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(p)[0..<124]))
      p.storeLE(crc, at: 124)
    }
    try writeAt(0, h)
    guard rename(temporary, target) == 0 else {
      throw .io("cannot move the index into place", path: target, errno: errno)
    }
    finished = true
    do {
      return try LogIndex(path: target)
    } catch {
      throw LogError(.io, path: target, message: "the index just written does not read back")
    }
  }
}

extension LogIndex {
  /// Why this index does not describe the log with `header` whose bytes `source` holds, or
  /// nil when it does (its covered prefix ends with the very frame it names).
  func mismatch(header: FileHeader, source: ByteSource) throws(LogError) -> String? {
    guard uuid == header.uuid else { return "it belongs to another log" }
    guard coveredEnd <= source.size else { return "the log is shorter than the index covers" }
    guard coveredEnd >= UInt64(header.headerLength) else { return "it covers no frames" }
    if snapshot.counters[0] == 0 {
      return coveredEnd == UInt64(header.headerLength) ? nil : "it covers no frames"
    }
    guard let hb = try source.bytes(at: lastFrameOffset, count: Format.frameHeaderLength),
      let h = FrameHeader.decode(hb, salt: header.salt),
      h.offsetLow == UInt32(truncatingIfNeeded: lastFrameOffset),
      h.payloadCRC == lastFrameCRC, lastFrameOffset + h.frameLength == coveredEnd
    else { return "the log's frames differ from those it covers" }
    return nil
  }

  /// The reader's scan up to where this index covers.
  func restoreScan(source: ByteSource, header: FileHeader) -> FrameScan {
    snapshot.restore(
      source: source, salt: header.salt, major: header.major, lastFrameOffset: lastFrameOffset,
      lastFrameCRC: lastFrameCRC)
  }
}
