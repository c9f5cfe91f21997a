/// The events appended since the last frame was cut (group commit): each record framed with
/// its LEB128 length in one growing buffer, with when the batch opened and its first event
/// number. Owned by a `WriterCore`, used under its lock.
final class WriterBatch {
  private var storage: UnsafeMutableRawPointer
  private var capacity: Int
  /// Bytes of framed records.
  private(set) var bytes = 0
  /// Records waiting.
  private(set) var count = 0
  /// The event number of the first record waiting.
  private(set) var firstSeq: UInt64 = 0
  /// When the first record waiting arrived (monotonic ns).
  private(set) var since: UInt64 = 0

  /// A batch whose buffer starts with room for `capacity` bytes.
  init(capacity: Int) {
    self.capacity = capacity
    storage = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16)
  }

  deinit { storage.deallocate() }

  var isEmpty: Bool { count == 0 }

  /// The framed records, valid until the next change.
  var records: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: storage, count: bytes) }

  /// Adds record `r` as event `seq`; returns whether it opened the batch.
  /// - Complexity: amortised O(`r.count`).
  func add(_ r: UnsafeRawBufferPointer, seq: UInt64, now: () -> UInt64) -> Bool {
    let opens = count == 0
    if opens {
      since = now()
      firstSeq = seq
    }
    let n = r.count
    if bytes + n + 5 > capacity { grow(to: bytes + n + 5) }
    bytes += RecordFraming.putLength(n, storage + bytes)
    if n > 0, let src = r.baseAddress {
      (storage + bytes).copyMemory(from: src, byteCount: n)
      bytes += n
    }
    count += 1
    return opens
  }

  /// Empties the batch (its records were written in a frame).
  func clear() {
    count = 0
    bytes = 0
  }

  private func grow(to need: Int) {
    let cap = max(need, capacity * 2)
    let p = UnsafeMutableRawPointer.allocate(byteCount: cap, alignment: 16)
    p.copyMemory(from: storage, byteCount: bytes)
    storage.deallocate()
    storage = p
    capacity = cap
  }
}
