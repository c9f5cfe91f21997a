import Foundation
import Testing

@testable import listtape

/// The scrubber's background scan following a log: its buckets double their span as the
/// log outgrows them, and the counts stay those of a scan of the whole log.
@Suite struct ScrubScanTests {
  static func marks(_ range: ClosedRange<Int>) -> Data {
    Data(range.map { #"{"op":"mark","label":"m\#($0)"}"# }.joined(separator: "\n").utf8)
  }

  /// Waits until the scan has read `count` events; false after `seconds`.
  static func wait(_ scan: ScrubScan, for count: Int, seconds: Double = 60) -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while scan.snapshot.scanned < count {
      guard Date() < deadline, scan.snapshot.failure == nil else { return false }
      usleep(5_000)
    }
    return true
  }

  @Test func bucketsCoverAnyNumberOfEvents() {
    #expect(ScrubScan.Found.shift(covering: 0) == 0)
    #expect(ScrubScan.Found.shift(covering: 2_048) == 0)
    #expect(ScrubScan.Found.shift(covering: 2_049) == 1)
    #expect(ScrubScan.Found.shift(covering: 5_000) == 2)
    // A salvaged log's numbers can pass 2^62 (a gap claiming that many lost events).
    let huge = ScrubScan.Found.shift(covering: .max)
    #expect(huge == 52)
    var found = ScrubScan.Found()
    found.shift = huge
    #expect(found.bucket(.max) == ScrubScan.buckets - 1)
    #expect(found.bucket(1) == 0)
  }

  @Test func bucketsMergeAsAFollowedLogGrows() throws {
    let dir = try TempDir()
    let log = dir.path("marks.ltape")
    #expect(try CLI.run(["record", log], input: Self.marks(1...1_500)).code == 0)
    let scan = ScrubScan(total: 1_500)
    scan.start(path: log, follow: true)
    defer { scan.cancel() }
    #expect(Self.wait(scan, for: 1_500))
    #expect(scan.snapshot.shift == 0)
    // Appended while the scan follows: 5,000 events need buckets of 4 (2,048 × 4 ≥ 5,000).
    #expect(try CLI.run(["record", log], input: Self.marks(1_501...5_000)).code == 0)
    #expect(Self.wait(scan, for: 5_000))
    let found = scan.snapshot
    #expect(found.shift == 2)
    #expect(found.markTotal == 5_000)
    var expected = [Int](repeating: 0, count: ScrubScan.buckets)
    for n in 1...5_000 { expected[found.bucket(n)] += 1 }
    #expect(found.markBuckets == expected)
    #expect(found.marks.last?.n == 5_000)
    #expect(found.marks.last?.label == "m5000")
  }
}
