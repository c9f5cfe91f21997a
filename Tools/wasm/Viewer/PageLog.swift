/// The page's copy of a log: the file's bytes, checked frame by frame with the reader's own
/// checks (`FileHeader.parse`, `FrameHeader.check`, the payload's CRC-32 and the event
/// numbering, from Sources/ListTapeLog/FrameFormat.swift), and each frame's payload once the
/// page has inflated it. A copy that fails a check is refused with the reason and the byte
/// offset: the page shows that error, never a state folded from damaged bytes.
struct PageLog {
  struct Frame {
    var offset: Int
    var header: FrameHeader
  }

  /// The file, owned (from `lt_alloc`).
  var file = UnsafeMutableRawBufferPointer(start: nil, count: 0)
  var header: FileHeader?
  var frames: [Frame] = []
  /// Each compressed frame's inflated payload, once handed over (owned).
  var inflated: [UnsafeMutableRawBufferPointer?] = []
  /// Whether the log lost events or a dictionary frame (a salvaged log): its frames then
  /// decode across the holes, as `LogEvents` reads such a log.
  var hasGaps = false
  /// Events the log numbers, lost ones included.
  var lastSeq = 0

  /// The name `LogEvents.logID` gives the log (its UUID's first eight bytes), which the
  /// lineage of its dictionaries derives from.
  var logID: UInt64 {
    var id: UInt64 = 0
    for b in (header?.uuid ?? []).prefix(8) { id = id << 8 | UInt64(b) }
    return id
  }

  /// Takes ownership of `bytes` and checks the file header and every frame's header,
  /// position, shape, extent and payload checksum; returns why the copy is refused, or nil.
  mutating func open(_ bytes: UnsafeMutableRawBufferPointer) -> String? {
    file = bytes
    let all = UnsafeRawBufferPointer(bytes)
    let parsed: FileHeader
    do throws(FileHeader.Problem) {
      parsed = try FileHeader.parse(all)
    } catch {
      return "\(error.message) (byte \(error.offset))"
    }
    header = parsed
    let salt = parsed.salt
    var offset = Int(parsed.headerLength)
    while offset < all.count {
      let head = UnsafeRawBufferPointer(
        rebasing: all[offset..<min(all.count, offset + Format.frameHeaderLength)])
      switch FrameHeader.check(
        head, at: UInt64(offset), fileSize: UInt64(all.count), salt: salt, major: parsed.major)
      {
      case .bad(let reason):
        return "damaged frame at byte \(offset): \(reason)"
      case .ok(let h):
        let start = offset + Format.frameHeaderLength
        let payload = UnsafeRawBufferPointer(rebasing: all[start..<start + Int(h.payloadLength)])
        guard crc32Bytes(0, payload) == h.payloadCRC else {
          return "damaged frame at byte \(offset): \(DamageReason.payloadChecksum)"
        }
        frames.append(Frame(offset: offset, header: h))
        offset = start + Int(h.payloadLength)
      }
    }
    inflated = Array(repeating: nil, count: frames.count)
    return nil
  }

  /// Whether frame `i` is one the fold reads (events, checkpoints, META, dictionaries) and
  /// is stored compressed, so the page must inflate it.
  func needsInflating(_ i: Int) -> Bool {
    let h = frames[i].header
    return h.isCompressed && h.type < Format.firstSkippableType
  }

  /// The first frame a fold from the log alone reads to reach event `n`: the dictionary
  /// frame before the last checkpoint at or before `n` (the segment's start, from which
  /// the checkpoint's dictionary is read), or 0.
  func firstFrame(toReach n: Int) -> Int {
    var f = frames.count - 1
    while f >= 0 {
      let h = frames[f].header
      if h.type == Format.typeCheckpoint && Int(h.firstSeq) <= n { break }
      f -= 1
    }
    while f > 0 && frames[f].header.type != Format.typeDictionary { f -= 1 }
    return max(f, 0)
  }

  /// Keeps `bytes` (owned) as frame `i`'s inflated payload; returns why not, or nil.
  mutating func setInflated(_ i: Int, _ bytes: UnsafeMutableRawBufferPointer) -> String? {
    guard i >= 0 && i < frames.count else { return "no frame \(i)" }
    let h = frames[i].header
    guard bytes.count == Int(h.rawLength) else {
      bytes.deallocate()
      return "damaged frame at byte \(frames[i].offset): "
        + "\(DamageReason.decompression("\(bytes.count) bytes, not \(h.rawLength)"))"
    }
    inflated[i]?.deallocate()
    inflated[i] = bytes
    return nil
  }

  /// Frame `i`'s payload as the fold reads it: inflated, or stored; nil while not handed
  /// over.
  func payload(_ i: Int) -> UnsafeRawBufferPointer? {
    let h = frames[i].header
    if h.isCompressed { return inflated[i].map { UnsafeRawBufferPointer($0) } }
    let start = frames[i].offset + Format.frameHeaderLength
    return UnsafeRawBufferPointer(rebasing: file[start..<start + Int(h.payloadLength)])
  }

  /// Checks the event numbering across the frames (META gaps included, so every payload
  /// must be in); notes whether the log has gaps and how many events it numbers. Returns
  /// why the copy is refused, or nil.
  mutating func checkNumbering() -> String? {
    var next: UInt64 = 1
    for (i, f) in frames.enumerated() {
      let h = f.header
      if let problem = h.sequenceProblem(next: next) {
        return "damaged frame at byte \(f.offset): \(problem)"
      }
      switch h.type {
      case Format.typeEvents:
        next += UInt64(h.eventCount)
      case Format.typeMeta:
        guard let p = payload(i) else { return "frame at byte \(f.offset) was not inflated" }
        guard let kind = p.first else {
          return "damaged frame at byte \(f.offset): \(DamageReason.badMetaFrame("empty"))"
        }
        if kind == Format.metaLostRestart { hasGaps = true }
        if kind == Format.metaGap {
          guard p.count >= 9 else {
            return "damaged frame at byte \(f.offset): "
              + "\(DamageReason.badMetaFrame("short gap record"))"
          }
          let count = p.loadLE(UInt64.self, at: 1)
          guard count >= 1, count <= UInt64(Int32.max) else {
            return "damaged frame at byte \(f.offset): "
              + "\(DamageReason.badMetaFrame("gap of \(count) events"))"
          }
          hasGaps = true
          next += count
        }
      default: break
      }
    }
    lastSeq = Int(next) - 1
    return nil
  }
}
