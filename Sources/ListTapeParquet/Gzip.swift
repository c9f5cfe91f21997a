import CListTapeZlib
internal import ListTapeDeflate

/// Gzip members (Parquet's GZIP codec), page after page: zlib's deflate, which matches
/// repeated strings (LZ77 and Huffman codes), or `HuffmanDeflate`, which only Huffman-codes
/// the bytes, much faster where matching finds little (hex text, bit-packed numbers), with
/// the same format for readers. The `z_stream` lives at a fixed heap address: zlib keeps a
/// back-pointer to it.
final class GzipCompressor {
  private let stream: UnsafeMutablePointer<z_stream>
  /// Output space, grown to the largest bound seen.
  private var buffer: [UInt8] = []

  /// nil when zlib cannot set up a stream (out of memory).
  init?(level: Int32) {
    let s = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
    s.initialize(to: z_stream())
    // windowBits 15 + 16: a gzip header and trailer instead of zlib's.
    guard listtape_deflateInit2(s, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK
    else {
      s.deinitialize(count: 1)
      s.deallocate()
      return nil
    }
    stream = s
  }

  deinit {
    deflateEnd(stream)
    stream.deinitialize(count: 1)
    stream.deallocate()
  }

  /// Whether Huffman codes alone compress bytes like `src`'s first 64 KiB within 5 % of
  /// what matching does (then they are the cheaper way for pages of that kind: matching
  /// costs 3-8 × the time); nil when zlib fails.
  func huffmanSuffices(_ src: [UInt8]) -> Bool? {
    let sample = Array(src.prefix(64 << 10))
    guard let matched = compress(sample, huffmanOnly: false, { $0.count }),
      let coded = compress(sample, huffmanOnly: true, { $0.count })
    else { return nil }
    return coded * 20 <= matched * 21
  }

  /// Compresses `src` as one gzip member (by Huffman codes alone if `huffmanOnly`) and
  /// calls `body` with the compressed bytes (valid only during the call); nil when zlib
  /// fails.
  func compress<R>(
    _ src: [UInt8], huffmanOnly: Bool = false, _ body: (UnsafeRawBufferPointer) -> R
  ) -> R? {
    if !huffmanOnly { deflateReset(stream) }
    let bound =
      huffmanOnly
      ? HuffmanDeflate.bound(src.count) : Int(deflateBound(stream, uLong(src.count))) + 32
    if buffer.count < bound { buffer = [UInt8](repeating: 0, count: bound) }
    let produced: Int? = src.withUnsafeBufferPointer { input in
      buffer.withUnsafeMutableBytes { output in
        if huffmanOnly { return HuffmanDeflate.gzip(input, into: output) }
        stream.pointee.next_in = UnsafeMutablePointer(mutating: input.baseAddress)
        stream.pointee.avail_in = uInt(input.count)
        stream.pointee.next_out = output.baseAddress?.assumingMemoryBound(to: Bytef.self)
        stream.pointee.avail_out = uInt(output.count)
        guard deflate(stream, Z_FINISH) == Z_STREAM_END else { return nil }
        return Int(stream.pointee.total_out)
      }
    }
    guard let produced else { return nil }
    return buffer.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[0..<produced])) }
  }
}
