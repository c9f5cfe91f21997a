// libFuzzer entry for the checkpoint (state) decoders (Tools/fuzz/run.sh compiles it with
// the model's sources into one module).

/// Decodes arbitrary bytes as a 2.0 compact state (its dictionary made of short ids) and as
/// a 1.0 canonical state; whatever decodes must re-encode and decode back to itself. The
/// compact state read in two parts (cut where its last column would start, and in the
/// middle) must give what it gives whole: the same state or the same error.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCheckpointDecoder(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
  let bytes = UnsafeRawBufferPointer(start: data, count: size)
  var ids = IdSpace()
  for i in 0..<512 { ids.append("i\(i)") }
  let aliases = DefinitionAliases(vetted: ids.count, map: [:])
  if let state = try? ListState(compact: bytes, ids: ids, aliases: aliases) {
    let again = try? state.compactEncoded(segment: 0, dictionaryCount: 512)
    if let again {
      let back = again.bytes.withUnsafeBytes {
        try? ListState(compact: $0, ids: ids, aliases: aliases)
      }
      if back != state { fatalError("compact state does not read back") }
    }
  }
  let whole = Result { () throws(CodecError) in
    try ListState(compact: bytes, ids: ids, aliases: aliases)
  }
  for cut in [lastColumnStart(bytes) ?? 0, size / 2] {
    let head = UnsafeRawBufferPointer(rebasing: bytes[..<cut])
    let tail = UnsafeRawBufferPointer(rebasing: bytes[cut...])
    let two = Result { () throws(CodecError) in
      try ListState(
        compact: head, strings: CompactStrings(count: tail.count) { tail },
        ids: CompactIDs(ids), aliases: aliases)
    }
    switch (whole, two) {
    case (.success(let a), .success(let b)) where a == b: break
    case (.failure(let a), .failure(let b)) where a == b: break
    default: fatalError("a compact state read in two parts differs from the whole (cut \(cut))")
    }
  }
  if let state = try? ListState(encoded: bytes) {
    if (try? ListState(encoded: state.encoded())) != state {
      fatalError("canonical state does not read back")
    }
  }
  return 0
}

/// Where a compact state's last column would start by the lengths its header gives, or nil
/// when the header does not read that far.
func lastColumnStart(_ bytes: UnsafeRawBufferPointer) -> Int? {
  guard let c = ListState.compactColumnSizes(bytes), c.last <= bytes.count else { return nil }
  return bytes.count - c.last
}
