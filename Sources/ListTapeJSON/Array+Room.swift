extension Array {
  /// `init(unsafeUninitializedCapacity:initializingWith:)`, except that no capacity makes
  /// the empty array without that initializer: given 0, it writes the count of the one
  /// empty array a process shares, which two threads doing at once is a data race
  /// (ThreadSanitizer reports it). `body` still runs, with an empty buffer.
  package init(
    room capacity: Int,
    initializingWith body: (inout UnsafeMutableBufferPointer<Element>, inout Int) -> Void
  ) {
    guard capacity > 0 else {
      var none = UnsafeMutableBufferPointer<Element>(start: nil, count: 0)
      var count = 0
      body(&none, &count)
      self = []
      return
    }
    self.init(unsafeUninitializedCapacity: capacity, initializingWith: body)
  }
}
