import CListTapeZlib

/// A `z_stream` at a fixed heap address, set up by `initialize` (deflateInit2 or
/// inflateInit2); nil, with nothing left allocated, when that fails.
private func newStream(
  _ initialize: (UnsafeMutablePointer<z_stream>) -> Int32
) -> UnsafeMutablePointer<z_stream>? {
  let s = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
  s.initialize(to: z_stream())
  guard initialize(s) == Z_OK else {
    s.deinitialize(count: 1)
    s.deallocate()
    return nil
  }
  return s
}

/// A zlib deflate stream reused frame after frame (reset, not re-created).
///
/// The `z_stream` lives at a fixed heap address because zlib keeps a back-pointer to it.
final class Deflater {
  private let stream: UnsafeMutablePointer<z_stream>

  init?(level: Int32) {
    guard
      let s = newStream({
        listtape_deflateInit2($0, level, Z_DEFLATED, 15, 8, Z_DEFAULT_STRATEGY)
      })
    else { return nil }
    stream = s
  }

  deinit {
    deflateEnd(stream)
    stream.deinitialize(count: 1)
    stream.deallocate()
  }

  /// The most bytes `compress` can produce for `count` input bytes cut into at most
  /// `blocks` blocks.
  func bound(_ count: Int, blocks: Int = 1) -> Int {
    Int(deflateBound(stream, uLong(count))) + 16 * max(blocks, 1)
  }

  /// Compresses `src` as one complete zlib stream into `dst`; nil if `dst` is too small.
  ///
  /// At each offset in `flushPoints` (ascending) the current deflate block ends, so that
  /// each column of a columnar payload gets its own Huffman codes.
  func compress(
    _ src: UnsafeRawBufferPointer, into dst: UnsafeMutableRawBufferPointer,
    flushPoints: [Int] = []
  ) -> Int? {
    compress(src, into: dst, flushPoints: flushPoints, independentFrom: nil)?.length
  }

  /// `compress`, and with `independentFrom` (one of `flushPoints`) the stream is fully
  /// flushed there: what follows is a raw deflate stream of its own that starts at the
  /// returned compressed offset `split` (0 without), which a second inflater can inflate
  /// while the first inflates what comes before. The whole is still one zlib stream.
  func compress(
    _ src: UnsafeRawBufferPointer, into dst: UnsafeMutableRawBufferPointer,
    flushPoints: [Int], independentFrom: Int?
  ) -> (length: Int, split: Int)? {
    guard let out = dst.baseAddress, dst.count > 0, src.count <= Int(UInt32.max) else { return nil }
    deflateReset(stream)
    stream.pointee.next_out = out.assumingMemoryBound(to: Bytef.self)
    stream.pointee.avail_out = uInt(min(dst.count, Int(UInt32.max)))
    let base = src.baseAddress?.assumingMemoryBound(to: Bytef.self)
    var start = 0
    var split = 0
    for point in flushPoints where point > start && point < src.count {
      stream.pointee.next_in = UnsafeMutablePointer(mutating: base.map { $0 + start })
      stream.pointee.avail_in = uInt(point - start)
      let full = point == independentFrom
      let rc = deflate(stream, full ? Z_FULL_FLUSH : Z_BLOCK)
      guard rc == Z_OK, stream.pointee.avail_in == 0, stream.pointee.avail_out > 0 else {
        return nil
      }
      if full { split = Int(stream.pointee.total_out) }
      start = point
    }
    stream.pointee.next_in = UnsafeMutablePointer(mutating: base.map { $0 + start })
    stream.pointee.avail_in = uInt(src.count - start)
    let rc = deflate(stream, Z_FINISH)
    guard rc == Z_STREAM_END else { return nil }
    return (Int(stream.pointee.total_out), split)
  }
}

/// A zlib inflate stream reused across frames; inflates to exactly a declared size.
final class Inflater {
  private let stream: UnsafeMutablePointer<z_stream>
  private var scratch: UInt8 = 0
  /// A raw stream for `inflatePrefix`, made on first use: a prefix stops before the
  /// stream's Adler-32, so the sum zlib keeps of a wrapped stream's output as it goes (a
  /// tenth of inflating definitions) would be wasted.
  private var prefixStream: UnsafeMutablePointer<z_stream>?

  /// A zlib inflater, or with `raw` one for a raw deflate stream (no header, no Adler-32).
  init?(raw: Bool = false) {
    guard let s = newStream({ listtape_inflateInit2($0, raw ? -15 : 15) }) else { return nil }
    stream = s
  }

  /// Inflates all of `src`, the part of a stream before a full flush (or, for a raw
  /// inflater, the part after one, up to the stream's end), into the start of `dst`;
  /// returns the bytes written and whether the stream ended, or nil when `src` does not end
  /// where a part ends or the output would not fit. Bytes after a raw stream's end (the
  /// whole's Adler-32) are left.
  func inflatePart(_ src: UnsafeRawBufferPointer, into dst: UnsafeMutableRawBufferPointer)
    -> (written: Int, ended: Bool)?
  {
    guard src.count <= Int(UInt32.max), dst.count <= Int(UInt32.max),
      let out = dst.baseAddress?.assumingMemoryBound(to: Bytef.self)
    else { return nil }
    inflateReset(stream)
    stream.pointee.next_in = UnsafeMutablePointer(
      mutating: src.baseAddress?.assumingMemoryBound(to: Bytef.self))
    stream.pointee.avail_in = uInt(src.count)
    stream.pointee.next_out = out
    stream.pointee.avail_out = uInt(dst.count)
    let rc = inflate(stream, Z_SYNC_FLUSH)
    let written = dst.count - Int(stream.pointee.avail_out)
    switch rc {
    case Z_STREAM_END: return (written, true)
    case Z_OK, Z_BUF_ERROR:
      // A part before a full flush ends with all its input read and its output flushed.
      guard stream.pointee.avail_in == 0, stream.pointee.avail_out > 0 else { return nil }
      return (written, false)
    default: return nil
    }
  }

  deinit {
    inflateEnd(stream)
    stream.deinitialize(count: 1)
    stream.deallocate()
    if let p = prefixStream {
      inflateEnd(p)
      p.deinitialize(count: 1)
      p.deallocate()
    }
  }

  /// A raw stream reset for the deflate data after `src`'s zlib header, checked as zlib
  /// checks it (method 8, a window of at most 32 KiB, the header's check bits, no preset
  /// dictionary); nil when the header is bad. The raw stream's window is 32 KiB whatever
  /// the header names, as zlib's own reading of a wrapped stream allows (it bounds distances
  /// by the header's window only when built with INFLATE_STRICT).
  private func prefixStream(after src: UnsafeRawBufferPointer) -> UnsafeMutablePointer<z_stream>? {
    guard src.count >= 2 else { return nil }
    let cmf = src[0]
    let flg = src[1]
    guard cmf & 0x0F == 8, cmf >> 4 <= 7, (UInt16(cmf) << 8 | UInt16(flg)) % 31 == 0,
      flg & 0x20 == 0
    else { return nil }
    if let p = prefixStream {
      inflateReset(p)
    } else {
      prefixStream = newStream { listtape_inflateInit2($0, -15) }
    }
    return prefixStream
  }

  /// Inflates the first bytes of a zlib stream whose whole output is `dst.count` bytes: the
  /// first `head` of them, then as many as `want` asks after reading those (nil: all, as
  /// `inflateExact` does). Returns how many bytes it inflated, or why it could not. What
  /// follows in the stream is not read, so damage there goes unnoticed: for readers that
  /// need only the start of a payload whose compressed bytes are already checked.
  func inflatePrefix(
    _ src: UnsafeRawBufferPointer, into dst: UnsafeMutableRawBufferPointer, head: Int,
    want: (UnsafeRawBufferPointer) -> Int?
  ) -> Result<Int, InflateFailure> {
    guard src.count <= Int(UInt32.max), dst.count <= Int(UInt32.max), let out = dst.baseAddress,
      head < dst.count
    else {
      if let why = inflateExact(src, into: dst) { return .failure(InflateFailure(why: why)) }
      return .success(dst.count)
    }
    // The header is read here and the deflate data after it by a raw stream: the same
    // bytes out, without the Adler-32 a prefix never reaches.
    guard let stream = prefixStream(after: src) else {
      return .failure(
        InflateFailure(why: "truncated stream or bad data in its first \(head) bytes"))
    }
    stream.pointee.next_in = UnsafeMutablePointer(
      mutating: src.baseAddress.map { $0 + 2 }?.assumingMemoryBound(to: Bytef.self))
    stream.pointee.avail_in = uInt(src.count - 2)
    stream.pointee.next_out = out.assumingMemoryBound(to: Bytef.self)
    var written = 0
    /// Inflates until `n` bytes are out; false on an error or an early end of the stream.
    func inflate(to n: Int) -> Bool {
      stream.pointee.avail_out = uInt(n - written)
      let rc = zlibInflate(stream, Z_SYNC_FLUSH)
      written = n - Int(stream.pointee.avail_out)
      return (rc == Z_OK || rc == Z_STREAM_END || rc == Z_BUF_ERROR) && written == n
    }
    guard inflate(to: head) else {
      return .failure(
        InflateFailure(why: "truncated stream or bad data in its first \(head) bytes"))
    }
    let n = min(
      max(want(UnsafeRawBufferPointer(rebasing: dst[0..<head])) ?? dst.count, head), dst.count)
    if n == dst.count {
      // The whole payload after all: checked to its end as `inflateExact` does.
      if let why = inflateExact(src, into: dst) { return .failure(InflateFailure(why: why)) }
      return .success(n)
    }
    guard inflate(to: n) else {
      return .failure(InflateFailure(why: "truncated stream or bad data in its first \(n) bytes"))
    }
    return .success(n)
  }

  /// Inflates one complete zlib stream into exactly `dst.count` bytes; nil on success, else
  /// why not.
  ///
  /// Rejects output longer or shorter than declared, bytes after the stream end, a preset
  /// dictionary, and bad Adler-32; never writes past `dst`.
  func inflateExact(_ src: UnsafeRawBufferPointer, into dst: UnsafeMutableRawBufferPointer)
    -> String?
  {
    guard src.count <= Int(UInt32.max), dst.count <= Int(UInt32.max) else { return "too large" }
    inflateReset(stream)
    return withUnsafeMutablePointer(to: &scratch) { sp -> String? in
      stream.pointee.next_in = UnsafeMutablePointer(
        mutating: src.baseAddress?.assumingMemoryBound(to: Bytef.self))
      stream.pointee.avail_in = uInt(src.count)
      let out = dst.baseAddress?.assumingMemoryBound(to: Bytef.self) ?? sp
      stream.pointee.next_out = out
      stream.pointee.avail_out = uInt(dst.count)
      let rc = inflate(stream, Z_FINISH)
      let availOut = Int(stream.pointee.avail_out)
      let availIn = Int(stream.pointee.avail_in)
      switch rc {
      case Z_STREAM_END:
        if availOut != 0 { return "inflated \(dst.count - availOut) of \(dst.count) bytes" }
        if availIn != 0 { return "\(availIn) bytes after end of stream" }
        return nil
      case Z_BUF_ERROR:
        return availOut == 0 ? "more than \(dst.count) bytes" : "truncated stream"
      case Z_OK:
        return "more than \(dst.count) bytes"
      case Z_NEED_DICT:
        return "needs a preset dictionary"
      default:
        if let m = stream.pointee.msg { return String(cString: m) }
        return "zlib error \(rc)"
      }
    }
  }
}

/// Why a zlib stream could not be inflated.
struct InflateFailure: Error {
  var why: String
}

/// zlib's `inflate`, under a name that a method called `inflate` does not hide.
@inline(__always) private func zlibInflate(_ s: UnsafeMutablePointer<z_stream>, _ flush: Int32)
  -> Int32
{
  inflate(s, flush)
}
