#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A frame position remembered by the sparse index: its offset and an event number.
struct Mark: Sendable, Equatable {
  var offset: UInt64
  /// For the frame index: the seq of the first event at or after this frame.
  /// For checkpoints: the number of events folded into the state.
  var seq: UInt64
}

/// Events lost in a salvaged log, recorded by a META gap frame.
public struct LogGap: Sendable, Equatable {
  /// First lost event number.
  public var firstEvent: UInt64
  /// How many consecutive events were lost: 0 when frames were lost without any event (a
  /// dictionary restart before `firstEvent`, whose segment's events then do not decode).
  public var count: UInt64

  package init(firstEvent: UInt64, count: UInt64) {
    self.firstEvent = firstEvent
    self.count = count
  }
}

/// Outcome of decoding a META frame: events it declares lost, frames it declares lost
/// without any event (a dictionary restart), or why it is bad.
enum MetaResult {
  case lost(UInt64)
  case lostRestart
  case bad(DamageReason)
}

/// Walks frames from the header onward, validating each and building the sparse index.
///
/// Shared by the reader (open and refresh), the writer (recovery on open), verify and salvage.
struct FrameScan {
  let source: ByteSource
  let salt: UInt32
  /// The log's format major version: 2.0 adds dictionary frames.
  let major: UInt16
  /// End of the valid prefix: where the next frame starts.
  var end: UInt64
  /// The seq the next EVENTS frame must start with.
  var nextSeq: UInt64 = 1
  var frames = 0
  var eventFrames = 0
  var checkpointFrames = 0
  var metaFrames = 0
  var dictionaryFrames = 0
  var skippedFrames = 0
  var payloadBytes: UInt64 = 0
  var rawBytes: UInt64 = 0
  var checkpointBytes: UInt64 = 0
  /// Latest checkpoint frame: state seq and on-disk length.
  var lastCheckpointSeq: UInt64?
  var lastCheckpointLength: UInt64 = 0
  var bytesSinceCheckpoint: UInt64 = 0
  var marks: [Mark] = []
  var checkpoints: [Mark] = []
  /// 2.0 dictionary frames: offset, and the event number each comes before.
  var restarts: [Mark] = []
  /// The event number the last dictionary frame came before (0: none, the log's start).
  var lastRestartSeq: UInt64 = 0
  /// The last frame accepted: its offset and payload checksum (0, 0 before the first).
  var lastFrameOffset: UInt64 = 0
  var lastFramePayloadCRC: UInt32 = 0
  var gaps: [LogGap] = []
  var gapCount = 0
  /// Where the frames after the last PARITY frame begin (the group a writer continues).
  var parityGroupStart: UInt64
  /// Bytes of frames since the last dictionary frame (2.0), or since the first frame.
  var bytesSinceRestart: UInt64 = 0
  /// The last recovery point's cost: its dictionary frame and the checkpoint right after it.
  var lastRestartCost: UInt64 = 0
  /// Why the last scan stopped before the end of the file; nil if it reached the end cleanly.
  var stop: LogDamage?

  /// Frame marks are kept at most once per this many bytes, so memory stays O(file / 16 KiB).
  static let markSpacing: UInt64 = 16 << 10
  static let maxGapsKept = 1024
  /// Checkpoint entries kept before thinning (16 bytes each: a 4 MiB cap).
  static let maxCheckpointsKept = 1 << 18

  init(source: ByteSource, salt: UInt32, start: UInt64, major: UInt16) {
    self.source = source
    self.salt = salt
    self.end = start
    self.major = major
    self.parityGroupStart = start
  }

  /// Events in the valid prefix.
  var lastSeq: UInt64 { nextSeq - 1 }

  /// Checks the frame at `offset`: header, position (if `placed`), shape, payload checksum.
  func check(at offset: UInt64, placed: Bool = true, payload: Bool = true) throws(LogError)
    -> FrameCheck
  {
    guard let hb = try source.bytes(at: offset, count: Format.frameHeaderLength) else {
      return .bad(.incompleteHeader)
    }
    let h: FrameHeader
    switch FrameHeader.check(
      hb, at: offset, fileSize: source.size, salt: salt, major: major,
      placed: placed)
    {
    case .bad(let reason): return .bad(reason)
    case .ok(let header): h = header
    }
    if payload, let problem = try payloadProblem(h, at: offset) { return .bad(problem) }
    return .ok(h)
  }

  /// What is wrong with the payload of frame `h` at `offset` (whose header and extent
  /// `check` accepted), or nil when it matches its checksum.
  func payloadProblem(_ h: FrameHeader, at offset: UInt64) throws(LogError) -> DamageReason? {
    let start = offset + UInt64(Format.frameHeaderLength)
    guard let pb = try source.bytes(at: start, count: Int(h.payloadLength)) else {
      return .incompletePayload
    }
    return crc32Bytes(0, pb) == h.payloadCRC ? nil : .payloadChecksum
  }

  /// Whether `h` continues the numbering of the frames before it.
  func sequenceProblem(_ h: FrameHeader) -> DamageReason? { h.sequenceProblem(next: nextSeq) }

  /// Inflates a META frame's payload; returns the events it declares lost (0 if not a gap).
  func metaGap(_ h: FrameHeader, at offset: UInt64, inflater: Inflater) throws(LogError)
    -> MetaResult
  {
    let payloadStart = offset + UInt64(Format.frameHeaderLength)
    guard let pb = try source.bytes(at: payloadStart, count: Int(h.payloadLength)) else {
      return .bad(.incompletePayload)
    }
    var raw = [UInt8](repeating: 0, count: Int(h.rawLength))
    if h.isCompressed {
      let err = raw.withUnsafeMutableBytes { inflater.inflateExact(pb, into: $0) }
      if let err { return .bad(.decompression(err)) }
    } else {
      raw.withUnsafeMutableBytes { $0.copyMemory(from: pb) }
    }
    guard let kind = raw.first else { return .bad(.badMetaFrame("empty")) }
    if kind == Format.metaLostRestart { return .lostRestart }
    guard kind == Format.metaGap else { return .lost(0) }
    guard raw.count >= 9 else { return .bad(.badMetaFrame("short gap record")) }
    let count = raw.withUnsafeBytes { $0.loadLE(UInt64.self, at: 1) }
    guard count >= 1, count <= UInt64.max - nextSeq - 1 else {
      return .bad(.badMetaFrame("gap of \(count) events"))
    }
    return .lost(count)
  }

  /// Scans from `end` to the end of the file; stops at the first bad frame and classifies it.
  mutating func run(inflater: Inflater) throws(LogError) {
    stop = nil
    while end < source.size {
      let offset = end
      let h: FrameHeader
      switch try check(at: offset) {
      case .bad(let reason):
        stop = try classify(at: offset, reason: reason)
        return
      case .ok(let header): h = header
      }
      if let reason = sequenceProblem(h) {
        stop = try classify(at: offset, reason: reason)
        return
      }
      var lost: UInt64 = 0
      var lostRestart = false
      if h.type == Format.typeMeta {
        switch try metaGap(h, at: offset, inflater: inflater) {
        case .bad(let reason):
          stop = try classify(at: offset, reason: reason)
          return
        case .lost(let n): lost = n
        case .lostRestart: lostRestart = true
        }
      }
      accept(h, at: offset, lost: lost, lostRestart: lostRestart)
    }
  }

  /// Records a validated frame in the counters and the sparse index. A META frame's `lost`
  /// events, or its lost restart (a gap of no event: the states after it are not exact).
  mutating func accept(
    _ h: FrameHeader, at offset: UInt64, lost: UInt64 = 0, lostRestart: Bool = false
  ) {
    frames += 1
    lastFrameOffset = offset
    lastFramePayloadCRC = h.payloadCRC
    payloadBytes += UInt64(h.payloadLength)
    rawBytes += UInt64(h.rawLength)
    switch h.type {
    case Format.typeEvents:
      if marks.last.map({ offset - $0.offset >= Self.markSpacing }) ?? true {
        marks.append(Mark(offset: offset, seq: nextSeq))
      }
      eventFrames += 1
      nextSeq += UInt64(h.eventCount)
      bytesSinceCheckpoint += h.frameLength
    case Format.typeCheckpoint:
      checkpoints.append(Mark(offset: offset, seq: h.firstSeq))
      if checkpoints.count > Self.maxCheckpointsKept {
        // Only a hostile or absurd file gets here: keep every other one, bounding memory.
        checkpoints = checkpoints.enumerated().filter { $0.offset % 2 == 1 }.map(\.element)
      }
      checkpointFrames += 1
      checkpointBytes += h.frameLength
      lastCheckpointSeq = h.firstSeq
      lastCheckpointLength = h.frameLength
      bytesSinceCheckpoint = 0
      if h.firstSeq &+ 1 == lastRestartSeq && lastRestartSeq == nextSeq {
        lastRestartCost += h.frameLength
      }
    case Format.typeDictionary:
      dictionaryFrames += 1
      restarts.append(Mark(offset: offset, seq: h.firstSeq))
      if restarts.count > Self.maxCheckpointsKept {
        restarts = restarts.enumerated().filter { $0.offset % 2 == 1 }.map(\.element)
      }
      lastRestartSeq = h.firstSeq
      bytesSinceCheckpoint += h.frameLength
      bytesSinceRestart = 0
      lastRestartCost = h.frameLength
    case Format.typeMeta:
      metaFrames += 1
      if lost > 0 || lostRestart {
        gapCount += 1
        if gaps.count < Self.maxGapsKept { gaps.append(LogGap(firstEvent: nextSeq, count: lost)) }
        nextSeq += lost
      }
    default:
      skippedFrames += 1
      if h.type == Format.typeParity { parityGroupStart = offset + h.frameLength }
    }
    if h.type != Format.typeDictionary { bytesSinceRestart += h.frameLength }
    end = offset + h.frameLength
  }

  /// Torn tail if no frame of this log validates anywhere after `offset`; damage otherwise.
  func classify(at offset: UInt64, reason: DamageReason) throws(LogError) -> LogDamage {
    var damage = LogDamage(
      kind: .tornTail, offset: offset, bytesToEnd: source.size - offset, lastGoodEvent: lastSeq,
      reason: reason)
    if case .misplacedFrame = reason { damage.kind = .damaged }
    if let (next, h) = try findFrame(from: offset + 1) {
      damage.kind = .damaged
      damage.nextFrameOffset = next
      switch h.type {
      case Format.typeEvents, Format.typeMeta, Format.typeDictionary:
        damage.nextEvent = h.firstSeq
      case Format.typeCheckpoint: damage.nextEvent = h.firstSeq &+ 1
      default: break
      }
    }
    return damage
  }

  /// The first offset at or after `from` holding a frame header of this log (salt-valid,
  /// well-shaped, fitting in the file), wherever it was written; payloads are not read,
  /// which keeps the search linear in the file size even on hostile input.
  func findFrame(from: UInt64, placedOnly: Bool = false, payload: Bool = false) throws(LogError)
    -> (UInt64, FrameHeader)?
  {
    let headerLength = UInt64(Format.frameHeaderLength)
    var pos = from
    while pos < source.size, source.size - pos >= headerLength {
      let chunk = Int(min(UInt64(1 << 20), source.size - pos))
      guard let c = try source.bytes(at: pos, count: chunk), let base = c.baseAddress else {
        return nil
      }
      var i = 0
      var candidate: UInt64?
      while i + Format.frameHeaderLength <= chunk {
        guard let hit = memchr(base + i, 0xF1, chunk - i - Format.frameHeaderLength + 1) else {
          break
        }
        let at = base.distance(to: UnsafeRawPointer(hit))
        if c.loadLE(UInt32.self, at: at) == Format.frameMagic {
          candidate = pos + UInt64(at)
          break
        }
        i = at + 1
      }
      guard let cand = candidate else {
        pos += UInt64(max(1, chunk - Format.frameHeaderLength + 1))
        continue
      }
      if case .ok(let h) = try check(at: cand, placed: placedOnly, payload: payload) {
        return (cand, h)
      }
      pos = cand + 1
    }
    return nil
  }
}
