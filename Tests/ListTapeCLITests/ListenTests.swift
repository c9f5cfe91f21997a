import Foundation
import ListTapeModel
import Testing

#if canImport(Glibc)
import Glibc

/// `record --listen`: front ends stream JSON Lines over a Unix domain socket.
@Suite struct ListenTests {
  @Test func oneClientWithMalformedLinesAFaultAndAHalfLine() throws {
    let dir = try TempDir()
    let log = dir.path("log.ltape")
    let socket = dir.path("sock")
    let recorder = try ListeningRecorder(["record", log, "--listen", socket, "--once"], in: dir)
    let client = try UnixClient(path: socket)
    // Sent in pieces: a line split across writes is recorded once complete.
    try client.send(#"{"op":"appendSections","sections":["main"],"t":1000}"# + "\n" + #"{"op":"ap"#)
    try client.send(#"pendItems","items":["a","b","c"],"t":2000}"# + "\n")
    try client.send(
      """
      {"op":"explode"}

      {"op":"select","items":["b"]}
      not json
      {"op":"select","items":["nope"]}
      {"op":"deleteItems","items":["c"]}
      {"op":"appendItems","items":["d"
      """)
    client.close()
    let (code, err) = try recorder.finish()
    #expect(code == 65, "\(err)")
    #expect(err.contains("listtape: client 1 connected"))
    #expect(err.contains("listtape: client 1, line 3: unknown op"), "\(err)")
    #expect(err.contains("listtape: client 1, line 6: "), "\(err)")
    #expect(err.contains(#"listtape: warning: event 4: select: no item "nope" (client 1, line 7)"#))
    #expect(
      err.contains("listtape: client 1, line 9: incomplete line at disconnect (32 bytes"), "\(err)")
    #expect(err.contains("recorded 5 events to \(log) from 1 client (3 malformed lines, 1 fault"))
    #expect(!FileManager.default.fileExists(atPath: socket), "the socket file is removed")
    let events = try CLI.run(["events", log, "--json"])
    let lines = events.out.lines.filter { !$0.isEmpty }
    #expect(lines.count == 5)
    #expect(lines.first?.contains(#""t":1000"#) == true)
    let show = try CLI.run(["show", log, "--json"])
    #expect(show.code == 0)
    var expected = ListState()
    for line in lines { try? expected.apply(try Event(jsonLine: String(line))) }
    #expect(show.out == expected.json(event: 5) + "\n")
    #expect(show.out.contains(#""visible":["a","b"]"#))
    #expect(show.out.contains(#""selected":["b"]"#))
  }

  @Test(arguments: [SIGTERM, SIGINT])
  func interleavedClientsGoIntoOneLogUntilASignal(_ signal: Int32) throws {
    let dir = try TempDir()
    let log = dir.path("log.ltape")
    let socket = dir.path("sock")
    let recorder = try ListeningRecorder(["record", log, "--listen", socket], in: dir)
    let first = try UnixClient(path: socket)
    try recorder.waitForError("client 1 connected")
    let second = try UnixClient(path: socket)
    try recorder.waitForError("client 2 connected")
    try first.send(#"{"op":"appendSections","sections":["one"]}"# + "\n" + #"{"op":"appendIt"#)
    try second.send(#"{"op":"appendSections","sections":["two"]}"# + "\n")
    try second.send(#"{"op":"appendItems","section":"two","items":["y1","y2"]}"# + "\n{oops}\n")
    // The first client's half line waits for its end while the second client's lines go in.
    try first.send(#"ems","section":"one","items":["x1"]}"# + "\n")
    second.close()
    try recorder.waitForError("client 2 disconnected after 3 lines")
    // Still connected at the signal: its complete lines are recorded, its half line is not.
    try first.send(#"{"op":"appendItems","section":"one","items":["x2"]}"# + "\n" + #"{"op""#)
    kill(recorder.process.processIdentifier, signal)
    let (code, err) = try recorder.finish()
    first.close()
    #expect(code == 65, "\(err)")
    #expect(err.contains("listtape: client 2, line 3: "), "\(err)")
    #expect(err.contains("listtape: client 1, line 4: incomplete line at disconnect (5 bytes"))
    #expect(err.contains("recorded 5 events to \(log) from 2 clients (2 malformed lines, 0 faults"))
    #expect(err.contains("; interrupted)"))
    #expect(!FileManager.default.fileExists(atPath: socket), "the socket file is removed")
    let show = try CLI.run(["show", log, "--json"])
    #expect(show.out.contains(#""id":"one","items":[{"id":"x1""#), "\(show.out)")
    #expect(show.out.contains(#""visible":["x1","x2"]"#), "\(show.out)")
    #expect(show.out.contains(#""visible":["y1","y2"]"#), "\(show.out)")
    // Each client's lines stay in its own order.
    let events = try CLI.run(["events", log, "--json"]).out.lines.filter { !$0.isEmpty }
    let order = events.compactMap { line in
      ["x1", "x2", "y1", "one", "two"].first { line.contains("\"\($0)\"") }
    }
    #expect(order.filter { ["one", "x1", "x2"].contains($0) } == ["one", "x1", "x2"])
    #expect(order.filter { ["two", "y1"].contains($0) } == ["two", "y1"])
  }

  @Test func aCleanSessionExitsZeroAndAppendsToTheLog() throws {
    let dir = try TempDir()
    let log = dir.path("log.ltape")
    let socket = dir.path("sock")
    _ = try CLI.run(
      ["record", log], input: Data(#"{"op":"appendSections","sections":["s"]}"#.utf8))
    let recorder = try ListeningRecorder(
      ["record", log, "--listen", socket, "--once", "--fsync", "always"], in: dir)
    let client = try UnixClient(path: socket)
    try client.send(#"{"op":"appendItems","items":["a"]}"# + "\r\n   \n")
    client.close()
    let (code, err) = try recorder.finish()
    #expect(code == 0, "\(err)")
    #expect(
      err.contains(
        "recorded 1 event to \(log) from 1 client (0 malformed lines, 0 faults; 2 events"))
    #expect(try CLI.run(["show", log, "--json"]).out.contains(#""visible":["a"]"#))
  }

  @Test func aStaleSocketFileIsReplacedAndOtherFilesAreRefused() throws {
    let dir = try TempDir()
    let socket = dir.path("sock")
    // A socket file nobody listens on, as a crashed recorder leaves behind.
    let fd = try UnixClient.bindStale(socket)
    close(fd)
    let recorder = try ListeningRecorder(
      ["record", dir.path("a.ltape"), "--listen", socket, "--once"], in: dir)
    let client = try UnixClient(path: socket)
    try client.send("\n")
    client.close()
    #expect(try recorder.finish().code == 0)

    let plain = dir.path("plain")
    try Data("keep me".utf8).write(to: URL(fileURLWithPath: plain))
    let refused = try CLI.run(["record", dir.path("b.ltape"), "--listen", plain])
    #expect(refused.code == 66)
    #expect(refused.err.hasPrefix("listtape: error: cannot listen on \(plain): "), "\(refused.err)")
    #expect(try String(contentsOfFile: plain, encoding: .utf8) == "keep me")
  }

  @Test func aLiveSocketIsNotTakenOver() throws {
    let dir = try TempDir()
    let socket = dir.path("sock")
    let recorder = try ListeningRecorder(
      ["record", dir.path("a.ltape"), "--listen", socket, "--once"], in: dir)
    let second = try CLI.run(["record", dir.path("b.ltape"), "--listen", socket])
    #expect(second.code == 74)
    #expect(second.err.contains("another process is listening there"), "\(second.err)")
    // The check's connection sent nothing, so it did not end the --once session.
    let client = try UnixClient(path: socket)
    try client.send(#"{"op":"appendSections","sections":["s"]}"# + "\n")
    client.close()
    let (code, err) = try recorder.finish()
    #expect(code == 0, "\(err)")
    #expect(err.contains("recorded 1 event"))
  }

  @Test func onceNeedsListen() throws {
    let r = try CLI.run(["record", "x.ltape", "--once"])
    #expect(r.code == 64)
    #expect(r.err.hasPrefix("Error: '--once' needs '--listen <path>'"))
  }
}

/// `listtape record … --listen` running in the background, its stderr in a file.
final class ListeningRecorder {
  let process = Process()
  let errURL: URL

  /// Starts the recorder and waits for its socket (the last argument after --listen).
  init(_ args: [String], in dir: TempDir, timeout: Double = 30) throws {
    errURL = dir.url.appendingPathComponent("stderr-\(UUID().uuidString)")
    _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
    process.executableURL = CLI.binary
    process.arguments = args
    process.environment = CLI.baseEnvironment
    process.standardInput = FileHandle.nullDevice
    process.standardOutput = FileHandle.nullDevice
    process.standardError = try FileHandle(forWritingTo: errURL)
    try process.run()
    guard let i = args.firstIndex(of: "--listen"), i + 1 < args.count else { return }
    try waitForError("listtape: listening on", timeout: timeout)
  }

  var err: String { (try? String(contentsOf: errURL, encoding: .utf8)) ?? "" }

  /// Polls standard error until it contains `text`.
  func waitForError(_ text: String, timeout: Double = 30) throws {
    let deadline = Date().addingTimeInterval(timeout)
    while !err.contains(text) {
      guard Date() < deadline, process.isRunning || err.contains(text) else {
        throw RecordFailed(message: "no '\(text)' on stderr: \(err)")
      }
      usleep(10_000)
    }
  }

  /// Waits for the recorder to exit; its status and standard error.
  func finish(timeout: Double = 30) throws -> (code: Int32, err: String) {
    guard waitForExit(process, seconds: timeout) else {
      throw RecordFailed(message: "the recorder hung: \(err)")
    }
    return (process.terminationStatus, err)
  }
}

/// A front end's end of the socket, in process.
final class UnixClient {
  private var fd: Int32 = -1

  /// Connects to `path`, retrying while the listener comes up.
  init(path: String, timeout: Double = 30) throws {
    let deadline = Date().addingTimeInterval(timeout)
    while true {
      let s = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
      guard s >= 0 else { throw RecordFailed(message: "socket: \(errno)") }
      if Self.withAddress(path, { connect(s, $0, $1) }) == 0 {
        fd = s
        return
      }
      Glibc.close(s)
      guard Date() < deadline else { throw RecordFailed(message: "cannot connect to \(path)") }
      usleep(10_000)
    }
  }

  deinit { close() }

  func send(_ text: String) throws {
    let bytes = Array(text.utf8)
    var offset = 0
    while offset < bytes.count {
      let n = bytes.withUnsafeBytes { raw -> Int in
        guard let base = raw.baseAddress else { return 0 }
        return Glibc.send(fd, base + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
      }
      if n < 0 && errno == EINTR { continue }
      guard n > 0 else { throw RecordFailed(message: "send failed: \(errno)") }
      offset += n
    }
  }

  func close() {
    if fd >= 0 { Glibc.close(fd) }
    fd = -1
  }

  /// A socket bound at `path` and never listened on: its file stays after close.
  static func bindStale(_ path: String) throws -> Int32 {
    let s = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
    guard s >= 0, withAddress(path, { bind(s, $0, $1) }) == 0 else {
      throw RecordFailed(message: "bind \(path): \(errno)")
    }
    return s
  }

  static func withAddress<R>(_ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> R)
    -> R
  {
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
      for (i, b) in path.utf8.prefix(raw.count - 1).enumerated() { raw[i] = b }
    }
    return withUnsafePointer(to: &address) { pointer in
      pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        body($0, socklen_t(MemoryLayout<sockaddr_un>.size))
      }
    }
  }
}
#endif
