import Foundation
import ListTapeInvestigate
import ListTapeModel
import ListTapeRead
import ListTapeStore

/// Marks and faults of a whole log, found by one fold on a background thread so that the
/// viewer is usable at once. Memory is bounded: at most `limit` marks and `limit` faults are
/// kept by number (past that, navigation scans the log), and counts per bucket for the bar.
/// Following a log being recorded, the fold goes on as events arrive (`start(path:follow:)`),
/// and the buckets double their span (merging in pairs) whenever the log outgrows them.
final class ScrubScan: @unchecked Sendable {
  static let limit = 10_000
  static let buckets = 2048
  /// Events folded between two updates of what the viewer sees.
  static let publishEvery = 16_384
  /// How long a following scan waits before it looks for new events, in microseconds.
  static let followPause: UInt32 = 50_000

  struct Found {
    var marks: [(n: Int, label: String)] = []
    var faults: [(n: Int, reason: String)] = []
    var markBuckets = [Int](repeating: 0, count: ScrubScan.buckets)
    var faultBuckets = [Int](repeating: 0, count: ScrubScan.buckets)
    var markTotal = 0
    var faultTotal = 0
    /// Events folded so far; `total` when done.
    var scanned = 0
    /// The events the buckets cover: a bucket holds `2^shift` events, event n falls in
    /// bucket `(n - 1) >> shift`.
    var shift = 0
    var failure: String?
    var truncatedMarks: Bool { markTotal > marks.count }
    var truncatedFaults: Bool { faultTotal > faults.count }

    /// The bucket of event `n` (from 1).
    func bucket(_ n: Int) -> Int { min(ScrubScan.buckets - 1, max(0, n - 1) >> shift) }

    /// The smallest shift whose buckets cover `total` events (by shifting `total` down:
    /// a salvaged log's numbers can pass 2^62, where `buckets << shift` would overflow).
    static func shift(covering total: Int) -> Int {
      var shift = 0
      while max(0, total - 1) >> shift >= ScrubScan.buckets { shift += 1 }
      return shift
    }
  }

  /// The events the scan will have read when done (more when following); under `lock`.
  private var total: Int
  private let lock = NSLock()
  private var found = Found()
  private var cancelled = false

  init(total: Int) {
    self.total = total
    found.shift = Found.shift(covering: total)
  }

  var snapshot: Found {
    lock.lock()
    defer { lock.unlock() }
    return found
  }

  var isDone: Bool {
    lock.lock()
    defer { lock.unlock() }
    return found.scanned >= total || found.failure != nil
  }

  func cancel() {
    lock.lock()
    cancelled = true
    lock.unlock()
  }

  private var isCancelled: Bool {
    lock.lock()
    defer { lock.unlock() }
    return cancelled
  }

  /// Starts the fold of `path` on its own thread, with its own reader; with `follow`, it
  /// goes on with the events appended after `total` until cancelled.
  func start(path: String, follow: Bool = false) {
    let thread = Thread { [self] in run(path: path, follow: follow) }
    thread.stackSize = 8 << 20
    thread.start()
  }

  /// Makes the buckets cover `count` events (merging pairs as often as needed).
  private func grow(to count: Int) {
    lock.lock()
    defer { lock.unlock() }
    total = max(total, count)
    while found.shift < Found.shift(covering: count) {
      for i in 0..<Self.buckets {
        let (a, b) = (2 * i, 2 * i + 1)
        found.markBuckets[i] = a < Self.buckets ? found.markBuckets[a] + found.markBuckets[b] : 0
        found.faultBuckets[i] =
          a < Self.buckets ? found.faultBuckets[a] + found.faultBuckets[b] : 0
      }
      found.shift += 1
    }
  }

  private func run(path: String, follow: Bool) {
    var batch = Found()
    func publish() -> Bool {
      lock.lock()
      defer { lock.unlock() }
      found.marks += batch.marks
      found.faults += batch.faults
      for i in 0..<Self.buckets {
        found.markBuckets[i] += batch.markBuckets[i]
        found.faultBuckets[i] += batch.faultBuckets[i]
      }
      found.markTotal += batch.markTotal
      found.faultTotal += batch.faultTotal
      found.scanned = batch.scanned
      batch.marks.removeAll()
      batch.faults.removeAll()
      batch.markBuckets = [Int](repeating: 0, count: Self.buckets)
      batch.faultBuckets = batch.markBuckets
      batch.markTotal = 0
      batch.faultTotal = 0
      batch.shift = found.shift
      return !cancelled
    }
    var keptMarks = 0
    var keptFaults = 0
    do throws(StoreError) {
      let timeline = try Timeline(path: path)
      // A follower never writes beside the log it reads.
      if follow { timeline.buildsIndex = false }
      var state = ListState()
      var decoder = timeline.startDecoder()
      lock.lock()
      var through = min(total, timeline.eventCount)
      batch.shift = found.shift
      lock.unlock()
      while true {
        // After events lost in a salvage, only faults folded from a recorded state are
        // marked.
        let steps = timeline.exactSteps
        var going = true
        try timeline.fold(&state, &decoder, from: batch.scanned + 1, through: through) {
          ops, i, fault, _ in
          let n = ops.seqs[i]
          let labels = ops.markLabels(i)
          if !labels.isEmpty {
            batch.markTotal += 1
            batch.markBuckets[batch.bucket(n)] += 1
            if keptMarks < Self.limit {
              keptMarks += 1
              batch.marks.append((n, labels.joined(separator: ", ")))
            }
          }
          if let fault, steps.at(n) == .exact {
            batch.faultTotal += 1
            batch.faultBuckets[batch.bucket(n)] += 1
            if keptFaults < Self.limit {
              keptFaults += 1
              batch.faults.append((n, fault.description))
            }
          }
          batch.scanned = n
          if n % Self.publishEvery == 0 { going = publish() }
          return going
        }
        guard going else { return }
        batch.scanned = through
        guard publish(), follow else { return }
        // Following: wait for more events, then widen the buckets before folding them.
        while timeline.eventCount <= through {
          usleep(Self.followPause)
          if isCancelled { return }
          try timeline.refresh()
        }
        through = timeline.eventCount
        grow(to: through)
        batch.shift = snapshot.shift
      }
    } catch {
      _ = publish()
      lock.lock()
      found.failure = Failures.message(error)
      lock.unlock()
    }
  }
}

/// `a * b / c` for non-negative values without overflow: a salvaged log's event numbers can
/// pass 2^62 (a gap frame claims that many lost events), and a product of two of them does
/// not fit in an `Int`.
func scaled(_ a: Int, _ b: Int, _ c: Int) -> Int {
  guard c > 0 else { return 0 }
  let product = a.multipliedFullWidth(by: b)
  guard product.high < c else { return .max }
  return c.dividingFullWidth(product).quotient
}
