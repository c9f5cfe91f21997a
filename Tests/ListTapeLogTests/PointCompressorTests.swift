import Foundation
import Testing

@testable import ListTapeLog

/// The index builder's compressing thread: whoever compresses a point (the idle-class
/// thread, or the builder's thread when the queue is full or it must wait), each point's
/// outcome is its own, in the order added.
@Suite struct PointCompressorTests {
  /// A state-like payload of five columns (the compact layout's count) for point `k`.
  static func payload(_ k: Int) -> (bytes: [UInt8], flushPoints: [Int]) {
    var bytes: [UInt8] = []
    var flushPoints: [Int] = []
    for column in 0..<5 {
      flushPoints.append(bytes.count)
      for i in 0..<(200 + 37 * k + 11 * column) {
        bytes.append(UInt8(truncatingIfNeeded: i &* (k &+ column &+ 1)))
      }
    }
    return (bytes, flushPoints)
  }

  /// What compressing point `k` alone gives.
  static func alone(_ k: Int) throws -> CompressedPoint {
    let deflater = try #require(Deflater(level: 1))
    return try compressPoint({ Self.payload(k) }, with: deflater).get()
  }

  @Test(arguments: [1, 2, 3])
  func outcomesComeInOrderWhoeverCompresses(depth: Int) throws {
    let compressor = try #require(PointCompressor(level: 1, depth: depth))
    defer { compressor.stop() }
    var taken: [CompressedPoint] = []
    for k in 0..<24 {
      compressor.add { Self.payload(k) }
      // Some taken as soon as done, the rest at the end (as the builder writes them).
      if k % 3 == 0, let outcome = compressor.take(wait: false) { taken.append(try outcome.get()) }
    }
    while let outcome = compressor.take(wait: true) { taken.append(try outcome.get()) }
    #expect(compressor.count == 0)
    #expect(taken.count == 24)
    for (k, point) in taken.enumerated() {
      let expected = try Self.alone(k)
      #expect(point.rawLength == expected.rawLength, "point \(k)")
      #expect(point.length == expected.length, "point \(k)")
      #expect(point.split == expected.split, "point \(k)")
      #expect(point.crc == expected.crc, "point \(k)")
      #expect(Array(point.bytes[0..<point.length]) == Array(expected.bytes[0..<expected.length]))
    }
  }

  @Test func aPointThatDoesNotEncodeFailsInItsPlace() throws {
    let compressor = try #require(PointCompressor(level: 1, depth: 1))
    defer { compressor.stop() }
    compressor.add { Self.payload(0) }
    compressor.add { nil }
    compressor.add { Self.payload(2) }
    #expect(try compressor.take(wait: true)?.get().rawLength == Self.alone(0).rawLength)
    switch compressor.take(wait: true) {
    case .failure(.notEncoded): break
    default: Issue.record("the second point should not encode")
    }
    #expect(try compressor.take(wait: true)?.get().crc == Self.alone(2).crc)
    #expect(compressor.take(wait: true) == nil)
  }

  /// Other work (a segment's dictionary, coded) takes its turn among the points: each
  /// outcome comes back in the order added, whichever thread ran it.
  @Test func otherWorkComesOutInItsTurn() throws {
    let compressor = try #require(PointCompressor(level: 1, depth: 1))
    defer { compressor.stop() }
    for k in 0..<6 {
      compressor.add { Self.payload(k) }
      compressor.add(work: { _ in
        .success(CompressedPoint(bytes: [UInt8(k)], length: 1, split: 0, crc: 0, rawLength: k))
      })
    }
    for k in 0..<6 {
      #expect(try compressor.take(wait: true)?.get().crc == Self.alone(k).crc, "point \(k)")
      #expect(try compressor.take(wait: true)?.get().bytes == [UInt8(k)], "work \(k)")
    }
    #expect(compressor.take(wait: true) == nil)
  }

  @Test func nothingToTakeWhenNothingWasAdded() throws {
    let compressor = try #require(PointCompressor(level: 1))
    defer { compressor.stop() }
    #expect(compressor.take(wait: false) == nil)
    #expect(compressor.take(wait: true) == nil)
  }

  /// Stopping with points not taken ends the thread (the test would hang otherwise).
  @Test func stopsWithPointsLeft() throws {
    let compressor = try #require(PointCompressor(level: 1, depth: 8))
    for k in 0..<8 { compressor.add { Self.payload(k) } }
    compressor.stop()
    #expect(compressor.count == 8)
  }
}
