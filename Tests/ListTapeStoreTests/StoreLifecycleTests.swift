import Dispatch
import Foundation
import ListTapeModel
import ListTapeRead
import ListTapeSamples
import Testing

@testable import ListTapeLog
@testable import ListTapeStore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A counter the store's hooks bump from their threads, noting whether any of them ran on
/// the caller's queue: the main queue, which a `@MainActor` caller runs on.
///
/// Not a thread identity: on Linux, `dispatch_main` retires the main thread and pool threads
/// take turns serving the main queue, so a global-queue job can run on the very thread that
/// served the caller a moment before. A queue-specific value tells the queues apart.
final class Counter: @unchecked Sendable {
  private static let mainQueue = DispatchSpecificKey<Bool>()
  private let lock = NSLock()
  private var value = 0
  private var onCaller = false

  /// Marks the main queue, the `@MainActor` caller's, so `add` can tell it apart.
  func callerIsHere() {
    DispatchQueue.main.setSpecific(key: Self.mainQueue, value: true)
  }

  func add() {
    let onMain = DispatchQueue.getSpecific(key: Self.mainQueue) == true
    locked {
      value += 1
      if onMain { onCaller = true }
    }
  }

  var count: Int { locked { value } }

  /// Whether every `add` ran off the caller's queue.
  var neverOnCaller: Bool { locked { !onCaller } }

  private func locked<R>(_ body: () -> R) -> R {
    lock.lock()
    defer { lock.unlock() }
    return body()
  }
}

/// The first of several parties to claim it.
final class FirstOf: @unchecked Sendable {
  private let lock = NSLock()
  private var winner: String?

  /// Whether `party` is the first to claim.
  func claim(_ party: String) -> Bool {
    lock.lock()
    defer { lock.unlock() }
    if winner == nil { winner = party }
    return winner == party
  }
}

/// A task executor with one thread: a job that blocks it holds up the rest.
///
/// It owns a thread of its own. (A serial dispatch queue borrowed a thread from the shared
/// pool, which the store's stalled writer and the tests running beside it could exhaust:
/// the probe then waited for the safety net, a race with the machine's load.)
@available(macOS 15, iOS 18, *)
final class OneThreadExecutor: TaskExecutor, @unchecked Sendable {
  private let condition = NSCondition()
  private var jobs: [UnownedJob] = []

  init() {
    // The thread lives as long as the test process: one per test that uses it.
    let thread = Thread { [self] in
      while true {
        condition.lock()
        while jobs.isEmpty { condition.wait() }
        let job = jobs.removeFirst()
        condition.unlock()
        job.runSynchronously(on: asUnownedTaskExecutor())
      }
    }
    thread.start()
  }

  func enqueue(_ job: consuming ExecutorJob) {
    let job = UnownedJob(job)
    condition.lock()
    jobs.append(job)
    condition.signal()
    condition.unlock()
  }
}

/// A store around an app's lifecycle (docs/apple.md): opening and syncing without blocking
/// the main thread, a bounded flush, resuming after a write failure, relative paths.
@Suite struct StoreLifecycleTests {
  func options(_ fsync: FsyncPolicy = .never, stall: Stall? = nil) -> StoreOptions {
    var o = StoreTests().options(stall: stall)
    o.fsync = fsync
    return o
  }

  func events(_ path: String) throws -> [Event] {
    var out: [Event] = []
    try Timeline(path: path).forEachEvent { _, e in
      out.append(e)
      return true
    }
    return out
  }

  /// Writer tuning with a checkpoint exactly every `interval` events.
  func everyEvents(_ interval: UInt64) -> LogWriterOptions {
    var w = Recorder.options(.never)
    w.maxEventsBetweenCheckpoints = interval
    w.minCheckpointSpacingBytes = 1 << 40
    w.recoveryPointRatio = 0  // no recovery point (a restart and its checkpoint) in between
    return w
  }

  @Test @MainActor func asyncOpenRebuildsTheStateOffTheCallersThreadFoldingOneInterval()
    async throws
  {
    let (dir, path) = temporaryStorePath()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let interval: UInt64 = 500
    let recorder = try Recorder.open(path: path, options: everyEvents(interval))
    var live = ListState()
    var count = 0
    try SampleSession.generate(events: 12_345, seed: 21, maxItems: 400) { e in
      try recorder.record(e)
      try? live.apply(e)
      count += 1
    }
    try recorder.close()

    let folded = Counter()
    var o = options()
    o.writerOptions = everyEvents(interval)
    o.onFold = { _ in folded.add() }
    folded.callerIsHere()
    let store = try await StoreCore.open(path: path, options: o)
    // The state is ready, and only the events after the last checkpoint were folded.
    #expect(store.state == live)
    #expect(folded.count == count % Int(interval))
    #expect(folded.count > 0 && folded.count <= Int(interval))
    #expect(folded.neverOnCaller)
    try store.close()
  }

  /// `sync()` on a stalled disk, on an executor with one thread: if it blocked that
  /// thread, the next job there could only run once the disk came back. Task executors
  /// need macOS 15: Swift Testing skips the test on older systems (Linux runs it).
  ///
  /// The disk is stalled before the first event, so the writer's first pass waits in
  /// `beforeWrite` ahead of taking anything from the buffer: both events stay buffered until
  /// the release, whatever the threads' timing. (Stalling after a first `sync()` raced with
  /// the end of that sync's writer pass, which could take the next event without stalling.)
  @available(macOS 15, iOS 18, *)
  @Test func asyncSyncSuspendsInsteadOfBlockingAThread() async throws {
    let (dir, path) = temporaryStorePath()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let stall = Stall()
    let store = try StoreCore(path: path, options: options(.always, stall: stall))
    stall.hold()
    store.appendSections(["main"])
    store.appendItems(["a", "b"], toSection: "main")
    // Whichever comes first: the probe runs on the executor (the sync did not block it), or
    // the safety net, off the executor, finds it blocked and releases the disk. Only one
    // can win, so a slow machine cannot release the disk behind the probe's back.
    let first = FirstOf()
    DispatchQueue.global().asyncAfter(deadline: .now() + 60) {
      if first.claim("rescue") { stall.release() }
    }
    let executor = OneThreadExecutor()
    let syncing = Task(executorPreference: executor) { try await store.sync() }
    let probe = Task(executorPreference: executor) { first.claim("probe") }
    #expect(await probe.value, "the executor's thread was busy until the disk came back")
    #expect(store.bufferedEvents == 2)
    stall.release()
    try await syncing.value
    #expect(try Timeline(path: path).eventCount == 2)
    try store.close()
  }

  @Test func flushWithADeadlineReturnsWhenTheDiskIsStuck() throws {
    let (dir, path) = temporaryStorePath()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let stall = Stall()
    let store = try StoreCore(path: path, options: options(.interval(seconds: 1), stall: stall))
    stall.hold()
    store.appendSections(["main"])
    let start = DispatchTime.now().uptimeNanoseconds
    #expect(try store.flush(deadline: .now() + 0.2) == false)
    let waited = DispatchTime.now().uptimeNanoseconds - start
    // It waited for its deadline, and returned although the disk never came back.
    #expect(waited >= 150_000_000, "waited \(waited) ns")
    stall.release()
    #expect(try store.flush(deadline: .now() + 30))
    #expect(try Timeline(path: path).eventCount == 1)
    try store.close()
  }

  /// A write fails (a full disk, or EPERM on a protected file once the device locks): the
  /// store keeps the state, `resume()` reopens the log and writes one gap whose batch turns
  /// the log's last state into the live one.
  @Test(arguments: [false, true])
  func resumeAfterAWriteFailureKeepsTheState(onNewFile: Bool) async throws {
    let (dir, path) = temporaryStorePath()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let disk = SimulatedDisk(semantics: .linux)
    var o = options()
    o.files = disk
    let store = try StoreCore(path: path, options: o)
    store.appendSections(["main"])
    store.appendItems(["a", "b", "c"], toSection: "main")
    try await store.sync()
    disk.failNextWrite(to: "log.ltape", errno: EPERM)
    store.appendItems(["d"], toSection: "main")
    store.expand(["a"])
    #expect(throws: StoreError.self) { try store.sync() }
    #expect(store.lastWriteError != nil)
    store.moveItem("c", beforeItem: "a")
    store.appendItems([OutlineNode("e", children: ["e1"])], toSection: "main")
    #expect(store.droppedEvents == 4)
    // Resuming where nothing can be created fails and leaves the store failed.
    await #expect(throws: StoreError.self) { try await store.resume(path: "\(dir)/no/such.ltape") }
    #expect(store.lastWriteError != nil)

    let target = onNewFile ? "\(dir)/resumed.ltape" : path
    try await store.resume(path: onNewFile ? target : nil)
    #expect(store.lastWriteError == nil)
    #expect(store.path == target)
    store.select(["e"])
    let live = store.state
    try store.close()

    let recorded = try events(target)
    let before = onNewFile ? 0 : 2
    #expect(recorded.count == before + 3)
    guard case .mark(let label) = recorded[before].operation else {
      Issue.record("no gap mark: \(recorded)")
      return
    }
    #expect(label.hasPrefix("listtape.gap dropped=4 faults=0 "))
    #expect(recorded[before + 1].op == "batch")
    #expect(recorded[before + 2].operation == .select(["e"]))
    #expect(try Timeline(path: target).state(at: recorded.count) == live)
  }

  @Test func resumeWithoutAFailureIsAUsageError() throws {
    let (dir, path) = temporaryStorePath()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let store = try StoreCore(path: path, options: options())
    #expect {
      try store.resume()
    } throws: { error in
      guard case .nothingToResume = error as? StoreError else { return false }
      return true
    }
    try store.close()
  }

  @Test func relativePathsResolveAgainstTheWorkingDirectoryButNeverAgainstRoot() throws {
    #expect(try StoreCore.resolve("a.ltape", workingDirectory: "/tmp/x") == "/tmp/x/a.ltape")
    #expect(try StoreCore.resolve("/abs/a.ltape", workingDirectory: "/") == "/abs/a.ltape")
    #expect {
      try StoreCore.resolve("a.ltape", workingDirectory: "/")
    } throws: { error in
      guard case .unusablePath("a.ltape", "/") = error as? StoreError else { return false }
      return true
    }
  }
}
