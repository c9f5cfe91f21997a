import CListTapeZlib

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

  /// Reads and checks the header at the start of `source` (as much of it as the file holds).
  static func read(from source: ByteSource, path: String) throws(LogError) -> FileHeader {
    let available = Int(min(source.size, UInt64(Format.headerLength)))
    guard let bytes = try source.bytes(at: 0, count: available) else {
      throw LogError(.io, path: path, message: "cannot read header")
    }
    return try decode(bytes, path: path)
  }

  /// Parses and checks a header; `available` is how many bytes the file holds.
  static func decode(_ p: UnsafeRawBufferPointer, path: String) throws(LogError) -> FileHeader {
    let prefix = min(p.count, 8)
    for i in 0..<prefix where p[i] != Format.magic[i] {
      throw LogError(.notALog, path: path, message: "not a ListTape log (bad magic)", offset: 0)
    }
    guard p.count >= Format.headerLength else {
      throw LogError(
        .incompleteHeader, path: path,
        message: "incomplete header: file has \(p.count) of \(Format.headerLength) bytes",
        offset: 0)
    }
    let crc = crc32Bytes(0, UnsafeRawBufferPointer(rebasing: p[0..<60]))
    guard crc == p.loadLE(UInt32.self, at: 60) else {
      throw LogError(
        .notALog, path: path, message: "damaged log header (header checksum mismatch)", offset: 0)
    }
    let major = p.loadLE(UInt16.self, at: 8)
    let minor = p.loadLE(UInt16.self, at: 10)
    guard Format.readableMajors.contains(major) else {
      throw LogError(
        .unsupportedVersion, path: path,
        message:
          "unsupported log format \(major).\(minor) (this build reads 1.x and 2.x; a newer "
          + "listtape may read it)",
        offset: 8)
    }
    let headerLength = p.loadLE(UInt32.self, at: 12)
    guard headerLength >= UInt32(Format.headerLength),
      headerLength <= UInt32(Format.maxHeaderLength)
    else {
      throw LogError(
        .notALog, path: path, message: "bad header length \(headerLength)", offset: 12)
    }
    let codec = p[48]
    let flags = p.loadLE(UInt16.self, at: 50)
    guard codec == Format.codecZlib, flags == 0 else {
      throw LogError(
        .unsupportedVersion, path: path,
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

/// zlib's CRC32 over a raw buffer, continuing from `seed`.
func crc32Bytes(_ seed: UInt32, _ p: UnsafeRawBufferPointer) -> UInt32 {
  guard let base = p.baseAddress, !p.isEmpty else { return seed }
  var crc = UInt(seed)
  var ptr = base.assumingMemoryBound(to: Bytef.self)
  var left = p.count
  while left > 0 {
    let n = min(left, 1 << 30)
    crc = UInt(crc32(uLong(crc), ptr, uInt(n)))
    ptr += n
    left -= n
  }
  return UInt32(truncatingIfNeeded: crc)
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
