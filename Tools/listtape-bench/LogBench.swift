import Foundation
import ListTapeLog

/// Raw log throughput: writer appends and reader replay of synthetic ~20-byte records,
/// against plain zlib inflate of the same frames.
enum LogBench {
  /// Runs the log benchmarks and prints a small table.
  static func run() {
    let count = 4_000_000
    let (bytes, offsets) = syntheticRecords(count: count, seed: 0x5EED)
    let path = NSTemporaryDirectory() + "listtape-logbench-\(getpid()).log"
    defer {
      _ = unlink(path)
    }
    _ = unlink(path)
    do {
      // Writer: default options (fsync every second, 50 ms batch delay).
      let writeStart = DispatchTime.now()
      let writer = try LogWriter.open(path: path)
      bytes.withUnsafeBytes { all in
        for i in 0..<count {
          let r = UnsafeRawBufferPointer(rebasing: all[offsets[i]..<offsets[i + 1]])
          do { try writer.append(r) } catch { fatalError("\(error)") }
        }
      }
      try writer.close()
      let writeSeconds = seconds(since: writeStart)

      // Reader: open (scan), then replay with a trivial fold over every byte of the record.
      let openStart = DispatchTime.now()
      let reader = try LogReader(path: path)
      let openSeconds = seconds(since: openStart)
      var fold: UInt64 = 0
      let replayStart = DispatchTime.now()
      try reader.forEachRecord { seq, r in
        var h = seq
        for b in r { h = (h &* 31) &+ UInt64(b) }
        fold ^= h
      }
      let replaySeconds = seconds(since: replayStart)

      let inflateStart = DispatchTime.now()
      let inflated = try reader.inflateAllEventFrames()
      let inflateSeconds = seconds(since: inflateStart)

      let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
      let rawSize = offsets[count]
      print("log benchmark: \(count) synthetic records, \(rawSize / count) bytes avg")
      print("  file size          \(size) bytes (\(fmt(Double(size) / Double(count))) B/record)")
      print("  append             \(rate(count, writeSeconds)) records/s  (\(fmt(writeSeconds)) s)")
      print("  reader open/scan   \(fmt(openSeconds * 1000)) ms")
      print(
        "  replay (decode)    \(rate(count, replaySeconds)) records/s  (\(fmt(replaySeconds)) s)")
      print("  zlib inflate only  \(fmt(inflateSeconds)) s for \(inflated) bytes")
      print(
        "  replay / inflate   \(fmt(replaySeconds / inflateSeconds))x  (checksum \(fold & 0xFF))")
    } catch {
      print("log benchmark failed: \(error)")
    }
  }

  /// Event-like records: an op byte, a few varints from small ranges, sometimes a short title.
  static func syntheticRecords(count: Int, seed: UInt64) -> ([UInt8], [Int]) {
    var state = seed
    func next() -> UInt64 {
      state &+= 0x9E37_79B9_7F4A_7C15
      var z = state
      z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
      z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
      return z ^ (z >> 31)
    }
    var bytes: [UInt8] = []
    bytes.reserveCapacity(count * 22)
    var offsets = [0]
    offsets.reserveCapacity(count + 1)
    var t: UInt64 = 1_700_000_000_000
    for _ in 0..<count {
      let r = next()
      bytes.append(UInt8(r % 12))
      t += r >> 60
      appendVarint(t - 1_700_000_000_000, &bytes)
      appendVarint((r >> 8) % 100_000, &bytes)
      appendVarint((r >> 28) % 100_000, &bytes)
      appendVarint((r >> 20) % 2_000, &bytes)
      bytes += [UInt8(r >> 52 & 7), 0, UInt8(r >> 56 & 1), 1]
      if r % 5 == 0 {
        let words = ["item", "folder", "note", "photo", "mail", "draft"]
        let w = Array(words[Int((r >> 40) % 6)].utf8)
        bytes.append(UInt8(w.count + 3))
        bytes += w
        appendVarint((r >> 48) % 1000, &bytes)
      } else {
        bytes.append(UInt8((r >> 44) & 3))
      }
      offsets.append(bytes.count)
    }
    return (bytes, offsets)
  }

  private static func seconds(since start: DispatchTime) -> Double {
    Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
  }

  private static func rate(_ n: Int, _ s: Double) -> String { fmt(Double(n) / s) }

  private static func fmt(_ x: Double) -> String {
    x >= 1000 ? String(Int(x.rounded())) : String(format: "%.3f", x)
  }
}
