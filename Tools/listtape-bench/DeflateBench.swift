import CListTapeZlib
import Foundation
import ListTapeDeflate

/// `listtape-bench __deflate FILE [CUT...]`: each part of FILE (cut at the offsets given)
/// compressed by zlib's level 1 (matching, and Huffman codes alone) and by our writers
/// (`MatchDeflate`, `HuffmanDeflate`): bytes and the median time of 21 runs each.
enum DeflateBench {
  static func run(_ path: String, cuts: [Int]) throws {
    let data = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    let bounds = [0] + cuts + [data.count]
    print("| part | bytes | zlib 1 | zlib 1, Huffman only | MatchDeflate | HuffmanDeflate |")
    print("|---|---:|---:|---:|---:|---:|")
    for k in 0..<(bounds.count - 1) {
      let part = Array(data[bounds[k]..<bounds[k + 1]])
      let z = zlib(part, strategy: Z_DEFAULT_STRATEGY)
      let h = zlib(part, strategy: Z_HUFFMAN_ONLY)
      let m = ours(part, .matched)
      let o = ours(part, .huffman)
      func cell(_ r: (Int, Double)) -> String { String(format: "%d B, %.3f ms", r.0, r.1 * 1e3) }
      print("| \(k) | \(part.count) | \(cell(z)) | \(cell(h)) | \(cell(m)) | \(cell(o)) |")
    }
  }

  static func median(_ body: () -> Int) -> (Int, Double) {
    var times: [Double] = []
    var n = 0
    for _ in 0..<21 {
      let t = Clock.now()
      n = body()
      times.append(Clock.now() - t)
    }
    return (n, times.sorted()[10])
  }

  /// `bytes` as one zlib stream at `level`: its length.
  static func zlibSize(_ bytes: [UInt8], level: Int32) -> Int {
    var length = compressBound(uLong(bytes.count))
    var out = [UInt8](repeating: 0, count: Int(length))
    _ = compress2(&out, &length, bytes, uLong(bytes.count), level)
    return Int(length)
  }

  static func zlib(_ part: [UInt8], strategy: Int32) -> (Int, Double) {
    var out = [UInt8](repeating: 0, count: part.count * 2 + 1024)
    var z = z_stream()
    _ = listtape_deflateInit2(&z, 1, Z_DEFLATED, -15, 8, strategy)
    defer { deflateEnd(&z) }
    var input = part
    return median {
      deflateReset(&z)
      return input.withUnsafeMutableBufferPointer { src in
        out.withUnsafeMutableBufferPointer { dst in
          z.next_in = src.baseAddress
          z.avail_in = uInt(src.count)
          z.next_out = dst.baseAddress
          z.avail_out = uInt(dst.count)
          _ = deflate(&z, Z_FINISH)
          return Int(z.total_out)
        }
      }
    }
  }

  static func ours(_ part: [UInt8], _ way: ZlibParts.Way) -> (Int, Double) {
    var out = [UInt8](repeating: 0, count: ZlibParts.bound(part.count, parts: 1))
    return median {
      part.withUnsafeBufferPointer { src in
        out.withUnsafeMutableBytes {
          ZlibParts.write(src, cuts: [], ways: [way], independentFrom: nil, into: $0).length
        }
      }
    }
  }
}
