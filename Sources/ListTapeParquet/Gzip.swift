internal import ListTapeDeflate

/// Gzip members (Parquet's GZIP codec), page after page, written by our own deflate
/// writers: `MatchDeflate`, which matches repeated strings as zlib's level 1 does in about
/// half its time, or `HuffmanDeflate`, which only Huffman-codes the bytes, faster still
/// where matching finds little (hex text, some bit-packed numbers). Readers see GZIP either
/// way.
final class GzipCompressor {
  /// Output space, grown to the largest bound seen.
  private var buffer: [UInt8] = []

  /// Whether Huffman codes alone compress bytes like `src`'s first 64 KiB within 5 % of
  /// what matching does (then they are the cheaper way for pages of that kind).
  func huffmanSuffices(_ src: [UInt8]) -> Bool {
    let sample = Array(src.prefix(64 << 10))
    let matched = compress(sample, huffmanOnly: false) { $0.count }
    let coded = compress(sample, huffmanOnly: true) { $0.count }
    return coded * 20 <= matched * 21
  }

  /// Compresses `src` as one gzip member (by Huffman codes alone if `huffmanOnly`) and
  /// calls `body` with the compressed bytes (valid only during the call).
  func compress<R>(
    _ src: [UInt8], huffmanOnly: Bool = false, _ body: (UnsafeRawBufferPointer) -> R
  ) -> R {
    let bound = HuffmanDeflate.bound(src.count)
    if buffer.count < bound { buffer = [UInt8](repeating: 0, count: bound) }
    let produced = src.withUnsafeBufferPointer { input in
      buffer.withUnsafeMutableBytes {
        HuffmanDeflate.gzip(input, matched: !huffmanOnly, into: $0)
      }
    }
    return buffer.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[0..<produced])) }
  }
}
