// libFuzzer entry for the index file reader (Tools/fuzz/run.sh compiles it with
// Sources/ListTapeLog/*.swift into one module).

/// Parses arbitrary bytes as an index file, reads every seek point's state, dictionary and
/// site model, checks it against a small log and restores the scan it describes; nothing
/// may crash.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzIndexReader(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
  let bytes = Array(UnsafeBufferPointer(start: data, count: size))
  guard let index = try? LogIndex(bytes: bytes, label: "fuzz") else { return 0 }
  var total = 0
  for p in index.seekPoints.prefix(64) {
    total &+= (try? index.state(at: p))?.count ?? 0
    total &+= (try? index.dictionary(at: p))?.ends.count ?? 0
    total &+= ((try? index.siteModel(at: p)) ?? nil)?.count ?? 0
  }
  _ = index.seekPoint(atOrBefore: 1_000)
  // Against a log: a header whose UUID may match the index's, and no frames.
  var header = FileHeader(
    uuid: index.uuid, createdMillis: 0, eventCodecVersion: 2, stateCodecVersion: 2, levelHint: 3)
  header.major = 2
  let log = ByteSource(bytes: header.encode(), path: "fuzz-log")
  if (try? index.mismatch(header: header, source: log)) == .some(nil) {
    var scan = index.restoreScan(source: log, header: header)
    if let inflater = Inflater() { try? scan.run(inflater: inflater) }
    total &+= Int(truncatingIfNeeded: scan.nextSeq)
  }
  return total == -1 ? 1 : 0
}
