import Dispatch
import Foundation
import ListTapeLog

/// What an app needs around launch, suspension and termination (docs/apple.md): opening
/// and syncing without blocking the main thread, a bounded flush for a background task,
/// resuming after a write failure, and the log's data protection class.
extension StoreCore {
  /// Opens LOG for recording off the calling thread (see `init(path:options:)`): the log is
  /// scanned and its end state rebuilt on a background queue, folding at most one checkpoint
  /// interval of events, and the store returns with its state ready.
  package static func open(path: String, options: Options = Options()) async throws(StoreError)
    -> StoreCore
  {
    let result: Result<StoreCore, StoreError> = await withCheckedContinuation { done in
      DispatchQueue.global(qos: .userInitiated).async {
        done.resume(
          returning: Result { () throws(StoreError) in
            try StoreCore(path: path, options: options)
          })
      }
    }
    return try result.get()
  }

  /// `sync()` without blocking the caller: suspends until every event handed to the store
  /// before the call is written and forced to stable storage.
  package func sync() async throws(StoreError) {
    let result: Result<Void, StoreError> = await withCheckedContinuation { done in
      queue.async { done.resume(returning: self.syncOnQueue()) }
    }
    try result.get()
  }

  /// Writes and syncs what is buffered, waiting at most until `deadline` (for a background
  /// task's expiration handler, or termination). Returns true when everything handed to the
  /// store before the call is on stable storage, false when the deadline came first (the
  /// work goes on in the background). Throws the store's write failure.
  @discardableResult
  package func flush(deadline: DispatchTime) throws(StoreError) -> Bool {
    let outcome = Outcome()
    queue.async { outcome.finish(self.syncOnQueue()) }
    guard let result = outcome.wait(until: deadline) else { return false }
    try result.get()
    return true
  }

  /// After a write failure (`lastWriteError`), records again into the same log or, with
  /// `path`, into another one: the failed log is closed, the new one opened (recovering a
  /// torn tail), and a gap is written as for a full buffer: a `mark` counting the events
  /// lost since the failure and one `batch` that turns the log's last state into the live
  /// state, then the log is synced. The state is never lost. If the log cannot be opened
  /// yet (a protected file while the device is locked), this throws and the store stays
  /// failed: call it again later. Blocks like `init`; prefer the `async` form.
  package func resume(path: String? = nil) throws(StoreError) {
    try queue.sync { resumeOnQueue(path) }.get()
  }

  /// `resume(path:)` off the calling thread.
  package func resume(path: String? = nil) async throws(StoreError) {
    let result: Result<Void, StoreError> = await withCheckedContinuation { done in
      queue.async { done.resume(returning: self.resumeOnQueue(path)) }
    }
    try result.get()
  }

  /// An absolute path for LOG: itself, or resolved against `workingDirectory`, which must
  /// not be `/` (an iOS app's working directory, where nothing can be written).
  static func resolve(_ path: String, workingDirectory: String) throws(StoreError) -> String {
    if path.hasPrefix("/") { return path }
    guard !path.isEmpty, workingDirectory != "/" else {
      throw .unusablePath(path, workingDirectory: workingDirectory)
    }
    return workingDirectory.hasSuffix("/") ? workingDirectory + path : "\(workingDirectory)/\(path)"
  }
}

/// A result handed from the store's queue to a caller that waits with a deadline.
private final class Outcome: @unchecked Sendable {
  private let done = DispatchSemaphore(value: 0)
  private let lock = NSLock()
  private var result: Result<Void, StoreError>?

  func finish(_ r: Result<Void, StoreError>) {
    lock.lock()
    result = r
    lock.unlock()
    done.signal()
  }

  func wait(until deadline: DispatchTime) -> Result<Void, StoreError>? {
    guard done.wait(timeout: deadline) == .success else { return nil }
    lock.lock()
    defer { lock.unlock() }
    return result
  }
}
