// libFuzzer entry for the event decoders (Tools/fuzz/run.sh compiles it with the model's
// sources into one module). Input: a first byte choosing the decoder, then its bytes.

/// Decodes arbitrary bytes as a 2.0 event frame (after a dictionary restart made of the
/// input's tail; its records folded as they are and as `Event`s, which must agree) or as
/// 1.0 records; any crash, hang, unbounded allocation or disagreement is a bug.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzEventDecoder(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
  guard size > 2 else { return 0 }
  let bytes = UnsafeRawBufferPointer(start: data + 2, count: size - 2)
  let count = Int(data[1]) + 1
  var decoder = EventDecoder()
  var total = 0
  switch data[0] % 5 {
  case 0:
    _ = try? decoder.decodeFrame(bytes, firstSeq: 1, count: count) { _, e in
      total &+= e.op.utf8.count
      return true
    }
  case 1:
    // A dictionary restart, then the same bytes as a frame of that segment.
    if (try? decoder.restart(bytes, seq: 1)) != nil {
      _ = try? decoder.decodeFrame(bytes, firstSeq: 1, count: count) { _, _ in true }
    }
  case 2:
    // Across lost definitions, as in a salvaged log; stopping early.
    _ = try? decoder.decodeFrame(bytes, firstSeq: 1, count: count, acrossGaps: true) { seq, _ in
      seq < count / 2
    }
    _ = try? decoder.skipFrame(bytes, firstSeq: 1, count: count)
    // Its definitions read from the prefix that holds them agree with a whole read.
    let head = UnsafeRawBufferPointer(
      rebasing: bytes[0..<min(bytes.count, EventDecoder.definitionsHead)])
    if let end = EventDecoder.definitionsEnd(ofFrame: head), end <= bytes.count {
      var whole = EventDecoder()
      var part = EventDecoder()
      let a = try? whole.skipFrame(bytes, firstSeq: 1, count: count)
      let b = try? part.skipFrame(
        UnsafeRawBufferPointer(rebasing: bytes[0..<max(end, head.count)]), firstSeq: 1,
        count: count, prefix: true)
      if a != nil, b != nil {
        precondition(whole.dictionary.bytes == part.dictionary.bytes, "prefix read differs")
        precondition(whole.aliases == part.aliases, "prefix repeats differ")
      }
    }
  case 3:
    // The one reducer, two ways in: the frame's records folded as decoded, and the same
    // events read back as `Event`s and folded from strings, must reach equal states with
    // equal faults; neither may trap nor hang.
    var ops = FoldOps()
    guard
      (try? decoder.decodeFrame(
        bytes, firstSeq: 1, count: count, from: 1, through: .max, into: &ops)) == .done
    else { break }
    var byRecords = ListState()
    var byEvents = ListState()
    for i in 0..<ops.count where ops.isEvent(i) {
      let event = ops.event(i, decoder.dictionary)
      let a = (try? byRecords.apply(ops, i)) ?? nil
      var b: ListFault?
      do throws(ListFault) { try byEvents.apply(event) } catch { b = error }
      precondition(a == b, "records and events fault differently")
    }
    precondition(byRecords == byEvents, "records and events fold to different states")
    total &+= byRecords.numberOfAllItems
  default:
    // 1.0 records: the input split into records of the length its second byte says.
    var at = 0
    var seq = 1
    while at < bytes.count {
      let n = min(bytes.count - at, count)
      _ = try? decoder.decode(UnsafeRawBufferPointer(rebasing: bytes[at..<at + n]), seq: seq)
      at += n
      seq += 1
    }
  }
  return total == -1 ? 1 : 0
}
