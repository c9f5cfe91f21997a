import ListTapeModel

/// `wasmkit run listtape-viewer.wasm < events.jsonl`: the module the page embeds, run as a
/// WASI command so the suite can compare its fold with the native reducer's.
///
/// Reads JSON Lines from standard input and writes a line per event, `ok`, `fault: …` or
/// `malformed: …`, then one with the state as the protocol's state JSON (after a `#hash`
/// line, its FNV-1a 32 in hex, as the page's check writes it). `#every N` writes the state
/// only after every Nth event; `#reset` starts again from the empty list at event 0.
extension Viewer {
  /// Decodes and folds one JSON line (the check's input, not a log); the result holds the
  /// fault or why it is malformed.
  mutating func apply(json: UnsafeRawBufferPointer) -> Outcome {
    let event: Event
    do throws(MalformedEvent) {
      event = try Event(jsonLine: json)
    } catch {
      setResult(error.message)
      return .malformed
    }
    do throws(ListFault) {
      try view.state.apply(event)
    } catch {
      setResult("\(event.op): \(error)")
      return .fault
    }
    setResult(UnsafeRawBufferPointer(start: nil, count: 0))
    return .applied
  }
}

@_expose(wasm, "_start")
@_cdecl("_start")
func checkMain() {
  let input = readStandardInput()
  var out: [UInt8] = []
  var hashing = false
  var every = 1
  var n = 0
  var start = 0
  input.withUnsafeBytes { bytes in
    for i in 0...bytes.count where i == bytes.count || bytes[i] == UInt8(ascii: "\n") {
      let line = UnsafeRawBufferPointer(rebasing: bytes[start..<i])
      start = i + 1
      if line.isEmpty { continue }
      if line.elementsEqual("#reset".utf8) {
        viewer.view.state = ListState()
        n = 0
        continue
      }
      if line.elementsEqual("#hash".utf8) {
        hashing = true
        continue
      }
      if line.starts(with: "#every ".utf8) {
        every = max(1, decimal(line.dropFirst(7)))
        continue
      }
      n += 1
      let outcome = viewer.apply(json: line)
      switch outcome {
      case .applied: out += Array("ok".utf8)
      case .fault: out += Array("fault: ".utf8)
      default: out += Array("malformed: ".utf8)
      }
      out += UnsafeRawBufferPointer(viewer.result)
      out.append(UInt8(ascii: "\n"))
      guard n % every == 0 else { continue }
      viewer.stateJSON(event: n)
      if hashing {
        out += Array(hex(fnv1a(UnsafeRawBufferPointer(viewer.result))).utf8)
      } else {
        out += UnsafeRawBufferPointer(viewer.result)
      }
      out.append(UInt8(ascii: "\n"))
    }
  }
  writeStandardOutput(out)
}

/// The value of ASCII digits (0 when there are none).
func decimal(_ digits: UnsafeRawBufferPointer.SubSequence) -> Int {
  var value = 0
  for d in digits where d >= UInt8(ascii: "0") && d <= UInt8(ascii: "9") && value < 1 << 24 {
    value = value * 10 + Int(d - UInt8(ascii: "0"))
  }
  return value
}

/// FNV-1a 32, which the page's check and the tests compute too.
func fnv1a(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
  var h: UInt32 = 0x811c_9dc5
  for b in bytes {
    h = (h ^ UInt32(b)) &* 0x0100_0193
  }
  return h
}

/// Eight lowercase hex digits.
func hex(_ v: UInt32) -> String {
  let digits = Array("0123456789abcdef".utf8)
  var out: [UInt8] = []
  for shift in stride(from: 28, through: 0, by: -4) {
    out.append(digits[Int(v >> UInt32(shift) & 0xF)])
  }
  return String(decoding: out, as: UTF8.self)
}

@_extern(wasm, module: "wasi_snapshot_preview1", name: "fd_read")
@_extern(c)
func wasiRead(
  _ fd: Int32, _ iovs: UnsafeRawPointer, _ count: Int32, _ done: UnsafeMutablePointer<Int32>
) -> Int32

@_extern(wasm, module: "wasi_snapshot_preview1", name: "fd_write")
@_extern(c)
func wasiWrite(
  _ fd: Int32, _ iovs: UnsafeRawPointer, _ count: Int32, _ done: UnsafeMutablePointer<Int32>
) -> Int32

/// One `fd_read` (or `fd_write`) of up to `count` bytes at `start`: the bytes moved, or -1.
func transfer(write: Bool, _ fd: Int32, _ start: UnsafeRawPointer, _ count: Int) -> Int {
  var iov: (UInt32, UInt32) = (UInt32(UInt(bitPattern: start)), UInt32(count))
  var done: Int32 = 0
  let status = withUnsafeBytes(of: &iov) { v -> Int32 in
    guard let iovs = v.baseAddress else { return -1 }
    return write ? wasiWrite(fd, iovs, 1, &done) : wasiRead(fd, iovs, 1, &done)
  }
  return status == 0 ? Int(done) : -1
}

/// All of standard input.
func readStandardInput() -> [UInt8] {
  var all: [UInt8] = []
  var chunk = [UInt8](repeating: 0, count: 1 << 16)
  while true {
    let done = chunk.withUnsafeMutableBytes { buffer in
      buffer.baseAddress.map { transfer(write: false, 0, $0, buffer.count) } ?? -1
    }
    if done <= 0 { return all }
    all += chunk[0..<done]
  }
}

/// Writes all of `bytes` to standard output.
func writeStandardOutput(_ bytes: [UInt8]) {
  bytes.withUnsafeBytes { buffer in
    guard let base = buffer.baseAddress else { return }
    var offset = 0
    while offset < buffer.count {
      let done = transfer(write: true, 1, base + offset, buffer.count - offset)
      if done <= 0 { return }
      offset += done
    }
  }
}
