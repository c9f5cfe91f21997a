import Dispatch
import Foundation
import Testing

@testable import ListTapeLog

/// The real file system, with a barrier sync that can be held (to watch a writer while its
/// flusher syncs) and writes or syncs that can be made to fail.
final class ControlledFiles: FileLayer, @unchecked Sendable {
  private let lock = NSLock()
  private var holdBarrier = false
  private var failWrites: Int32?
  private var failSyncs: Int32?
  /// Signalled when a held barrier sync has started.
  let barrierEntered = DispatchSemaphore(value: 0)
  /// Signalled by the test to let a held barrier sync return.
  let barrierRelease = DispatchSemaphore(value: 0)

  func holdNextBarrier() { lock.withLock { holdBarrier = true } }
  func failWrites(with e: Int32) { lock.withLock { failWrites = e } }
  func failSyncs(with e: Int32) { lock.withLock { failSyncs = e } }

  func open(_ path: String, _ flags: Int32) -> Posix.Opened { SystemFiles.shared.open(path, flags) }
  func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Int32? {
    if let e = lock.withLock({ failWrites }) { return e }
    return SystemFiles.shared.write(fd, bytes)
  }
  func truncate(_ fd: Int32, _ length: UInt64) -> Int32? {
    SystemFiles.shared.truncate(fd, length)
  }
  func sync(_ fd: Int32, _ kind: SyncKind) -> Int32? {
    if let e = lock.withLock({ failSyncs }) { return e }
    let hold = lock.withLock {
      defer { if kind == .barrier { holdBarrier = false } }
      return kind == .barrier && holdBarrier
    }
    if hold {
      barrierEntered.signal()
      barrierRelease.wait()
    }
    return SystemFiles.shared.sync(fd, kind)
  }
  func syncDirectory(of path: String) -> Int32? { SystemFiles.shared.syncDirectory(of: path) }
  func link(_ from: String, _ to: String) -> Int32? { SystemFiles.shared.link(from, to) }
  func unlink(_ path: String) -> Int32? { SystemFiles.shared.unlink(path) }
  func close(_ fd: Int32) -> Int32? { SystemFiles.shared.close(fd) }
  func protectionClass(of path: String) -> ProtectionClass? { nil }
  func setProtectionClass(_ protection: ProtectionClass, of path: String) {}
}

/// Waits (up to a minute, polling) until `condition` holds; false if it never did.
func eventually(_ condition: () -> Bool) -> Bool {
  for _ in 0..<60_000 {
    if condition() { return true }
    usleep(1_000)
  }
  return condition()
}

/// A writer's states and the transitions between them (`WriterState`), one test each:
/// first on the value alone, then on a real writer that reaches each state.
@Suite("Writer states and transitions")
struct WriterStateTests {
  static let failure = LogError(.poisoned, path: "x", message: "write failed")
  static let all: [WriterState] = [.open, .writing, .flushing, .failed(failure), .closed]

  /// `transition` applied to every state gives `expected` (nil: unchanged).
  func check(_ transition: (inout WriterState) -> Void, _ expected: [WriterState]) {
    for (from, to) in zip(Self.all, expected) {
      var s = from
      transition(&s)
      #expect(s == to, "from \(from)")
    }
  }

  @Test("beginWriting: open → writing; the others stay")
  func beginWriting() {
    check({ $0.beginWriting() }, [.writing, .writing, .flushing, .failed(Self.failure), .closed])
  }

  @Test("settle: writing → open only when idle")
  func settle() {
    check({ $0.settle(idle: true) }, [.open, .open, .flushing, .failed(Self.failure), .closed])
    check({ $0.settle(idle: false) }, [.open, .writing, .flushing, .failed(Self.failure), .closed])
  }

  @Test("beginFlushing: writing → flushing; endFlushing: flushing → open or writing")
  func flushing() {
    check({ $0.beginFlushing() }, [.open, .flushing, .flushing, .failed(Self.failure), .closed])
    check({ $0.endFlushing(idle: true) }, [.open, .writing, .open, .failed(Self.failure), .closed])
    check(
      { $0.endFlushing(idle: false) }, [.open, .writing, .writing, .failed(Self.failure), .closed])
  }

  @Test("fail: any usable state → failed; the first failure stays; closed stays closed")
  func fail() {
    let other = LogError(.poisoned, path: "x", message: "fsync failed")
    check(
      { $0.fail(other) },
      [.failed(other), .failed(other), .failed(other), .failed(Self.failure), .closed])
  }

  @Test("close: any state → closed")
  func close() {
    check({ $0.close() }, [.closed, .closed, .closed, .closed, .closed])
  }

  @Test("only open, writing and flushing accept calls; failed throws its error, closed .closed")
  func usable() throws {
    for s in [WriterState.open, .writing, .flushing] { try s.checkUsable(path: "x") }
    #expect(throws: LogError.self) { try WriterState.failed(Self.failure).checkUsable(path: "x") }
    do {
      try WriterState.closed.checkUsable(path: "x")
      Issue.record("closed accepted a call")
    } catch {
      #expect(error.kind == .closed)
    }
  }

  // MARK: On a real writer

  static func options(_ fsync: FsyncPolicy = .never) -> LogWriterOptions {
    var o = LogWriterOptions()
    o.fsync = fsync
    o.batchDelay = 100
    return o
  }

  @Test("a new writer is open; an append makes it writing; sync makes it open again")
  func openWritingOpen() throws {
    let dir = TempDir()
    let w = try LogWriter.open(path: dir.file("a.log"), options: Self.options(.always))
    #expect(w.state == .open)
    try w.append([1, 2, 3])
    #expect(w.state == .writing)
    try w.flush()
    #expect(w.state == .open)  // .always: the frame was synced as it was written
    try w.append([4])
    #expect(w.state == .writing)
    try w.sync()
    #expect(w.state == .open)
    try w.close()
  }

  @Test("under .interval a written frame keeps the writer writing until a sync")
  func writtenButUnsynced() throws {
    let dir = TempDir()
    let w = try LogWriter.open(
      path: dir.file("a.log"), options: Self.options(.interval(seconds: 3_600)))
    try w.append([1])
    try w.flush()
    #expect(w.state == .writing)
    try w.sync()
    #expect(w.state == .open)
    try w.close()
  }

  @Test("the interval flusher's sync: writing → flushing → open, appends accepted meanwhile")
  func flushingWhileAppending() throws {
    let dir = TempDir()
    let files = ControlledFiles()
    var options = Self.options(.interval(seconds: 0.001))
    options.batchDelay = 100
    let w = try LogWriter.open(path: dir.file("a.log"), options: options, files: files)
    files.holdNextBarrier()
    try w.append([1])
    try w.flush()
    files.barrierEntered.wait()
    #expect(w.state == .flushing)
    try w.append([2])  // not blocked by the sync
    #expect(w.state == .flushing)
    #expect(w.unwrittenEvents == 1)
    files.barrierRelease.signal()
    #expect(eventually { w.state != .flushing })
    #expect(w.state == .writing)  // event 2 waits in the batch
    try w.sync()
    #expect(w.state == .open)
    try w.close()
    #expect(try LogReader(path: dir.file("a.log")).eventCount == 2)
  }

  @Test("a failed write: writing → failed; every call throws it; close throws it and closes")
  func failedWrite() throws {
    let dir = TempDir()
    let files = ControlledFiles()
    let path = dir.file("a.log")
    let w = try LogWriter.open(path: path, options: Self.options(), files: files)
    try w.append([1])
    try w.flush()
    files.failWrites(with: ENOSPC)
    try w.append([2])
    #expect(throws: LogError.self) { try w.flush() }
    guard case .failed(let e) = w.state else {
      Issue.record("state \(w.state)")
      return
    }
    #expect(e.message.contains("write failed"))
    for call in [{ try w.append([3]) }, { try w.flush() }, { try w.sync() }] as [() throws -> Void]
    {
      do {
        try call()
        Issue.record("a failed writer accepted a call")
      } catch let error as LogError {
        #expect(error.message == e.message)
      }
    }
    #expect(throws: LogError.self) { try w.close() }
    #expect(w.state == .closed)
    // The partial frame was cut off: the file holds event 1 alone.
    #expect(try LogReader(path: path).eventCount == 1)
  }

  @Test("a failed sync: writing → failed, never retried")
  func failedSync() throws {
    let dir = TempDir()
    let files = ControlledFiles()
    let w = try LogWriter.open(
      path: dir.file("a.log"), options: Self.options(.always), files: files)
    files.failSyncs(with: EIO)
    try w.append([1])
    #expect(throws: LogError.self) { try w.flush() }
    guard case .failed(let e) = w.state else {
      Issue.record("state \(w.state)")
      return
    }
    #expect(e.message.contains("fsync failed"))
    #expect(throws: LogError.self) { try w.sync() }
    _ = try? w.close()
    #expect(w.state == .closed)
  }

  @Test("close from open and from writing: closed; pending events are written first")
  func closeFromEachState() throws {
    let dir = TempDir()
    let path = dir.file("a.log")
    let idle = try LogWriter.open(path: path, options: Self.options())
    try idle.close()
    #expect(idle.state == .closed)
    try idle.close()  // closing twice is harmless
    let busy = try LogWriter.open(path: path, options: Self.options())
    try busy.append([7])
    #expect(busy.state == .writing)
    try busy.close()
    #expect(busy.state == .closed)
    do {
      try busy.append([8])
      Issue.record("a closed writer accepted an append")
    } catch {
      #expect(error.kind == .closed)
    }
    #expect(try LogReader(path: path).eventCount == 1)
  }
}
