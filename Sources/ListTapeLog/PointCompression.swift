import Foundation
internal import ListTapeDeflate

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A seek point's state, encoded and compressed: the compressed bytes (`length` of
/// `bytes`), where its second part starts, their CRC-32 and the encoded length.
struct CompressedPoint: Equatable {
  var bytes: [UInt8]
  var length: Int
  var split: Int
  var crc: UInt32
  var rawLength: Int
}

/// Why a seek point's state could not be stored.
enum PointFailure: Error {
  /// `encode` gave nothing (the state named an id without an entry).
  case notEncoded
  case deflateFailed
}

/// Encodes and compresses a seek point's state with `deflater`: pure, so the builder's
/// thread and the compressing thread may both run it for one point and keep either result.
func compressPoint(
  _ encode: () -> (bytes: [UInt8], flushPoints: [Int])?, with deflater: Deflater
) -> Result<CompressedPoint, PointFailure> {
  guard let (state, flushPoints) = encode() else { return .failure(.notEncoded) }
  // A large state's last column is a stream of its own, inflated beside the rest.
  let independent = state.count >= IndexFormat.twoPartState ? flushPoints.last : nil
  var out: [UInt8]
  let n: Int
  let split: Int
  if flushPoints.count == 5 {
    // A compact state, coded by our own writers (about half of zlib's time; readers
    // inflate it as any zlib stream): its header and sections stored; its levels and flags
    // (small numbers with short repeats) by Huffman codes alone; its entry deltas stored
    // (they shrink by a quarter at most, and decoding them symbol by symbol was half of a
    // load's inflating); its strings (titles and fields: short words repeated) matched.
    out = [UInt8](repeating: 0, count: ZlibParts.bound(state.count, parts: 5))
    (n, split) = state.withUnsafeBufferPointer { src in
      out.withUnsafeMutableBytes {
        ZlibParts.write(
          src, cuts: Array(flushPoints[1...]),
          ways: [.stored, .huffman, .huffman, .stored, .matched],
          independentFrom: independent, into: $0)
      }
    }
  } else {
    out = [UInt8](repeating: 0, count: deflater.bound(state.count, blocks: flushPoints.count + 1))
    let compressed = state.withUnsafeBytes { src in
      out.withUnsafeMutableBytes {
        deflater.compress(src, into: $0, flushPoints: flushPoints, independentFrom: independent)
      }
    }
    guard let compressed else { return .failure(.deflateFailed) }
    (n, split) = compressed
  }
  let crc = out.withUnsafeBytes { crc32Bytes(0, UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
  return .success(
    CompressedPoint(bytes: out, length: n, split: split, crc: crc, rawLength: state.count))
}

/// Compresses the index builder's seek points (and codes its segment dictionaries) on a
/// thread of its own that runs only on time the fold and the reading thread leave (Linux's
/// idle scheduling class), so that a build takes barely longer than a replay. The builder's
/// thread never waits on it: when `depth` points are queued it compresses the oldest one
/// not yet started itself, and when it needs a point the thread is still on (`take`), it
/// compresses that one too and keeps whichever result comes first (the work is pure; on a
/// busy machine an idle-class thread might not run for a long while).
final class PointCompressor: @unchecked Sendable {
  /// One point's work and, once done, its outcome; guarded by `lock`.
  private final class Job {
    let work: @Sendable (Deflater) -> Result<CompressedPoint, PointFailure>
    var started = false
    var outcome: Result<CompressedPoint, PointFailure>?
    init(_ work: @escaping @Sendable (Deflater) -> Result<CompressedPoint, PointFailure>) {
      self.work = work
    }
  }

  private let lock = NSCondition()
  /// Points in the order added, until `take` hands them out.
  private var jobs: [Job] = []
  private var stopping = false
  private let depth: Int
  /// The compressing thread's deflater, and the builder thread's own.
  private let background: Deflater
  private let foreground: Deflater
  private var thread: JoinableThread?

  /// Nil when zlib cannot set up its streams.
  init?(level: Int32, depth: Int = 3) {
    guard let b = Deflater(level: level), let f = Deflater(level: level) else { return nil }
    background = b
    foreground = f
    self.depth = max(depth, 1)
  }

  /// Points added and not yet taken.
  var count: Int {
    lock.lock()
    defer { lock.unlock() }
    return jobs.count
  }

  /// Adds a point to compress (its outcome comes from `take`, in the order added).
  func add(_ encode: @escaping @Sendable () -> (bytes: [UInt8], flushPoints: [Int])?) {
    add(work: { compressPoint(encode, with: $0) })
  }

  /// Adds other work whose outcome `take` hands out in turn (pure, like a point's: either
  /// thread may run it, and the first result is kept).
  func add(work: @escaping @Sendable (Deflater) -> Result<CompressedPoint, PointFailure>) {
    let job = Job(work)
    lock.lock()
    if thread == nil && !stopping {
      thread = JoinableThread { [unowned self] in self.work() }
    }
    jobs.append(job)
    // Over `depth` points waiting: the oldest not yet started is compressed here.
    let waiting = jobs.filter { $0.outcome == nil }
    let mine = waiting.count > depth ? waiting.first { !$0.started } : nil
    mine?.started = true
    lock.broadcast()
    lock.unlock()
    if let mine { finish(mine, mine.work(foreground)) }
  }

  /// The outcome of the oldest point added: nil when none is waiting or, without `wait`,
  /// it is not done yet. With `wait`, this thread compresses the points not yet started
  /// meanwhile, then the oldest itself if the other thread is still on it.
  func take(wait: Bool) -> Result<CompressedPoint, PointFailure>? {
    lock.lock()
    while let oldest = jobs.first, oldest.outcome == nil {
      guard wait else {
        lock.unlock()
        return nil
      }
      let next = jobs.first { !$0.started } ?? oldest
      next.started = true
      lock.unlock()
      finish(next, next.work(foreground))
      lock.lock()
    }
    let outcome = jobs.isEmpty ? nil : jobs.removeFirst().outcome
    lock.unlock()
    return outcome
  }

  /// Ends the compressing thread (points not taken are dropped); the owner must call it
  /// (the thread holds this object).
  func stop() {
    lock.lock()
    stopping = true
    lock.broadcast()
    let t = thread
    thread = nil
    lock.unlock()
    t?.join()
  }

  /// Records `job`'s outcome unless the other thread got there first.
  private func finish(_ job: Job, _ outcome: Result<CompressedPoint, PointFailure>) {
    lock.lock()
    if job.outcome == nil { job.outcome = outcome }
    lock.unlock()
  }

  /// The compressing thread: the oldest point not yet started, one after another.
  private func work() {
    Self.lowerPriority()
    lock.lock()
    while true {
      if stopping { break }
      guard let job = jobs.first(where: { !$0.started }) else {
        lock.wait()
        continue
      }
      job.started = true
      lock.unlock()
      let outcome = job.work(background)
      lock.lock()
      if job.outcome == nil { job.outcome = outcome }
    }
    lock.unlock()
  }

  /// Puts the calling thread in the idle scheduling class (Linux: run only when a core has
  /// nothing else to run; any thread may lower its own class). Apple platforms run it at
  /// the utility quality of service.
  private static func lowerPriority() {
    #if os(Linux)
    var param = sched_param()
    // SCHED_IDLE (5), which Glibc exports only under _GNU_SOURCE.
    _ = pthread_setschedparam(pthread_self(), 5, &param)
    #elseif canImport(Darwin)
    _ = pthread_set_qos_class_self_np(QOS_CLASS_UTILITY, 0)
    #endif
  }
}
