import Foundation

/// The background flusher: one thread per writer that cuts a batch once it is `batchDelay`
/// old, frames and writes the full batches handed to it (`cutsAhead`) and, under
/// `.interval`, syncs at most once per interval while frames are unsynced.
/// It sleeps until its next deadline, or until an append gives it one: an idle writer's
/// thread never wakes. With a `ManualClock` there is no thread: advancing the clock does
/// the same work (`flushDue`).
extension WriterCore {
  /// The flusher's time in nanoseconds: the manual clock's, else the monotonic clock's.
  func currentTime() -> UInt64 { options.clock?.now ?? Posix.monotonicNanos() }

  func startFlusher() {
    if let clock = options.clock {
      clock.register(self)
      return
    }
    flusherRunning = true
    let t = Thread { [self] in
      files.threadStarted("ListTapeLog flusher")
      flusherLoop()
    }
    t.name = "ListTapeLog flusher"
    t.start()
  }

  private var batchDelayNanos: UInt64 { UInt64(max(options.batchDelay, 0.001) * 1e9) }

  /// The interval policy's period in nanoseconds, or 0 under the other policies.
  var syncIntervalNanos: UInt64 {
    guard case .interval(let s) = options.fsync else { return 0 }
    return UInt64(max(s, 0.001) * 1e9)
  }

  /// When the flusher next has work: the batch reaching `batchDelay`, or the next interval
  /// sync while frames are unsynced; nil when nothing is due until the next append. Lock
  /// held.
  private func nextDeadline() -> UInt64? {
    guard state.isUsable else { return nil }
    var deadline: UInt64?
    if !batch.isEmpty { deadline = batch.since &+ batchDelayNanos }
    let interval = syncIntervalNanos
    if interval > 0, dirty {
      let d = lastSync &+ interval
      deadline = min(deadline ?? d, d)
    }
    return deadline
  }

  /// Wakes the flusher when it sleeps past work just created (a new batch, an unsynced
  /// frame), so it can sleep without a timeout while the writer is idle. Lock held.
  func noteWork() {
    guard flusherRunning, let d = nextDeadline(), let sleeping = flusherDeadline, d < sleeping
    else { return }
    cond.signal()
  }

  /// Cuts batches that reached `batchDelay` and runs the interval sync, sleeping in between
  /// until the next deadline, or until signalled when there is none.
  private func flusherLoop() {
    cond.lock()
    while !isClosed {
      writeAhead()
      let now = flushDueLocked()
      guard !isClosed else { break }
      // A batch handed ahead during the background sync: no signal is left to wake for it.
      if aheadWaiting { continue }
      let deadline = nextDeadline()
      flusherDeadline = deadline ?? .max
      if let deadline {
        _ = cond.wait(until: Date(timeIntervalSinceNow: Double(deadline - now) / 1e9))
      } else {
        cond.wait()
      }
      flusherDeadline = nil
      wakeups += 1
    }
    cond.unlock()
    flusherDone.signal()
  }

  /// Does what is due at the clock's time (a manual clock was advanced).
  func flushDue() {
    cond.lock()
    defer { cond.unlock() }
    guard !isClosed else { return }
    _ = flushDueLocked()
  }

  /// Cuts the batch once it is `batchDelay` old and runs the interval sync when due, until
  /// nothing more is due now; returns the time it stopped at. Lock held.
  private func flushDueLocked() -> UInt64 {
    var now = currentTime()
    while true {
      if state.isUsable, !batch.isEmpty, now &- batch.since >= batchDelayNanos {
        try? cut()
        settle()
      }
      let interval = syncIntervalNanos
      if interval > 0, dirty, state.isUsable, now &- lastSync >= interval {
        backgroundSync(startedAt: now)
        now = currentTime()
      }
      guard !isClosed, let deadline = nextDeadline(), deadline <= now else { return now }
    }
  }

  private var isClosed: Bool {
    if case .closed = state { return true }
    return false
  }

  /// The interval policy's sync, run outside the lock so appenders are not blocked (writing
  /// → flushing → writing or open); a barrier on Apple platforms (ordered, not waiting for
  /// the drive's cache). Lock held on entry and exit.
  private func backgroundSync(startedAt now: UInt64) {
    dirty = false
    let end = output.end
    state.beginFlushing()
    cond.unlock()
    let e = files.sync(output.fd, .barrier)
    cond.lock()
    if let e {
      _ = fail(
        LogError(
          .poisoned, path: path, message: "fsync failed: \(errnoText(e)); writer stopped",
          errno: e))
    } else {
      lastSync = now
      output.synced(upTo: end)
      state.endFlushing(idle: batch.isEmpty && !dirty)
    }
  }
}
