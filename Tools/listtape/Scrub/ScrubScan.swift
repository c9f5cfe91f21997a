import Foundation
import ListTapeInvestigate
import ListTapeModel
import ListTapeRead
import ListTapeStore

/// Marks and faults of a whole log, found by one fold on a background thread so that the
/// viewer is usable at once. Memory is bounded: at most `limit` marks and `limit` faults are
/// kept by number (past that, navigation scans the log), and counts per bucket for the bar.
final class ScrubScan: @unchecked Sendable {
  static let limit = 10_000
  static let buckets = 2048
  /// Events folded between two updates of what the viewer sees.
  static let publishEvery = 16_384

  struct Found {
    var marks: [(n: Int, label: String)] = []
    var faults: [(n: Int, reason: String)] = []
    var markBuckets = [Int](repeating: 0, count: ScrubScan.buckets)
    var faultBuckets = [Int](repeating: 0, count: ScrubScan.buckets)
    var markTotal = 0
    var faultTotal = 0
    /// Events folded so far; `total` when done.
    var scanned = 0
    var failure: String?
    var truncatedMarks: Bool { markTotal > marks.count }
    var truncatedFaults: Bool { faultTotal > faults.count }
  }

  let total: Int
  private let lock = NSLock()
  private var found = Found()
  private var cancelled = false

  init(total: Int) { self.total = total }

  var snapshot: Found {
    lock.lock()
    defer { lock.unlock() }
    return found
  }

  var isDone: Bool { snapshot.scanned >= total || snapshot.failure != nil }

  func cancel() {
    lock.lock()
    cancelled = true
    lock.unlock()
  }

  /// The bucket of event `n` (1...total).
  func bucket(_ n: Int) -> Int {
    total > 0 ? min(Self.buckets - 1, scaled(n - 1, Self.buckets, total)) : 0
  }

  /// Starts the fold of `path` on its own thread, with its own reader.
  func start(path: String) {
    let thread = Thread { [self] in run(path: path) }
    thread.stackSize = 8 << 20
    thread.start()
  }

  private func run(path: String) {
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
      return !cancelled
    }
    var keptMarks = 0
    var keptFaults = 0
    do throws(StoreError) {
      let timeline = try Timeline(path: path)
      // After events lost in a salvage, only faults folded from a recorded state are marked.
      let steps = timeline.exactSteps
      _ = try timeline.forEachState(through: total) { ops, i, fault, s in
        let n = ops.seqs[i]
        let labels = ops.markLabels(i)
        if !labels.isEmpty {
          batch.markTotal += 1
          batch.markBuckets[bucket(n)] += 1
          if keptMarks < Self.limit {
            keptMarks += 1
            batch.marks.append((n, labels.joined(separator: ", ")))
          }
        }
        if let fault, steps.at(n) == .exact {
          batch.faultTotal += 1
          batch.faultBuckets[bucket(n)] += 1
          if keptFaults < Self.limit {
            keptFaults += 1
            batch.faults.append((n, fault.description))
          }
        }
        batch.scanned = n
        if n % Self.publishEvery == 0 { return publish() }
        return true
      }
      batch.scanned = total
      _ = publish()
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
