// libFuzzer entry for the checkpoint (state) decoders (Tools/fuzz/run.sh compiles it with
// the model's sources into one module).

/// Decodes arbitrary bytes as a 2.0 compact state (its dictionary made of short ids) and as
/// a 1.0 canonical state; whatever decodes must re-encode and decode back to itself.
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
  if let state = try? ListState(encoded: bytes) {
    if (try? ListState(encoded: state.encoded())) != state {
      fatalError("canonical state does not read back")
    }
  }
  return 0
}
