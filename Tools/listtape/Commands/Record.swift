import Dispatch
import ListTapeInvestigate
import ListTapeJSON
import ListTapeLog
import ListTapeModel
import ListTapeStore
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `listtape record LOG [--listen PATH [--once]]`: JSON Lines from standard input, or from
/// front ends connected to a Unix domain socket, appended to a log.
enum RecordCommand: Command {
  struct Arguments: ParsableArguments {
    var log = ""
    var fsync = Durability.interval
    var listen: String?
    var once = false
    var quiet = false
    var maxWarnings = 20
  }

  static let spec = CommandSpec<Arguments>(
    name: "record",
    abstract: "Append events read as JSON Lines from standard input to a log.",
    discussion: """
      Creates LOG if absent and appends to it otherwise, first recovering a torn tail left \
      by a crash. Malformed lines are rejected with their line number and not recorded; \
      faults are recorded (the log is the evidence) and warned about as they arrive. Blank \
      lines are skipped. At the end of input, or on SIGINT or SIGTERM, everything received \
      is made durable and a one-line summary goes to standard error. Exit status: 0 when \
      every line was recorded, 65 when any line was malformed.

      With --listen PATH, front ends connect to a Unix domain socket at PATH instead of \
      writing to standard input. Several may be connected at once: their lines go into the \
      one log in arrival order, each line recorded only once it is complete, and messages \
      name the client and its line (client 2, line 7). A line cut short by a disconnect is \
      reported as incomplete and not recorded. Recording ends on SIGINT or SIGTERM (what was \
      received is recorded, the socket file removed) or, with --once, when the first client \
      disconnects.
      """,
    arguments: [.required(\.log, "log", help: "The log to append to (created if absent).")],
    options: [
      .option(
        \.fsync, "fsync", value: "mode",
        help: "When to force events to disk: after every write, once a second, or only at the end."
      ),
      .option(
        \.listen, "listen", value: "path",
        help: "Accept front ends on a Unix domain socket at this path instead of reading "
          + "standard input (a stale socket file there is replaced).",
        isFile: true),
      .flag(
        \.once, "once",
        help: "With --listen: record the first client only, and stop when it disconnects."),
      .flag(
        \.quiet, "quiet", short: "q",
        help: "Print only the summary: no line per malformed line or fault."),
      .option(
        \.maxWarnings, "max-warnings", value: "n",
        help: "Print at most this many fault warnings and as many malformed-line messages; the "
          + "summary says how many more there were.",
        valid: 0...Int.max),
    ])

  static func run(_ arguments: Arguments, _ io: IO) throws(CLIError) -> Int32 {
    let path = arguments.log
    let mode = arguments.fsync
    let socketPath = arguments.listen
    if arguments.once && socketPath == nil {
      throw usageError("'--once' needs '--listen <path>'")
    }
    if path == "-" {
      throw usageError(
        "a log is a file that record appends to and reads back; '-' (standard output) cannot "
          + "be one: name a file (./- for a file named '-')")
    }
    if path.isEmpty { throw usageError("the log's name is empty: name a file, like session.ltape") }
    try checkKind(of: path)
    // The socket first: a path that cannot be listened on leaves no new log behind.
    var listener: Listener? = nil
    if let socketPath {
      try Listener.check(socketPath, for: self)
      listener = try Listener(path: socketPath)
    }
    defer { listener?.close() }
    let recorder: Recorder
    do {
      recorder = try Recorder.open(path: path, fsync: mode.policy)
    } catch {
      // `record session.jsonl` for `record NEW.ltape < session.jsonl`: say so.
      if case .log(let e) = error, e.kind == .notALog, looksLikeJSONLines(path) {
        throw .failure(
          "\(path) holds JSON Lines, not a log; record appends to a log, reading the events "
            + "from standard input: listtape record NEW.ltape < \(path)", code: ExitCode.damaged)
      }
      throw CLIError(error)
    }
    if let recovery = recorder.recovery {
      Diagnostics.line("listtape: warning: \(recovery) (\(recorder.path))")
    }
    var lines = LineRecorder(
      recorder: recorder, maxMessages: arguments.quiet ? 0 : arguments.maxWarnings)
    var clients: Int? = nil
    var failure: CLIError? = nil
    if let listener {
      do {
        clients = try ListenSession.run(
          listener: listener, once: arguments.once, lines: &lines)
      } catch {
        failure = error
      }
    } else {
      failure = readStandardInput(into: &lines)
    }
    do {
      try recorder.close()
    } catch {
      if failure == nil { failure = CLIError(error) }
    }
    Diagnostics.line(lines.summary(path: path, clients: clients))
    if let failure { throw failure }
    return lines.malformed > 0 ? ExitCode.malformed : ExitCode.success
  }

  /// Records standard input to its end (or to SIGINT/SIGTERM); returns what stopped it early.
  ///
  /// Lines are read and recorded on this thread (where the signals land, see
  /// `Interruption`) and parsed on a second one, two batches ahead: parsing JSON is a third
  /// of the work. Before a read that would wait for input, every line read so far is
  /// recorded, so a person's or an app's events reach the log as they come; input that is
  /// there already (a file, a pipe with data) is read on without emptying the pipeline.
  private static func readStandardInput(into lines: inout LineRecorder) -> CLIError? {
    Interruption.install()
    defer { Interruption.uninstall() }
    if Terminal.isTTY(0) {
      Diagnostics.line("listtape: reading events from standard input (end with Ctrl-D)")
    }
    var reader = LineReader(fileDescriptor: 0)
    let parser = DispatchQueue(label: "listtape.record.parse")
    var pending: [ParseBatch] = []
    var batch: [LineReader.Line] = []
    batch.reserveCapacity(ParseBatch.size)
    func submit() {
      guard !batch.isEmpty else { return }
      let job = ParseBatch(batch)
      batch.removeAll(keepingCapacity: true)
      parser.async { job.parse() }
      pending.append(job)
    }
    /// Records the oldest batches until at most `keep` are in flight.
    func record(keeping keep: Int) -> CLIError? {
      while pending.count > keep {
        let job = pending.removeFirst()
        job.done.wait()
        let failure = record(job)
        // The batch's lines and events are freed on the parsing thread, which waits for the
        // recording thread more than it is waited for.
        parser.async { withExtendedLifetime(job) {} }
        if let failure { return failure }
      }
      return nil
    }
    func record(_ job: ParseBatch) -> CLIError? {
      let (read, decoded) = (job.lines, job.decoded)
      for i in decoded.indices {
        do {
          try lines.take(decoded[i], at: "line \(read[i].number)")
        } catch {
          return CLIError(error)
        }
      }
      return nil
    }
    while true {
      while let line = reader.nextBuffered() {
        batch.append(line)
        if batch.count >= ParseBatch.size {
          submit()
          if let failure = record(keeping: 2) { return failure }
        }
      }
      if !Self.inputReady(0) {
        // The next read waits: record everything read so far first.
        submit()
        if let failure = record(keeping: 0) { return failure }
      }
      let line: LineReader.Line?
      do {
        line = try reader.next()
      } catch {
        // What was read before the failure is recorded first.
        submit()
        return record(keeping: 0)
          ?? .failure("reading standard input: \(error)", code: ExitCode.io)
      }
      guard let line else {
        submit()
        return record(keeping: 0)
      }
      batch.append(line)
    }
  }

  /// Whether a read of `fd` returns at once: data, the end of input or an error waits.
  private static func inputReady(_ fd: Int32) -> Bool {
    var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
    return poll(&p, 1, 0) > 0
  }
}

extension RecordCommand {
  /// Refuses a LOG that exists and is a pipe, a device or a socket, before anything is
  /// created: a log is appended to, read back and synced in place (opening a pipe would wait
  /// for a reader, a device would take the header and fail). A missing path is created; a
  /// directory gets the name of a file in it (66).
  static func checkKind(of path: String) throws(CLIError) {
    var info = stat()
    guard stat(path, &info) == 0, let kind = Posix.kindName(info.st_mode) else { return }
    if info.st_mode & S_IFMT == S_IFDIR {
      throw .failure(
        "cannot record to \(path): it is a directory; name a file in it, like "
          + "\(path.hasSuffix("/") ? path : path + "/")session.ltape", code: ExitCode.cannotOpen)
    }
    throw .failure(
      "cannot record to \(path): it is \(kind), and a log must be a regular file; record to "
        + "a file, then 'listtape events LOG --json' streams its events",
      code: ExitCode.cannotCreate)
  }
}

/// Lines parsed into events on the parsing queue; `done` is signalled when `decoded` is
/// complete, and only then read by the recording thread.
private final class ParseBatch: @unchecked Sendable {
  /// Lines per batch: big enough to amortize the hand-over, small enough to stay a few
  /// hundred KiB.
  static let size = 1_024

  let lines: [LineReader.Line]
  /// What each line holds, in order; complete at `done`.
  private(set) var decoded: [LineRecorder.Decoded] = []
  let done = DispatchSemaphore(value: 0)

  init(_ lines: [LineReader.Line]) { self.lines = lines }

  func parse() {
    decoded.reserveCapacity(lines.count)
    for line in lines { decoded.append(LineRecorder.decode(line)) }
    done.signal()
  }
}

/// Decodes, records and reports lines the same way whatever they come from: malformed lines
/// are rejected with their place (`line 7`, `client 2, line 7`), faults recorded and warned.
struct LineRecorder {
  let recorder: Recorder
  /// Events the log held when recording began.
  let before: Int
  var recorded = 0
  var malformed = 0
  var faults = 0
  /// Set when a signal ended the recording.
  var interrupted = false
  /// How many fault warnings, and how many malformed-line messages, are printed; the
  /// summary counts the rest.
  let maxMessages: Int

  init(recorder: Recorder, maxMessages: Int = .max) {
    self.recorder = recorder
    self.maxMessages = maxMessages
    before = recorder.eventCount
  }

  /// What a line holds, decided without the log (so on any thread).
  enum Decoded: Sendable {
    case blank
    /// Not recorded, for this reason.
    case rejected(String)
    case event(Event)
  }

  static func decode(_ line: LineReader.Line) -> Decoded {
    switch line {
    case .tooLong(_, let length):
      return .rejected("line too long (\(length) bytes)")
    case .text(let number, var bytes):
      // A byte-order mark before the first line (some editors write one): RFC 8259 lets a
      // parser ignore it.
      if number == 1 && bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes.removeFirst(3) }
      if isBlank(bytes) { return .blank }
      if number == 1 && bytes.starts(with: [0x89, 0x55, 0x4C, 0x4F, 0x47]) {
        return .rejected(
          "this is a ListTape log, not JSON Lines; to copy its events: "
            + "listtape events LOG --json | listtape record NEW.ltape")
      }
      let decoded = bytes.withUnsafeBytes { raw in
        Result { () throws(MalformedEvent) in try Event(jsonLine: raw) }
      }
      switch decoded {
      case .failure(let error): return .rejected("\(error)")
      case .success(let event): return .event(event)
      }
    }
  }

  /// Records one line unless it is blank or malformed; `place` names it in messages, and
  /// `origin` (the client) is added to fault warnings. Throws only when the log fails.
  mutating func take(
    _ line: LineReader.Line, at place: @autoclosure () -> String, origin: String? = nil
  ) throws(StoreError) {
    try take(Self.decode(line), at: place(), origin: origin)
  }

  /// Records a decoded line, as `take(_:at:origin:)` does.
  /// `place` is made only for a line that is rejected.
  mutating func take(
    _ decoded: consuming Decoded, at place: @autoclosure () -> String, origin: String? = nil
  ) throws(StoreError) {
    switch decoded {
    case .blank: return
    case .rejected(let reason): reject(reason, at: place())
    case .event(let event):
      if let fault = try recorder.record(event) {
        faults += 1
        guard faults <= maxMessages else {
          recorded += 1
          return
        }
        var warning =
          "listtape: warning: "
          + faultLine(before + recorded + 1, event.op, fault, site: event.site)
        if let origin { warning += " (\(origin))" }
        Diagnostics.line(warning)
      }
      recorded += 1
    }
  }

  /// Counts a line that was not recorded and says why.
  mutating func reject(_ reason: String, at place: String) {
    malformed += 1
    guard malformed <= maxMessages else { return }
    Diagnostics.line("listtape: \(place): \(Visible.text(reason))")
  }

  /// `listtape: recorded N events to LOG [from K clients] (M malformed lines, F faults; …)`.
  func summary(path: String, clients: Int?) -> String {
    var summary = "listtape: recorded \(Render.plural(recorded, "event")) to \(path) "
    if let clients { summary += "from \(Render.plural(clients, "client")) " }
    summary +=
      "(\(Render.plural(malformed, "malformed line")), \(Render.plural(faults, "fault"))"
    summary += "; \(Render.plural(before + recorded, "event")) in the log"
    if interrupted || Interruption.requested { summary += "; interrupted" }
    summary += ")"
    var unshown: [String] = []
    if faults > maxMessages {
      unshown.append(Render.plural(faults - maxMessages, "fault warning"))
    }
    if malformed > maxMessages {
      unshown.append(Render.plural(malformed - maxMessages, "malformed-line message"))
    }
    if !unshown.isEmpty {
      summary +=
        "; \(unshown.joined(separator: " and ")) not shown "
        + (maxMessages == 0 ? "(--quiet)" : "(over --max-warnings \(maxMessages))")
    }
    return summary
  }

  static func isBlank(_ bytes: ArraySlice<UInt8>) -> Bool {
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

/// `--fsync`: when a recording is forced to stable storage.
enum Durability: String, ChoiceValue {
  case always, interval, never

  var policy: FsyncPolicy {
    switch self {
    case .always: return .always
    case .interval: return .interval(seconds: 1)
    case .never: return .never
    }
  }
}
