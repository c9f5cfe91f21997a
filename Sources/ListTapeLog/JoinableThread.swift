#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A thread of its own that runs `body` once, ended by `join()`: for a reader working ahead
/// of its caller, who may be a worker of `concurrentPerform` (a dispatch queue's thread
/// could wait behind it).
package final class JoinableThread {
  #if canImport(Darwin)
  private var thread: pthread_t?
  #else
  private var thread = pthread_t()
  #endif

  /// Starts `body` on a new thread; nil when no thread can be started.
  package init?(_ body: @escaping @Sendable () -> Void) {
    let context = Unmanaged.passRetained(Box(body)).toOpaque()
    guard pthread_create(&thread, nil, { JoinableThread.main($0) }, context) == 0 else {
      Unmanaged<Box>.fromOpaque(context).release()
      return nil
    }
  }

  /// Waits for the thread to end.
  package func join() {
    #if canImport(Darwin)
    if let thread { pthread_join(thread, nil) }
    #else
    pthread_join(thread, nil)
    #endif
  }

  private final class Box {
    let body: @Sendable () -> Void
    init(_ body: @escaping @Sendable () -> Void) { self.body = body }
  }

  private static func main(_ context: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
    guard let context else { return nil }
    Unmanaged<Box>.fromOpaque(context).takeRetainedValue().body()
    return nil
  }
}
