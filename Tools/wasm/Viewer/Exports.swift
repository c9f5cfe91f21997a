import ListTapeJSON
import ListTapeModel

/// The module's calls, as the page's script makes them (Tools/listtape/HTML/HTMLPage.swift).
/// Calls that can fail return -1 (or `Outcome.failed`) with the reason in the result.
nonisolated(unsafe) var viewer = Viewer()

/// Runs `body`, putting a failure's words in the result: 0, or -1.
func reporting(_ body: () throws(ViewError) -> Void) -> Int32 {
  do throws(ViewError) {
    try body()
    return 0
  } catch {
    viewer.setResult(error.message)
    return -1
  }
}

/// `count` bytes of linear memory for the page to fill; give them back with `lt_free`
/// (or hand them to `lt_open` or `lt_inflated`, which keep them).
@_expose(wasm, "lt_alloc")
@_cdecl("lt_alloc")
func ltAlloc(_ count: Int32) -> UnsafeMutableRawPointer {
  .allocate(byteCount: max(Int(count), 1), alignment: 16)
}

@_expose(wasm, "lt_free")
@_cdecl("lt_free")
func ltFree(_ pointer: UnsafeMutableRawPointer) {
  pointer.deallocate()
}

/// Where the last result starts, and its length in bytes.
@_expose(wasm, "lt_result")
@_cdecl("lt_result")
func ltResult() -> UnsafeMutableRawPointer? { viewer.result.baseAddress }

@_expose(wasm, "lt_result_length")
@_cdecl("lt_result_length")
func ltResultLength() -> Int32 { Int32(viewer.result.count) }

/// Keeps `count` bytes at `pointer` (from `lt_alloc`) as the log and checks its header and
/// frames (`PageLog.open`); returns how many frames it has, or -1.
@_expose(wasm, "lt_open")
@_cdecl("lt_open")
func ltOpen(_ pointer: UnsafeMutableRawPointer, _ count: Int32) -> Int32 {
  viewer = Viewer()
  if let problem = viewer.log.open(UnsafeMutableRawBufferPointer(start: pointer, count: Int(count)))
  {
    viewer.setResult(problem)
    return -1
  }
  return Int32(viewer.log.frames.count)
}

/// Whether the page must inflate frame `i` (1) or not (0).
@_expose(wasm, "lt_frame_inflates")
@_cdecl("lt_frame_inflates")
func ltFrameInflates(_ i: Int32) -> Int32 { viewer.log.needsInflating(Int(i)) ? 1 : 0 }

/// Frame `i`'s type (1 events, 2 checkpoint, 3 META, 4 dictionary, 128 and up skippable).
@_expose(wasm, "lt_frame_type")
@_cdecl("lt_frame_type")
func ltFrameType(_ i: Int32) -> Int32 { Int32(viewer.log.frames[Int(i)].header.type) }

/// Where frame `i`'s payload starts in the log's bytes, and its length.
@_expose(wasm, "lt_frame_start")
@_cdecl("lt_frame_start")
func ltFrameStart(_ i: Int32) -> Int32 {
  Int32(viewer.log.frames[Int(i)].offset + Format.frameHeaderLength)
}

@_expose(wasm, "lt_frame_length")
@_cdecl("lt_frame_length")
func ltFrameLength(_ i: Int32) -> Int32 { Int32(viewer.log.frames[Int(i)].header.payloadLength) }

/// The first frame a view of event `n` reads when it starts from the log alone (the
/// dictionary frame before the last checkpoint at or before `n`, or 0): the page inflates
/// the frames from there first, and the rest while the first state is on screen.
@_expose(wasm, "lt_first_frame")
@_cdecl("lt_first_frame")
func ltFirstFrame(_ n: Int32) -> Int32 { Int32(viewer.log.firstFrame(toReach: Int(n))) }

/// Keeps `count` bytes at `pointer` (from `lt_alloc`) as frame `i`'s inflated payload.
@_expose(wasm, "lt_inflated")
@_cdecl("lt_inflated")
func ltInflated(_ i: Int32, _ pointer: UnsafeMutableRawPointer, _ count: Int32) -> Int32 {
  let bytes = UnsafeMutableRawBufferPointer(start: pointer, count: Int(count))
  if let problem = viewer.log.setInflated(Int(i), bytes) {
    viewer.setResult(problem)
    return -1
  }
  return 0
}

/// A salvaged log's recovery point (`Timeline.anchors`): a fold takes the log's checkpoint
/// after event `seq` as the state there. Before `lt_prepare`.
@_expose(wasm, "lt_anchor")
@_cdecl("lt_anchor")
func ltAnchor(_ seq: Int32) { viewer.anchors.insert(Int(seq)) }

/// Checks the numbering and readies both folds for a window ending at event `through`, with
/// a seek point every `spacing` events; returns the events the log numbers, or -1.
@_expose(wasm, "lt_prepare")
@_cdecl("lt_prepare")
func ltPrepare(_ through: Int32, _ spacing: Int32) -> Int32 {
  viewer.spacing = max(1, Int(spacing))
  let status = reporting { () throws(ViewError) in try viewer.prepare(through: Int(through)) }
  return status < 0 ? -1 : Int32(viewer.log.lastSeq)
}

/// Runs the first fold on through at most `events` more events: 1 when it is done, 0 when
/// not yet, -1.
@_expose(wasm, "lt_pass")
@_cdecl("lt_pass")
func ltPass(_ events: Int32) -> Int32 {
  var done = false
  let status = reporting { () throws(ViewError) in done = try viewer.runPass(events: Int(events)) }
  return status < 0 ? -1 : done ? 1 : 0
}

/// The faults (`[[n, "op: fault"], …]`) or marks (`[[n, "label, …"], …]`) the first fold
/// found, in the result (once it is done).
@_expose(wasm, "lt_faults")
@_cdecl("lt_faults")
func ltFaults() { viewer.setResult(viewer.pass.findings?.faults.bytes ?? []) }

@_expose(wasm, "lt_marks")
@_cdecl("lt_marks")
func ltMarks() { viewer.setResult(viewer.pass.findings?.marks.bytes ?? []) }

/// Seek points kept.
@_expose(wasm, "lt_points")
@_cdecl("lt_points")
func ltPoints() -> Int32 { Int32(viewer.points.count) }

/// Bytes the seek points' states take.
@_expose(wasm, "lt_point_bytes")
@_cdecl("lt_point_bytes")
func ltPointBytes() -> Int32 { Int32(viewer.points.reduce(0) { $0 + $1.state.count }) }

/// String tables the view has built (one per finished segment once jumps reuse them).
@_expose(wasm, "lt_tables")
@_cdecl("lt_tables")
func ltTables() -> Int32 { Int32(viewer.tablesBuilt) }

/// Times the view started over from a seek point or the log's checkpoint (a jump; a step
/// back past the states kept).
@_expose(wasm, "lt_restores")
@_cdecl("lt_restores")
func ltRestores() -> Int32 { Int32(viewer.restores) }

/// Makes the view's state the one after event `n`.
@_expose(wasm, "lt_seek")
@_cdecl("lt_seek")
func ltSeek(_ n: Int32) -> Int32 {
  reporting { () throws(ViewError) in try viewer.seek(to: Int(n)) }
}

/// Folds event `n` onto the state after `n - 1` (`Viewer.step`): 0 applied, 1 fault (its
/// words in the result), 3 out of range, 4 lost, 5 failed. With `diffing` 1, `lt_diff`
/// then says what it changed.
@_expose(wasm, "lt_step")
@_cdecl("lt_step")
func ltStep(_ n: Int32, _ diffing: Int32) -> Int32 {
  var outcome = Viewer.Outcome.failed
  _ = reporting { () throws(ViewError) in
    outcome = try viewer.step(to: Int(n), diffing: diffing != 0)
  }
  return outcome.rawValue
}

/// Puts what the last `lt_step` with `diffing` changed in the result, in the words of
/// `listtape diff` with `--context context` (`Viewer.diff`).
@_expose(wasm, "lt_diff")
@_cdecl("lt_diff")
func ltDiff(_ context: Int32) {
  viewer.diff(context: Int(context))
}

/// Puts the view's state as the protocol's state JSON (with `"event": event`) in the result.
@_expose(wasm, "lt_state")
@_cdecl("lt_state")
func ltState(_ event: Int32) {
  viewer.stateJSON(event: Int(event))
}

/// Puts at most `limit` rows of the view's state in the result (`Viewer.rows`); hidden ones
/// too when `hidden` is 1.
@_expose(wasm, "lt_rows")
@_cdecl("lt_rows")
func ltRows(_ limit: Int32, _ hidden: Int32) {
  viewer.rows(limit: Int(limit), hidden: hidden != 0)
}

/// Puts events `lo...hi` as the page lists them in the result (`Viewer.events`).
@_expose(wasm, "lt_events")
@_cdecl("lt_events")
func ltEvents(_ lo: Int32, _ hi: Int32) -> Int32 {
  reporting { () throws(ViewError) in try viewer.events(Int(lo), Int(hi)) }
}

/// For tests (`#check`): folds events `from...through` one by one from the state after
/// `from - 1` and puts a line per event in the result: `ok`, `fault: op: …` (a lost event
/// reads `ok`: the state is unchanged), then the FNV-1a 32 of the state JSON; each seek point
/// passed on the way must decode to the state folded there.
@_expose(wasm, "lt_check")
@_cdecl("lt_check")
func ltCheck(_ from: Int32, _ through: Int32) -> Int32 {
  var out: [UInt8] = []
  let status = reporting { () throws(ViewError) in
    try viewer.seek(to: Int(from) - 1)
    var n = Int(from)
    while n <= Int(through) {
      let outcome = try viewer.step(to: n, diffing: false)
      if outcome == .fault {
        out += Array("fault: ".utf8) + UnsafeRawBufferPointer(viewer.result)
      } else {
        out += Array("ok".utf8)
      }
      viewer.stateJSON(event: n)
      let folded = fnv1a(UnsafeRawBufferPointer(viewer.result))
      out += Array(" ".utf8) + Array(hex(folded).utf8)
      // A seek point here decodes to the state folded here.
      if let p = viewer.point(atOrBefore: n), p.seq == n, n > 0 {
        var w = JSONWriter()
        try viewer.cursor(at: p).state.writeJSON(event: n, to: &w)
        let loaded = w.bytes.withUnsafeBytes { fnv1a($0) }
        if loaded != folded {
          throw ViewError(message: "the seek point at event \(n) is not the state folded there")
        }
      }
      out.append(UInt8(ascii: "\n"))
      n += 1
    }
  }
  if status == 0 { viewer.setResult(out) }
  return status
}
