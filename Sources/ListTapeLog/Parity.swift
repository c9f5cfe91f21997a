/// How a writer protects its frames with PARITY frames (docs/log-format.md, "Parity"): after
/// every `groupBytes` of frames it writes the XOR of those bytes folded onto `width` bytes,
/// and a CRC-32 of each `blockSize` block, so that salvage can find the damaged blocks and
/// rebuild any burst of damage up to `width − blockSize` bytes in the group exactly.
package struct ParityOptions: Sendable, Equatable {
  /// Bytes of parity per full group (a multiple of `blockSize` by a power of two).
  package var width = 64 << 10
  /// Bytes per checksummed block: the unit salvage rebuilds.
  package var blockSize = 4 << 10
  /// Frames covered by one parity frame: `groupWidths × width` bytes or a little more (the
  /// frame that fills the group). The cost is about 1 / `groupWidths` of the log.
  package var groupWidths = 40

  /// The defaults above: 64 KiB of parity per 2.5 MiB, 2.6 % of the log.
  package init() {}

  /// Bytes of frames after which a parity frame is written.
  var groupBytes: UInt64 { UInt64(width) * UInt64(groupWidths) }

  /// Whether the numbers make a usable layout (the writer refuses others).
  var isValid: Bool {
    blockSize >= 64 && width >= blockSize && width <= Format.maxParityWidth
      && width % blockSize == 0 && (width / blockSize).nonzeroBitCount == 1 && groupWidths >= 2
  }
}

extension Format {
  /// A PARITY frame: skippable (128 and up), so readers before it check and skip it.
  static let typeParity: UInt8 = 129
  static let parityVersion: UInt8 = 1
  /// Fixed part of a parity payload: version, 3 reserved bytes, block size, width, covered
  /// start and covered length.
  static let parityFixedLength = 28
  static let maxParityWidth = 16 << 20
}

/// The parity of the frames written since the last PARITY frame: what a writer (or salvage's
/// output) accumulates frame by frame, and turns into a PARITY frame's payload.
struct ParityGroup {
  let options: ParityOptions
  /// Offset of the first byte the group covers.
  private(set) var start: UInt64
  /// Bytes covered so far.
  private(set) var length: UInt64 = 0
  /// XOR of the covered bytes at positions congruent modulo `options.width`.
  private var parity: [UInt8]
  /// CRC-32 of each complete block.
  private var crcs: [UInt32] = []
  /// CRC-32 of the block being filled.
  private var blockCRC: UInt32 = 0

  init(options: ParityOptions, start: UInt64) {
    self.options = options
    self.start = start
    self.parity = [UInt8](repeating: 0, count: options.width)
  }

  /// Whether the group covers enough bytes for its parity frame.
  var isDue: Bool { length >= options.groupBytes }

  /// Whether the group is worth a parity frame when the writer closes: its parity then
  /// costs at most about 2 / `groupWidths` of it.
  var isWorthClosing: Bool {
    length >= UInt64(options.blockSize) * UInt64(options.groupWidths)
  }

  /// Adds the bytes written right after those covered so far.
  /// - Complexity: O(bytes).
  mutating func add(_ bytes: UnsafeRawBufferPointer) {
    guard let base = bytes.baseAddress else { return }
    let width = options.width
    let block = options.blockSize
    var done = 0
    parity.withUnsafeMutableBytes { p in
      guard let dst = p.baseAddress else { return }
      while done < bytes.count {
        let column = Int(length % UInt64(width))
        let n = min(width - column, bytes.count - done)
        xor(dst + column, base + done, n)
        // Block checksums: the blocks are aligned to the group's start.
        var k = 0
        while k < n {
          let inBlock = Int((length + UInt64(k)) % UInt64(block))
          let m = min(block - inBlock, n - k)
          blockCRC = crc32Bytes(blockCRC, UnsafeRawBufferPointer(start: base + done + k, count: m))
          if inBlock + m == block {
            crcs.append(blockCRC)
            blockCRC = 0
          }
          k += m
        }
        length += UInt64(n)
        done += n
      }
    }
  }

  /// The payload of the PARITY frame for the bytes covered so far: the parity folded onto the
  /// narrowest width (the full width halved while that still keeps about `groupWidths`
  /// widths in the group), the block checksums, the covered range.
  func payload() -> [UInt8] {
    var width = options.width
    while width > options.blockSize, UInt64(width / 2) * UInt64(options.groupWidths) >= length {
      width /= 2
    }
    var folded = [UInt8](parity[0..<width])
    var k = width
    while k < options.width {
      folded.withUnsafeMutableBytes { f in
        parity.withUnsafeBytes { p in
          if let fb = f.baseAddress, let pb = p.baseAddress { xor(fb, pb + k, width) }
        }
      }
      k += width
    }
    var all = crcs
    if length % UInt64(options.blockSize) != 0 { all.append(blockCRC) }
    var out = [UInt8](repeating: 0, count: Format.parityFixedLength + 4 * all.count)
    out.withUnsafeMutableBytes { p in
      p[0] = Format.parityVersion
      p.storeLE(UInt32(options.blockSize), at: 4)
      p.storeLE(UInt32(width), at: 8)
      p.storeLE(start, at: 12)
      p.storeLE(length, at: 20)
      for (i, c) in all.enumerated() { p.storeLE(c, at: Format.parityFixedLength + 4 * i) }
    }
    return out + folded
  }

  /// Starts a new, empty group at `offset`.
  mutating func restart(at offset: UInt64) {
    start = offset
    length = 0
    crcs.removeAll(keepingCapacity: true)
    blockCRC = 0
    parity.withUnsafeMutableBytes { p in
      if let b = p.baseAddress { b.initializeMemory(as: UInt8.self, repeating: 0, count: p.count) }
    }
  }
}

/// `dst[i] ^= src[i]` for `count` bytes, eight at a time.
private func xor(_ dst: UnsafeMutableRawPointer, _ src: UnsafeRawPointer, _ count: Int) {
  var i = 0
  while i + 8 <= count {
    let a = dst.loadUnaligned(fromByteOffset: i, as: UInt64.self)
    let b = src.loadUnaligned(fromByteOffset: i, as: UInt64.self)
    dst.storeBytes(of: a ^ b, toByteOffset: i, as: UInt64.self)
    i += 8
  }
  while i < count {
    let a = dst.load(fromByteOffset: i, as: UInt8.self)
    let b = src.load(fromByteOffset: i, as: UInt8.self)
    dst.storeBytes(of: a ^ b, toByteOffset: i, as: UInt8.self)
    i += 1
  }
}

/// A PARITY frame's payload, parsed and checked for consistency with where it lies.
struct ParityFrame {
  var blockSize: Int
  var width: Int
  var start: UInt64
  var length: UInt64
  var crcs: [UInt32]
  var parity: [UInt8]

  /// Parses `p`, the payload of a parity frame written at `offset`; nil when it is not
  /// a version this build reads or does not describe bytes before it.
  init?(_ p: UnsafeRawBufferPointer, at offset: UInt64) {
    guard p.count >= Format.parityFixedLength, p[0] == Format.parityVersion else { return nil }
    let blockSize = Int(p.loadLE(UInt32.self, at: 4))
    let width = Int(p.loadLE(UInt32.self, at: 8))
    let start = p.loadLE(UInt64.self, at: 12)
    let length = p.loadLE(UInt64.self, at: 20)
    guard blockSize >= 64, width >= blockSize, width % blockSize == 0,
      width <= Format.maxParityWidth, length > 0, start <= offset, length <= offset - start
    else { return nil }
    let blocks = (length + UInt64(blockSize) - 1) / UInt64(blockSize)
    guard blocks <= UInt64(p.count), Format.parityFixedLength + 4 * Int(blocks) + width == p.count
    else { return nil }
    self.blockSize = blockSize
    self.width = width
    self.start = start
    self.length = length
    self.crcs = (0..<Int(blocks)).map {
      p.loadLE(UInt32.self, at: Format.parityFixedLength + 4 * $0)
    }
    self.parity = [UInt8](p[(p.count - width)...])
  }

  /// Length of block `j` (the last one may be short).
  func blockLength(_ j: Int) -> Int {
    Int(min(UInt64(blockSize), length - UInt64(j) * UInt64(blockSize)))
  }

  /// Rebuilds the blocks of the covered range whose checksums fail in `source`, when every
  /// parity column holds at most one of them; returns the rebuilt bytes by offset, and the
  /// offsets of failing blocks it could not rebuild.
  /// - Complexity: O(bad blocks × `length` / `width` × `blockSize`) plus a checksum of the range.
  func repair(_ source: ByteSource) throws(LogError) -> (
    patches: [(UInt64, [UInt8])], unrepaired: [ByteRange]
  ) {
    var bad: [Int] = []
    for j in 0..<crcs.count {
      let at = start + UInt64(j) * UInt64(blockSize)
      let n = blockLength(j)
      let ok = try source.bytes(at: at, count: n).map { crc32Bytes(0, $0) == crcs[j] } ?? false
      if !ok { bad.append(j) }
    }
    guard !bad.isEmpty else { return ([], []) }
    let columns = width / blockSize
    var perColumn = [Int](repeating: 0, count: columns)
    for j in bad { perColumn[j % columns] += 1 }
    var patches: [(UInt64, [UInt8])] = []
    var unrepaired: [ByteRange] = []
    for j in bad {
      let at = start + UInt64(j) * UInt64(blockSize)
      let n = blockLength(j)
      guard perColumn[j % columns] == 1 else {
        unrepaired.append(ByteRange(offset: at, length: UInt64(n)))
        continue
      }
      let column = (j % columns) * blockSize
      var block = [UInt8](parity[column..<(column + n)])
      var other = j % columns
      while other < crcs.count {
        if other != j {
          let m = min(n, blockLength(other))
          guard let b = try source.bytes(at: start + UInt64(other) * UInt64(blockSize), count: m)
          else { break }
          block.withUnsafeMutableBytes { d in
            if let db = d.baseAddress, let sb = b.baseAddress { xor(db, sb, m) }
          }
        }
        other += columns
      }
      if block.withUnsafeBytes({ crc32Bytes(0, $0) }) == crcs[j] {
        patches.append((at, block))
      } else {
        unrepaired.append(ByteRange(offset: at, length: UInt64(n)))
      }
    }
    return (patches, unrepaired)
  }
}

extension FrameScan {
  /// Finds every PARITY frame of this log at its own offset and rebuilds what each can of
  /// the damaged blocks it covers (salvage's first pass). Reads the file once.
  /// - Complexity: O(file size) plus the rebuilds (`ParityFrame.repair`).
  func parityRepairs() throws(LogError) -> (patches: [(UInt64, [UInt8])], unrepaired: [ByteRange]) {
    var patches: [(UInt64, [UInt8])] = []
    var unrepaired: [ByteRange] = []
    var from = end
    // A header valid under the salt at its own offset is the log's own (or crafted): its
    // length is trusted, so the search jumps over its payload, and a crafted file whose
    // headers claim the rest of it costs one step.
    while let (at, h) = try findFrame(from: from, placedOnly: true) {
      from = at + h.frameLength
      guard h.type == Format.typeParity, !h.isCompressed,
        try payloadProblem(h, at: at) == nil,
        let payload = try source.bytes(
          at: at + UInt64(Format.frameHeaderLength), count: Int(h.payloadLength)),
        let frame = ParityFrame(payload, at: at)
      else { continue }
      let found = try frame.repair(source)
      patches += found.patches
      unrepaired += found.unrepaired
    }
    return (patches, unrepaired)
  }
}
