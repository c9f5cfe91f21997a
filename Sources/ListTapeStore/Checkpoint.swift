import ListTapeModel

/// What a checkpoint frame holds: the folded state after its event, plus the event codec's
/// running time so decoding can resume right after it.
///
/// Layout: version byte (1), the last event time as 8 little-endian bytes, then the state's
/// canonical encoding (`ListState.encoded()`).
package struct Checkpoint {
  package static let version: UInt8 = 1

  package var state: ListState
  package var lastTime: Int64

  package func encoded() -> [UInt8] {
    var out: [UInt8] = [Self.version]
    withUnsafeBytes(of: lastTime.littleEndian) { out.append(contentsOf: $0) }
    out.append(contentsOf: state.encoded())
    return out
  }

  package init(state: ListState, lastTime: Int64) {
    self.state = state
    self.lastTime = lastTime
  }

  package init(decoding blob: [UInt8]) throws(CodecError) {
    guard blob.count >= 9 else { throw CodecError("checkpoint shorter than its header", offset: 0) }
    guard blob[0] == Self.version else {
      throw CodecError("unknown checkpoint version \(blob[0])", offset: 0)
    }
    var t: UInt64 = 0
    for i in (1...8).reversed() { t = t << 8 | UInt64(blob[i]) }
    lastTime = Int64(bitPattern: t)
    let result: Result<ListState, CodecError> = blob.withUnsafeBytes { raw in
      Result { () throws(CodecError) in
        try ListState(encoded: UnsafeRawBufferPointer(rebasing: raw[9...]))
      }
    }
    state = try result.get()
  }
}
