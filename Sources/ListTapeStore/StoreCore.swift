import Dispatch
import Foundation
import ListTapeLog
import ListTapeModel

/// The recording store behind `ListStore`, in the log's own spellings (events and string
/// ids, for the tools and the tests): it owns the list state, folds every event through the
/// reducer on the caller's thread, and records every event (faults included) to a log
/// without making the caller wait for the disk.
///
/// Concurrency: a `final class` marked `@unchecked Sendable`. One lock guards the state, the
/// buffer and the counters; a caller holds it for one fold and one append to the buffer, the
/// writer for one swap of the buffer. The `Recorder` (file, encoder, its own fold for
/// checkpoints) is confined to a private serial `DispatchQueue`, the background writer, which
/// runs only while there is something to write. Calls are safe from any thread; events are
/// recorded in the order the lock admitted them.
///
/// When the disk falls behind and the buffer is full, events are dropped and counted (they
/// still apply to the state); the first event after room returns is preceded by a `mark`
/// naming the gap and one `batch` that turns the last recorded state into the live one, so
/// the log stays replayable and ends in the state the app showed. See docs/recording.md.
package final class StoreCore: @unchecked Sendable {
  package typealias Options = StoreOptions

  /// What the buffer carries to the writer.
  enum Pending {
    case event(Event, faulted: Bool)
    /// Events were dropped; `state` is the live state just before the next recorded one.
    case gap(dropped: Int, faults: Int, from: Int64, to: Int64, time: Int64, state: ListState)
  }

  /// An open run of dropped events.
  struct Gap {
    var dropped = 0
    var faults = 0
    var from: Int64
    var to: Int64
  }

  let options: Options
  private let lock = NSLock()
  let queue = DispatchQueue(label: "listtape.store.writer")

  // Guarded by `lock`.
  private var logPath: String
  private var current: ListState
  private var pending: [Pending] = []
  private var draining = false
  private var gap: Gap?
  private var dropped = 0
  private var faults = 0
  private var accepted = 0
  private var closed = false
  private var writeError: StoreError?

  // Confined to `queue` (or to `deinit`, when nothing else can reach the store).
  private var recorder: Recorder
  private var spare: [Pending] = []

  /// Opens LOG for recording (creating it if absent); the store starts from the state the log
  /// already ends in, so an app can resume a session. A relative path is resolved against
  /// the working directory, and refused when that is `/` (as in an iOS app). Blocks while
  /// the log is scanned and its end state rebuilt: from the main thread, prefer `open`.
  package init(path: String, options: Options = Options()) throws(StoreError) {
    let path = try Self.resolve(path, workingDirectory: FileManager.default.currentDirectoryPath)
    self.logPath = path
    self.options = options
    recorder = try Self.openRecorder(path, options)
    current = recorder.state
    // The app edits this copy by string: its ids are its own from here (the recorder's
    // follow the log's dictionary, which only restarts renumber).
    current.numberOwnIDs()
    pending.reserveCapacity(min(options.bufferCapacity, 4096))
  }

  /// Opens the recorder of `path` as `options` say, and sets the file's protection class.
  static func openRecorder(_ path: String, _ options: Options) throws(StoreError) -> Recorder {
    var writerOptions = options.writerOptions ?? Recorder.options(options.fsync)
    writerOptions.protection = options.fileProtection.protectionClass
    let recorder = try Recorder.open(
      path: path, options: writerOptions, files: options.files, onFold: options.onFold)
    options.files.setProtectionClass(options.fileProtection.protectionClass, of: path)
    return recorder
  }

  deinit {
    // Nothing else holds the store (a running drain holds a reference), so the writer's
    // confinement cannot be broken here.
    if !closed {
      writePending()
      try? recorder.close()
    }
  }

  private func locked<R>(_ body: () -> R) -> R {
    checkNotEditing()
    lock.lock()
    defer { lock.unlock() }
    return body()
  }
}

// MARK: - Reading the state

extension StoreCore {
  /// The log being recorded (absolute; `resume(path:)` may change it).
  package var path: String { locked { logPath } }

  /// A copy of the current state. Cheap to take; drop it soon, since a copy still held when
  /// the next edit arrives makes that edit copy the whole list once.
  package var state: ListState { locked { current } }

  /// Reads the state under the store's lock without copying it.
  package func withState<R>(_ body: (borrowing ListState) -> R) -> R { locked { body(current) } }

  /// The outline of one section (Apple's section snapshot), or nil when absent.
  package func sectionSnapshot(for section: String) -> SectionSnapshot? {
    withState { $0.sectionSnapshot(for: section) }
  }

  /// Section identifiers in display order.
  package var sectionIdentifiers: [String] { withState { $0.sectionIdentifiers } }

  /// Visible items of a section (the rows the collection view shows), or nil when absent.
  package func itemIdentifiers(inSection section: String) -> [String]? {
    withState { $0.itemIdentifiers(inSection: section) }
  }

  /// Selected items in display order.
  package var selectedItems: [String] { withState { $0.selectedItems } }
}

// MARK: - Counters

extension StoreCore {
  /// Events the store applied and handed to the writer (faults included).
  package var acceptedEvents: Int { locked { accepted } }

  /// Events applied to the state but not recorded: the buffer was full, the log had failed,
  /// or the store was closed. Each gap in the log is marked and followed by a resync batch.
  package var droppedEvents: Int { locked { dropped } }

  /// Events that faulted (recorded or not).
  package var faultCount: Int { locked { faults } }

  /// Events waiting for the writer.
  package var bufferedEvents: Int { locked { pending.count } }

  /// The first write failure, if any; from then on events are dropped, and `sync()` and
  /// `close()` throw it.
  package var lastWriteError: StoreError? { locked { writeError } }
}

// MARK: - Recording

extension StoreCore {
  /// Applies one event (stamped now unless it has a time), records it, and returns its fault
  /// if it faulted: the state is then unchanged, and the fault is in the log as evidence.
  @discardableResult
  package func send(_ event: Event) -> ListFault? {
    admit { () -> (Event, ListFault?)? in
      var event = event
      if event.time == nil { event.time = options.clock() }
      do throws(ListFault) {
        try current.apply(event)
        return (event, nil)
      } catch {
        return (event, error)
      }
    }
  }

  /// Applies one operation now, made at `site`; see `send(_:)`.
  @discardableResult
  package func send(_ operation: ListOperation, site: String? = nil) -> ListFault? {
    send(Event(operation, site: site))
  }

  /// Applies several operations as one atomic `batch` event (all or none).
  @discardableResult
  package func perform(_ operations: [ListOperation], site: String? = nil) -> ListFault? {
    send(.batch(operations.map { Event($0) }), site: site)
  }

  /// Makes the state equal to `state`, selection included, as `apply(_:)` does.
  @discardableResult
  package func apply(state: ListState, site: String? = nil) -> [ListOperation] {
    apply(site: site) { _ in state }
  }

  /// Makes the state equal to the one `target` builds from the current state, recording
  /// the fewest events that do so as one event, made at `site`.
  func apply(site: String? = nil, _ target: (ListState) -> ListState) -> [ListOperation] {
    var recorded: [ListOperation] = []
    _ = admit { () -> (Event, ListFault?)? in
      let plan = SnapshotDiffer.plan(from: current, to: target(current))
      guard let op = Self.oneEvent(plan.operations) else { return nil }
      current = plan.state
      recorded = plan.operations
      return (Event(op, time: options.clock(), site: site), nil)
    }
    return recorded
  }

  /// Replaces one section's outline (Apple's `apply(_:to:)`), recording the fewest events
  /// that do so. A snapshot that cannot apply (missing section, an id used in another
  /// section) records one `applySectionSnapshot` event, which faults, and returns the fault.
  @discardableResult
  package func apply(_ snapshot: SectionSnapshot, to section: String, site: String? = nil)
    -> ListFault?
  {
    admit { () -> (Event, ListFault?)? in
      var target = current
      do throws(ListFault) {
        try target.apply(snapshot, to: section)
      } catch {
        let op = ListOperation.applySectionSnapshot(section: section, items: snapshot.nodes)
        return (Event(op, time: options.clock(), site: site), error)
      }
      let plan = SnapshotDiffer.plan(from: current, to: target)
      guard let op = Self.oneEvent(plan.operations) else { return nil }
      current = plan.state
      return (Event(op, time: options.clock(), site: site), nil)
    }
  }

  /// Runs `body` on the state under the lock, as one transaction, and records what it did
  /// as one event: `body` returns the operations it applied in order and the fault of the
  /// last one, if it faulted. Without a fault the edits stay and the operations are recorded
  /// (one, or a `batch` of several); with one, every edit is undone and the operations are
  /// recorded all the same, a faulting event as the log's evidence. `body` returning nil
  /// undoes everything and records nothing.
  /// - Returns: the fault as replaying the log reports it (inside a batch:
  ///   `.inBatch(index:op:fault:)`).
  package func edit(
    site: String? = nil,
    _ body: (inout ListState) -> (operations: [ListOperation], fault: ListFault?)?
  ) -> ListFault? {
    admit { () -> (Event, ListFault?)? in
      var outcome: (operations: [ListOperation], fault: ListFault?)?
      current.transaction { state in
        #if DEBUG
        Thread.current.threadDictionary[editingKey] = true
        defer { Thread.current.threadDictionary[editingKey] = nil }
        #endif
        outcome = body(&state)
        return outcome != nil && outcome?.fault == nil
      }
      guard let (ops, fault) = outcome, let op = Self.oneEvent(ops) else { return nil }
      let reported = fault.map { f -> ListFault in
        guard ops.count > 1, let last = ops.last else { return f }
        return .inBatch(index: ops.count - 1, op: last.name, fault: f)
      }
      return (Event(op, time: options.clock(), site: site), reported)
    }
  }

  /// Marks the thread running an `edit` body, which holds the lock (debug builds).
  private var editingKey: String { "listtape.store.editing.\(ObjectIdentifier(self).hashValue)" }

  /// Stops a debug build that calls the store from inside its own `edit` body, where the
  /// call would wait forever for the lock the body runs under.
  @inline(__always) private func checkNotEditing() {
    #if DEBUG
    precondition(
      Thread.current.threadDictionary[editingKey] == nil,
      "a ListStore was called from inside its own perform: read and edit through the closure's list"
    )
    #endif
  }

  /// The operations as one event: itself when alone, a batch when several, nil when none.
  static func oneEvent(_ ops: [ListOperation]) -> ListOperation? {
    switch ops.count {
    case 0: return nil
    case 1: return ops[0]
    default: return .batch(ops.map { Event($0) })
    }
  }

  /// Folds one event under the lock (`fold` returns the stamped event and its fault, or nil
  /// when there is nothing to record) and hands it to the writer, or counts it as dropped.
  /// After a gap, the event goes in behind a `.gap` carrying the state just before it.
  private func admit(_ fold: () -> (Event, ListFault?)?) -> ListFault? {
    checkNotEditing()
    lock.lock()
    defer { lock.unlock() }
    let writable = !closed && writeError == nil
    let capacity = max(options.bufferCapacity, 2)
    // Only copied when a gap closes; the fold below then copies the list once.
    let before: ListState? =
      gap != nil && writable && pending.count + 2 <= capacity ? current : nil
    guard let (event, fault) = fold() else { return nil }
    accepted += 1
    if fault != nil { faults += 1 }
    let time = event.time ?? 0
    if !writable || pending.count >= capacity || (gap != nil && before == nil) {
      dropped += 1
      var g = gap ?? Gap(from: time, to: time)
      g.dropped += 1
      g.to = time
      if fault != nil { g.faults += 1 }
      gap = g
      return fault
    }
    if let g = gap, let before {
      pending.append(
        .gap(
          dropped: g.dropped, faults: g.faults, from: g.from, to: g.to, time: time,
          state: before))
      gap = nil
    }
    pending.append(.event(event, faulted: fault != nil))
    if !draining {
      draining = true
      queue.async { self.drain() }
    }
    return fault
  }
}

// MARK: - Background writer

extension StoreCore {
  /// Writes buffered events until the buffer is empty. Runs on `queue`.
  private func drain() {
    while true {
      options.beforeWrite?()
      let more: Bool = locked {
        swap(&pending, &spare)
        if spare.isEmpty { draining = false }
        return !spare.isEmpty
      }
      guard more else { return }
      for item in spare { write(item) }
      spare.removeAll(keepingCapacity: true)
    }
  }

  /// Writes whatever is buffered, on the current thread (`deinit`, or inside `queue`).
  private func writePending() {
    let items: [Pending] = locked {
      defer { pending.removeAll() }
      return pending
    }
    for item in items { write(item) }
  }

  private func write(_ item: Pending) {
    // `writeError` is only set on this queue, so reading it here needs no lock.
    if writeError != nil {
      locked { lose(item) }
      return
    }
    let before = recorder.eventCount
    do throws(StoreError) {
      switch item {
      case .event(let event, _):
        try recorder.record(event)
      case .gap(let count, let faultCount, let from, let to, let time, let state):
        let label =
          "listtape.gap dropped=\(count) faults=\(faultCount) from=\(from) to=\(to)"
        try recorder.record(Event(.mark(label), time: time))
        let ops = SnapshotDiffer.operations(from: recorder.state, to: state)
        if !ops.isEmpty {
          try recorder.record(Event(.batch(ops.map { Event($0) }), time: time))
        }
      }
    } catch {
      // A record the writer took is counted with the writer's stranded ones.
      let taken = recorder.eventCount > before
      fail(error)
      if !taken { locked { lose(item) } }
    }
  }

  /// Fails the store with `error` (the first failure wins) and counts the records its
  /// writer took but never wrote as dropped, in the open gap. On `queue`.
  private func fail(_ error: StoreError) {
    let stranded = recorder.writer.unwrittenEvents
    locked {
      guard writeError == nil else { return }
      writeError = error
      guard stranded > 0 else { return }
      dropped += stranded
      let time = options.clock()
      var g = gap ?? Gap(from: time, to: time)
      g.dropped += stranded
      gap = g
    }
  }

  /// Counts a buffered item the log did not get into the open gap, so that the gap a
  /// `resume` writes covers it. Lock held.
  func lose(_ item: Pending) {
    switch item {
    case .event(let event, let faulted):
      dropped += 1
      let time = event.time ?? 0
      var g = gap ?? Gap(from: time, to: time)
      g.dropped += 1
      g.from = min(g.from, time)
      g.to = max(g.to, time)
      if faulted { g.faults += 1 }
      gap = g
    case .gap(let count, let faultCount, let from, let to, _, _):
      var g = gap ?? Gap(from: from, to: to)
      g.dropped += count
      g.faults += faultCount
      g.from = min(g.from, from)
      g.to = max(g.to, to)
      gap = g
    }
  }

  /// Waits until every event handed to the store before this call is written and forced to
  /// stable storage. Throws the first write failure, if any. Blocks the calling thread for
  /// as long as the disk takes: from the main thread, prefer `await sync()`.
  package func sync() throws(StoreError) {
    try queue.sync { syncOnQueue() }.get()
  }

  /// The work of `sync()`, on `queue`: writes the buffer and syncs the log; a failed sync
  /// fails the store as a failed write does.
  func syncOnQueue() -> Result<Void, StoreError> {
    writePending()
    if let e = locked({ writeError }) { return .failure(e) }
    do throws(StoreError) {
      try recorder.sync()
      return .success(())
    } catch {
      fail(error)
      return .failure(error)
    }
  }

  /// The work of `resume(path:)`, on `queue`: closes the failed log, opens `target`, and
  /// writes one gap there (a `mark` and the `batch` that turns the log's last state into
  /// the live one) covering every event lost since the failure, then syncs.
  func resumeOnQueue(_ target: String?) -> Result<Void, StoreError> {
    let (failed, now) = locked { (writeError != nil && !closed, logPath) }
    guard failed else {
      return .failure(.nothingToResume(path: now))
    }
    let fresh: Recorder
    do throws(StoreError) {
      let path = try Self.resolve(
        target ?? now, workingDirectory: FileManager.default.currentDirectoryPath)
      try? recorder.close()
      fresh = try Self.openRecorder(path, options)
    } catch {
      return .failure(error)
    }
    recorder = fresh
    locked {
      // Buffered events already changed `current`: the resync below carries them.
      for item in pending { lose(item) }
      pending.removeAll(keepingCapacity: true)
      let time = options.clock()
      let g = gap ?? Gap(from: time, to: time)
      pending.append(
        .gap(
          dropped: g.dropped, faults: g.faults, from: g.from, to: g.to, time: time,
          state: current))
      gap = nil
      writeError = nil
      logPath = fresh.writer.path
    }
    return syncOnQueue()
  }

  /// Writes what is buffered, syncs and closes the log. Later edits still apply to the state
  /// but are counted as dropped. Closing twice does nothing.
  package func close() throws(StoreError) {
    let first: Bool = locked {
      defer { closed = true }
      return !closed
    }
    guard first else { return }
    let result: Result<Void, StoreError> = queue.sync {
      writePending()
      do throws(StoreError) {
        try recorder.close()
      } catch {
        return .failure(error)
      }
      if let e = locked({ writeError }) { return .failure(e) }
      return .success(())
    }
    try result.get()
  }
}
