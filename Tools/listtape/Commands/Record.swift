import ListTapeJSON
import ListTapeModel
import ListTapeReplay
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `listtape record LOG`: JSON Lines from standard input appended to a log.
enum RecordCommand: Command {
  static let spec = CommandSpec(
    name: "record",
    abstract: "Append events read as JSON Lines from standard input to a log.",
    discussion: """
      Creates LOG if absent and appends to it otherwise, first recovering a torn tail left \
      by a crash. Malformed lines are rejected with their line number and not recorded; \
      faults are recorded (the log is the evidence) and warned about as they arrive. Blank \
      lines are skipped. At the end of input, or on SIGINT or SIGTERM, everything received \
      is made durable and a one-line summary goes to standard error. Exit status: 0 when \
      every line was recorded, 65 when any line was malformed.
      """,
    arguments: [ArgumentSpec(name: "log", help: "The log to append to (created if absent).")],
    options: [
      OptionSpec(
        name: "fsync", value: "mode",
        help: "When to force events to disk: after every write, once a second, or only at the end.",
        defaultText: "interval", choices: ["always", "interval", "never"])
    ])

  static func run(_ invocation: Invocation) throws(CLIError) -> Int32 {
    let path = invocation.required("log")
    let mode: FsyncMode
    switch invocation.value("fsync") {
    case "always": mode = .always
    case "never": mode = .never
    default: mode = .interval
    }
    let recorder = try replaying { () throws(ReplayError) in
      try Recorder.open(path: path, fsync: mode)
    }
    if let note = recorder.recoveryNote { Diagnostics.line("listtape: warning: \(note)") }
    let before = recorder.eventCount
    Interruption.install()
    defer { Interruption.uninstall() }
    if Terminal.isTTY(0) {
      Diagnostics.line("listtape: reading events from standard input (end with Ctrl-D)")
    }

    var reader = LineReader(fileDescriptor: 0)
    var recorded = 0
    var malformed = 0
    var faults = 0
    var failure: CLIError? = nil
    reading: while true {
      let line: LineReader.Line?
      do {
        line = try reader.next()
      } catch {
        failure = .failure("reading standard input: \(error)", code: ExitCode.io)
        break
      }
      guard let line else { break }
      switch line {
      case .tooLong(let number, let length):
        malformed += 1
        Diagnostics.line("listtape: line \(number): line too long (\(length) bytes)")
      case .text(let number, let bytes):
        if isBlank(bytes) { continue }
        let decoded = bytes.withUnsafeBytes { raw in
          Result { () throws(MalformedEvent) in try Event(jsonLine: raw) }
        }
        switch decoded {
        case .failure(let error):
          malformed += 1
          Diagnostics.line("listtape: line \(number): \(error)")
        case .success(let event):
          do {
            if let fault = try recorder.record(event) {
              faults += 1
              Diagnostics.line(
                "listtape: warning: event \(before + recorded + 1): \(event.op): \(fault)")
            }
            recorded += 1
          } catch {
            failure = CLIError(error)
            break reading
          }
        }
      }
    }
    do {
      try recorder.close()
    } catch {
      if failure == nil { failure = CLIError(error) }
    }
    var summary =
      "listtape: recorded \(Render.plural(recorded, "event")) to \(path) "
      + "(\(Render.plural(malformed, "malformed line")), \(Render.plural(faults, "fault"))"
    summary += "; \(Render.plural(before + recorded, "event")) in the log"
    if Interruption.requested { summary += "; interrupted" }
    Diagnostics.line(summary + ")")
    if let failure { throw failure }
    return malformed > 0 ? ExitCode.malformed : ExitCode.success
  }

  private static func isBlank(_ bytes: ArraySlice<UInt8>) -> Bool {
    for b in bytes where b != 0x20 && b != 0x09 && b != 0x0D { return false }
    return true
  }
}

/// SIGINT and SIGTERM while recording: the handler points standard input at /dev/null, so
/// the read in progress (restarted by the kernel or by the reader) sees the end of input,
/// and the loop ends the normal way, closing the recorder. Only async-signal-safe calls run
/// in the handler. A second signal gets the default action.
enum Interruption {
  private static let flag = Atomic<Bool>(false)
  private static let devNull = Atomic<Int32>(-1)

  static var requested: Bool { flag.load(ordering: .relaxed) }

  static func install() {
    devNull.store(open("/dev/null", O_RDONLY), ordering: .relaxed)
    // A parent may have spawned us with these blocked (the mask survives exec); unblock them.
    var set = sigset_t()
    sigemptyset(&set)
    sigaddset(&set, SIGINT)
    sigaddset(&set, SIGTERM)
    pthread_sigmask(SIG_UNBLOCK, &set, nil)
    for sig in [SIGINT, SIGTERM] {
      _ = signal(sig) { sig in
        Interruption.flag.store(true, ordering: .relaxed)
        let fd = Interruption.devNull.load(ordering: .relaxed)
        if fd >= 0 { _ = dup2(fd, 0) }
        _ = signal(sig, SIG_DFL)
      }
    }
  }

  static func uninstall() {
    _ = signal(SIGINT, SIG_DFL)
    _ = signal(SIGTERM, SIG_DFL)
    let fd = devNull.exchange(-1, ordering: .relaxed)
    if fd >= 0 { close(fd) }
  }
}
