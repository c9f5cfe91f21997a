/// The log's byte layout that needs no file and no zlib: the format's constants, frame
/// headers and the checks a frame passes on its own. Pure Swift, so the HTML viewer compiles
/// this same file to WebAssembly (Tools/wasm/build.sh) and checks the page's copy of a log as
/// the reader checks the file; `crc32Bytes` comes from zlib here and from the viewer there.

/// Byte-level constants of formats 1.0 and 2.0; docs/log-format.md is the prose version.
enum Format {
  static let magic: [UInt8] = [0x89, 0x55, 0x4C, 0x4F, 0x47, 0x0D, 0x0A, 0x1A]  // \x89ULOG\r\n^Z
  /// The newest major version (what recorders write).
  static let latestMajor: UInt16 = 2
  static let minor: UInt16 = 0
  /// Major versions this build reads (and appends to).
  static let readableMajors: ClosedRange<UInt16> = 1...2
  static let headerLength = 64
  /// Longest file header a future minor version may declare.
  static let maxHeaderLength = 4096
  static let codecZlib: UInt8 = 1

  static let frameMagic: UInt32 = 0x4D52_46F1  // bytes F1 'F' 'R' 'M', read little-endian
  static let frameHeaderLength = 36

  static let typeEvents: UInt8 = 1
  static let typeCheckpoint: UInt8 = 2
  static let typeMeta: UInt8 = 3
  /// 2.0 only: a dictionary restart (the identifiers of a new segment).
  static let typeDictionary: UInt8 = 4
  /// Frame types at or above this are skippable extensions.
  static let firstSkippableType: UInt8 = 128

  static let flagCompressed: UInt8 = 1
  static let flagDictionary: UInt8 = 2
  static let flagSegmentStart: UInt8 = 4
  static let knownFlags: UInt8 = flagCompressed | flagSegmentStart

  /// Raw (inflated) size caps per frame type: the most any frame can make a reader allocate.
  static let maxEventsRaw = 64 << 20
  static let maxCheckpointRaw = 256 << 20
  static let maxMetaRaw = 1 << 20
  static let maxDictionaryRaw = 256 << 20
  static let maxSkippableRaw = 64 << 20
  /// On-disk payload cap: a stored (uncompressed) checkpoint plus zlib's worst-case overhead.
  static let maxPayload = maxCheckpointRaw + (maxCheckpointRaw >> 8) + 64
  /// The largest record the writer accepts (one record alone in a frame, plus its length).
  static let maxRecord = maxEventsRaw - 8
  /// deflate never expands by more than 1032:1, so a larger declared raw size is a lie.
  static let maxInflateRatio = 1032

  static let metaGap: UInt8 = 1
  /// META kind 2 (salvage writes it): a dictionary frame was lost before the next event, no
  /// event with it; a u64, the event number that frame came before, follows. The events
  /// of its segment cannot be decoded, and the states from here on are not the recorded
  /// ones until a recovery point.
  static let metaLostRestart: UInt8 = 2
  /// 1.0 event records restart their codec (the identifier ring and the running time) at
  /// events 1, 1 + k, 1 + 2k, … for this k, so a record decodes given the records since the
  /// last such event (the model's `EventCodecLayout.resetInterval`; a test holds them equal).
  static let v1RecordResetInterval: UInt64 = 256

  static func maxRaw(type: UInt8) -> Int {
    switch type {
    case typeEvents: return maxEventsRaw
    case typeCheckpoint: return maxCheckpointRaw
    case typeMeta: return maxMetaRaw
    case typeDictionary: return maxDictionaryRaw
    default: return maxSkippableRaw
    }
  }
}

/// The 64-byte file header: identity, versions and codec of one log.
struct FileHeader: Sendable, Equatable {
  var major: UInt16 = Format.latestMajor
  var minor: UInt16 = Format.minor
  var headerLength: UInt32 = UInt32(Format.headerLength)
  var uuid: [UInt8]
  var createdMillis: UInt64
  var eventCodecVersion: UInt32
  var stateCodecVersion: UInt32
  var codec: UInt8 = Format.codecZlib
  var levelHint: UInt8
  var flags: UInt16 = 0
  var dictAdler: UInt32 = 0

  /// CRC32 of the UUID: seeds every frame's header checksum, binding the frame to this log.
  var salt: UInt32 { uuid.withUnsafeBytes { crc32Bytes(0, $0) } }

  func encode() -> [UInt8] {
    var b = [UInt8](repeating: 0, count: Format.headerLength)
    b.withUnsafeMutableBytes { p in
      for i in 0..<8 { p[i] = Format.magic[i] }
      p.storeLE(major, at: 8)
      p.storeLE(minor, at: 10)
      p.storeLE(headerLength, at: 12)
      for i in 0..<16 { p[16 + i] = uuid[i] }
      p.storeLE(createdMillis, at: 32)
      p.storeLE(eventCodecVersion, at: 40)
      p.storeLE(stateCodecVersion, at: 44)
      p[48] = codec
      p[49] = levelHint
      p.storeLE(flags, at: 50)
      p.storeLE(dictAdler, at: 52)
      p.storeLE(UInt32(0), at: 56)
      let crc = crc32Bytes(0, UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(p)[0..<60]))
      p.storeLE(crc, at: 60)
    }
    return b
  }

  /// Why a header is refused: the reader's error kind, the words, and the byte offset.
  struct Problem: Error, Equatable {
    enum Kind { case notALog, incompleteHeader, unsupportedVersion }
    var kind: Kind
    var message: String
    var offset: UInt64
  }

  /// Parses and checks the header at the start of `p` (as much of it as the file holds).
  static func parse(_ p: UnsafeRawBufferPointer) throws(Problem) -> FileHeader {
    let prefix = min(p.count, 8)
    for i in 0..<prefix where p[i] != Format.magic[i] {
      throw Problem(kind: .notALog, message: "not a ListTape log (bad magic)", offset: 0)
    }
    guard p.count >= Format.headerLength else {
      throw Problem(
        kind: .incompleteHeader,
        message: "incomplete header: file has \(p.count) of \(Format.headerLength) bytes",
        offset: 0)
    }
    let crc = crc32Bytes(0, UnsafeRawBufferPointer(rebasing: p[0..<60]))
    guard crc == p.loadLE(UInt32.self, at: 60) else {
      throw Problem(
        kind: .notALog, message: "damaged log header (header checksum mismatch)", offset: 0)
    }
    let major = p.loadLE(UInt16.self, at: 8)
    let minor = p.loadLE(UInt16.self, at: 10)
    guard Format.readableMajors.contains(major) else {
      throw Problem(
        kind: .unsupportedVersion,
        message:
          "unsupported log format \(major).\(minor) (this build reads 1.x and 2.x; a newer "
          + "listtape may read it)",
        offset: 8)
    }
    let headerLength = p.loadLE(UInt32.self, at: 12)
    guard headerLength >= UInt32(Format.headerLength),
      headerLength <= UInt32(Format.maxHeaderLength)
    else {
      throw Problem(kind: .notALog, message: "bad header length \(headerLength)", offset: 12)
    }
    let codec = p[48]
    let flags = p.loadLE(UInt16.self, at: 50)
    guard codec == Format.codecZlib, flags == 0 else {
      throw Problem(
        kind: .unsupportedVersion,
        message: "unsupported codec \(codec) or header flags 0x\(String(flags, radix: 16))",
        offset: 48)
    }
    return FileHeader(
      major: major, minor: minor, headerLength: headerLength,
      uuid: Array(p[16..<32]), createdMillis: p.loadLE(UInt64.self, at: 32),
      eventCodecVersion: p.loadLE(UInt32.self, at: 40),
      stateCodecVersion: p.loadLE(UInt32.self, at: 44), codec: codec, levelHint: p[49],
      flags: flags, dictAdler: p.loadLE(UInt32.self, at: 52))
  }
}

/// The fixed 36-byte header in front of every frame.
struct FrameHeader: Sendable, Equatable {
  var type: UInt8
  var flags: UInt8
  var eventCount: UInt16
  /// EVENTS: seq of the first event; CHECKPOINT: events folded in; META: next seq.
  var firstSeq: UInt64
  var payloadLength: UInt32
  var rawLength: UInt32
  /// Low 32 bits of the file offset the frame was written at.
  var offsetLow: UInt32
  var payloadCRC: UInt32

  var frameLength: UInt64 { UInt64(Format.frameHeaderLength) + UInt64(payloadLength) }
  var isCompressed: Bool { flags & Format.flagCompressed != 0 }

  /// Writes the header with its salt-seeded checksum into the first 36 bytes of `p`.
  func encode(into p: UnsafeMutableRawBufferPointer, salt: UInt32) {
    p.storeLE(Format.frameMagic, at: 0)
    p[4] = type
    p[5] = flags
    p.storeLE(eventCount, at: 6)
    p.storeLE(firstSeq, at: 8)
    p.storeLE(payloadLength, at: 16)
    p.storeLE(rawLength, at: 20)
    p.storeLE(offsetLow, at: 24)
    p.storeLE(payloadCRC, at: 28)
    let crc = crc32Bytes(salt, UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(p)[0..<32]))
    p.storeLE(crc, at: 32)
  }

  /// Parses a header whose magic and checksum verify under `salt`; nil otherwise.
  static func decode(_ p: UnsafeRawBufferPointer, salt: UInt32) -> FrameHeader? {
    guard p.count >= Format.frameHeaderLength, p.loadLE(UInt32.self, at: 0) == Format.frameMagic
    else { return nil }
    let crc = crc32Bytes(salt, UnsafeRawBufferPointer(rebasing: p[0..<32]))
    guard crc == p.loadLE(UInt32.self, at: 32) else { return nil }
    return FrameHeader(
      type: p[4], flags: p[5], eventCount: p.loadLE(UInt16.self, at: 6),
      firstSeq: p.loadLE(UInt64.self, at: 8), payloadLength: p.loadLE(UInt32.self, at: 16),
      rawLength: p.loadLE(UInt32.self, at: 20), offsetLow: p.loadLE(UInt32.self, at: 24),
      payloadCRC: p.loadLE(UInt32.self, at: 28))
  }

  /// Checks type, flags and lengths against the caps of format `major`; independent of
  /// position and sequence.
  func shapeProblem(major: UInt16) -> DamageReason? {
    let known =
      type == Format.typeEvents || type == Format.typeCheckpoint || type == Format.typeMeta
      || (type == Format.typeDictionary && major >= 2)
    guard known || type >= Format.firstSkippableType else { return .unknownFrameType(type) }
    if known && flags & ~Format.knownFlags != 0 { return .unsupportedFlags(flags) }
    let payload = Int(payloadLength)
    let raw = Int(rawLength)
    guard payload <= Format.maxPayload else { return .lengthOutOfRange("payload \(payload)") }
    guard raw <= Format.maxRaw(type: type) else { return .lengthOutOfRange("raw size \(raw)") }
    if isCompressed {
      guard payload >= 8, raw <= payload * Format.maxInflateRatio else {
        return .lengthOutOfRange("raw size \(raw) for payload \(payload)")
      }
    } else if raw != payload {
      return .lengthOutOfRange("stored payload \(payload) != raw \(raw)")
    }
    switch type {
    case Format.typeEvents:
      guard eventCount >= 1, raw >= Int(eventCount) else {
        return .lengthOutOfRange("\(eventCount) events in \(raw) bytes")
      }
    case Format.typeCheckpoint, Format.typeMeta, Format.typeDictionary:
      guard eventCount == 0 else { return .lengthOutOfRange("event count \(eventCount)") }
    default: break
    }
    return nil
  }
}

/// Why a frame (or the file header) was rejected; the reason half of a damage report.
public enum DamageReason: Sendable, Equatable, CustomStringConvertible {
  /// The file ends inside a frame header.
  case incompleteHeader
  /// The header is intact but the file ends inside its payload.
  case incompletePayload
  /// The bytes where a frame should start are not a frame marker.
  case badMagic
  /// The header checksum (seeded with the log's salt) does not match.
  case headerChecksum
  /// A valid frame of this log, but written for another file offset (duplicated or moved).
  case misplacedFrame(writtenAt: UInt32)
  /// A frame type this version does not know and may not skip.
  case unknownFrameType(UInt8)
  /// Flag bits this version does not understand (for example a preset dictionary).
  case unsupportedFlags(UInt8)
  /// A length or count outside the format's caps or inconsistent with the others.
  case lengthOutOfRange(String)
  /// The payload checksum does not match.
  case payloadChecksum
  /// The frame does not continue the event numbering.
  case sequence(expected: UInt64, found: UInt64)
  /// The payload does not inflate to exactly the declared size.
  case decompression(String)
  /// The inflated payload does not split into exactly the declared records.
  case recordFraming(String)
  /// A META frame whose content is malformed.
  case badMetaFrame(String)
  /// The file changed under the reader (shrank, or a frame no longer validates).
  case fileChanged

  /// The same in words, for people.
  public var description: String {
    switch self {
    case .incompleteHeader: return "incomplete frame header"
    case .incompletePayload: return "incomplete frame payload"
    case .badMagic: return "no frame marker"
    case .headerChecksum: return "header checksum mismatch"
    case .misplacedFrame(let at):
      return "frame of this log written for another offset (\(at) mod 2^32)"
    case .unknownFrameType(let t): return "unknown frame type \(t)"
    case .unsupportedFlags(let f): return "unsupported frame flags 0x\(String(f, radix: 16))"
    case .lengthOutOfRange(let what): return "length out of range: \(what)"
    case .payloadChecksum: return "payload checksum mismatch"
    case .sequence(let expected, let found):
      return "event numbering broken: expected \(expected), found \(found)"
    case .decompression(let what): return "decompression failed: \(what)"
    case .recordFraming(let what): return "record framing broken: \(what)"
    case .badMetaFrame(let what): return "bad META frame: \(what)"
    case .fileChanged: return "file changed while reading"
    }
  }
}

/// Outcome of checking one frame in isolation.
enum FrameCheck {
  case ok(FrameHeader)
  case bad(DamageReason)
}

extension FrameHeader {
  /// Checks the header bytes `hb` of the frame at `offset` in a file of `fileSize` bytes:
  /// marker, salted checksum, position (if `placed`), shape, and that its payload lies in
  /// the file. The payload's own checksum is the caller's (it may not have the bytes).
  static func check(
    _ hb: UnsafeRawBufferPointer, at offset: UInt64, fileSize: UInt64, salt: UInt32,
    major: UInt16, placed: Bool = true
  ) -> FrameCheck {
    guard hb.count >= Format.frameHeaderLength else { return .bad(.incompleteHeader) }
    guard hb.loadLE(UInt32.self, at: 0) == Format.frameMagic else { return .bad(.badMagic) }
    guard let h = FrameHeader.decode(hb, salt: salt) else { return .bad(.headerChecksum) }
    if placed && h.offsetLow != UInt32(truncatingIfNeeded: offset) {
      return .bad(.misplacedFrame(writtenAt: h.offsetLow))
    }
    if let problem = h.shapeProblem(major: major) { return .bad(problem) }
    let payloadStart = offset + UInt64(Format.frameHeaderLength)
    guard payloadStart <= fileSize, UInt64(h.payloadLength) <= fileSize - payloadStart else {
      return .bad(.incompletePayload)
    }
    return .ok(h)
  }

  /// Whether this frame continues the numbering of the frames before it, when the next
  /// event expected is `next`.
  func sequenceProblem(next nextSeq: UInt64) -> DamageReason? {
    let lastSeq = nextSeq &- 1
    switch type {
    case Format.typeEvents:
      guard firstSeq == nextSeq else { return .sequence(expected: nextSeq, found: firstSeq) }
      guard nextSeq <= UInt64.max - UInt64(eventCount) - 1 else {
        return .lengthOutOfRange("event numbers overflow")
      }
    case Format.typeCheckpoint:
      guard firstSeq == lastSeq else { return .sequence(expected: lastSeq, found: firstSeq) }
    case Format.typeMeta, Format.typeDictionary:
      guard firstSeq == nextSeq else { return .sequence(expected: nextSeq, found: firstSeq) }
    default: break
    }
    return nil
  }
}

extension UnsafeRawBufferPointer {
  @inline(__always)
  func loadLE<T: FixedWidthInteger>(_: T.Type, at offset: Int) -> T {
    T(littleEndian: loadUnaligned(fromByteOffset: offset, as: T.self))
  }
}

extension UnsafeMutableRawBufferPointer {
  @inline(__always)
  func storeLE<T: FixedWidthInteger>(_ value: T, at offset: Int) {
    storeBytes(of: value.littleEndian, toByteOffset: offset, as: T.self)
  }
}
