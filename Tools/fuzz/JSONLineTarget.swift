// libFuzzer entry for the JSON line parser (Tools/fuzz/run.sh compiles it with the model's
// sources, ListTapeJSON imported as a module).

/// Parses arbitrary bytes as an event line; whatever parses must print back to a line that
/// parses to the same event.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJSONLine(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
  let bytes = UnsafeRawBufferPointer(start: data, count: size)
  guard let event = try? Event(jsonLine: bytes) else { return 0 }
  if (try? Event(jsonLine: event.jsonLine)) != event { fatalError("event does not read back") }
  return 0
}
