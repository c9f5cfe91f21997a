import Foundation
import ListTapeModel
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite struct RecordTests {
  @Test func recordsASampleAndWarnsAboutItsFault() throws {
    let dir = try TempDir()
    let path = dir.path("symbols.ltape")
    let (events, _) = try CLI.foldedStates(CLI.sample("symbols"))
    let r = try CLI.run(["record", path], input: try Data(contentsOf: CLI.sample("symbols")))
    #expect(r.code == 0)
    #expect(r.out.isEmpty)
    #expect(r.err.contains("listtape: warning: event 98: select: item \"message\" is not visible"))
    #expect(
      r.err.contains(
        "listtape: recorded \(events.count) events to \(path) (0 malformed lines, 1 fault"))
  }

  @Test func malformedLinesAreRejectedWithTheirNumbersAndTheRestKept() throws {
    let dir = try TempDir()
    let path = dir.path("log.ltape")
    let input = """
      {"op":"appendSections","sections":["main"],"t":1000}

      {"op":"appendItems","items":["a","b"],"t":2000}
      {"op":"appendItems","items":["a"]
      {"op":"explode","t":3000}
      {"op":"select"}
      [1,2,3]
         \t
      {"op":"moveItem","item":"a","before":"b","after":"b"}
      {"op":"appendItems","items":["c"],"t":"now"}
      {"op":"select","items":["b"],"t":4000}
      {"op":"select","items":["nope"],"t":5000}

      """
    let r = try CLI.run(["record", path], input: Data(input.utf8))
    #expect(r.code == 65)
    let errLines = r.err.lines.filter { !$0.isEmpty }
    for n in [4, 5, 6, 7, 9, 10] {
      #expect(errLines.contains { $0.hasPrefix("listtape: line \(n): ") }, "line \(n): \(r.err)")
    }
    #expect(
      !errLines.contains { $0.hasPrefix("listtape: line 2:") || $0.hasPrefix("listtape: line 8:") })
    #expect(r.err.contains("listtape: warning: event 4: select: no item \"nope\""))
    #expect(r.err.contains("recorded 4 events to \(path) (6 malformed lines, 1 fault"))
    let events = try CLI.run(["events", path, "--json"])
    #expect(events.code == 0)
    #expect(events.out.lines.filter { !$0.isEmpty }.count == 4)
    let show = try CLI.run(["show", path, "--json"])
    #expect(show.out.contains(#""selected":["b"]"#))
  }

  /// A byte-order mark before the first line (as some editors save JSON Lines) is not part
  /// of the line; anywhere else it is what it is: not JSON.
  @Test func aByteOrderMarkBeforeTheFirstLineIsSkipped() throws {
    let dir = try TempDir()
    let path = dir.path("log.ltape")
    let bom = "\u{FEFF}"
    let input =
      bom + #"{"op":"appendSections","sections":["s"],"t":1}"# + "\r\n" + bom
      + #"{"op":"mark","label":"x","t":2}"# + "\r\n"
    let r = try CLI.run(["record", path], input: Data(input.utf8))
    #expect(r.code == 65)
    #expect(r.err.contains("listtape: line 2: invalid JSON at column 1"), "\(r.err)")
    #expect(!r.err.contains("line 1:"), "\(r.err)")
    let events = try CLI.run(["events", path, "--json"])
    #expect(events.out == #"{"op":"appendSections","sections":["s"],"t":1}"# + "\n")
  }

  @Test func appendsToAnExistingLog() throws {
    let dir = try TempDir()
    let path = dir.path("log.ltape")
    let first = #"{"op":"appendSections","sections":["s"]}"# + "\n"
    #expect(try CLI.run(["record", path], input: Data(first.utf8)).code == 0)
    let second =
      #"{"op":"appendItems","items":["x"]}"# + "\n" + #"{"op":"select","items":["y"]}"# + "\n"
    let r = try CLI.run(["record", path, "--fsync", "always"], input: Data(second.utf8))
    #expect(r.code == 0)
    // Numbering continues from the events already in the log.
    #expect(r.err.contains("listtape: warning: event 3: select: no item \"y\""))
    #expect(r.err.contains("3 events in the log"))
    let events = try CLI.run(["events", path, "--json"])
    let lines = events.out.lines.filter { !$0.isEmpty }
    #expect(lines.count == 3)
    // The recorder stamps events that came without a time.
    for line in lines { #expect(try Event(jsonLine: String(line)).time != nil) }
  }

  @Test(arguments: ["always", "interval", "never"])
  func everyFsyncModeRecords(_ mode: String) throws {
    let dir = try TempDir()
    let path = dir.path("log.ltape")
    let r = try CLI.run(
      ["record", path, "--fsync", mode], input: try Data(contentsOf: CLI.sample("languages")))
    #expect(r.code == 0)
    let (_, states) = try CLI.foldedStates(CLI.sample("languages"))
    #expect(try CLI.run(["show", path, "--json"]).out == (states.last ?? "") + "\n")
  }

  @Test func emptyInputCreatesAnEmptyLog() throws {
    let dir = try TempDir()
    let path = dir.path("log.ltape")
    let r = try CLI.run(["record", path])
    #expect(r.code == 0)
    #expect(r.err.contains("recorded 0 events"))
    let show = try CLI.run(["show", path, "--json"])
    #expect(show.out == #"{"event":0,"sections":[],"selected":[]}"# + "\n")
  }

  @Test(arguments: [SIGTERM, SIGINT])
  func aSignalEndsRecordingWithEverythingReceivedDurable(_ signal: Int32) throws {
    let dir = try TempDir()
    let path = dir.path("log.ltape")
    let process = Process()
    process.executableURL = CLI.binary
    process.arguments = ["record", path]
    process.environment = CLI.baseEnvironment
    let input = Pipe()
    let errURL = dir.url.appendingPathComponent("stderr")
    _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
    process.standardInput = input
    process.standardError = try FileHandle(forWritingTo: errURL)
    try process.run()
    var lines = #"{"op":"appendSections","sections":["main"]}"# + "\n"
    for i in 0..<500 { lines += #"{"op":"appendItems","items":["item\#(i)"]}"# + "\n" }
    input.fileHandleForWriting.write(Data(lines.utf8))
    // The writer stays open: only the signal can end the recording. Wait until every line
    // is in the log (a fixed sleep lost the race on a loaded machine).
    #expect(waitForEvents(path, atLeast: 501))
    kill(process.processIdentifier, signal)
    #expect(waitForExit(process, seconds: 20))
    try? input.fileHandleForWriting.close()
    #expect(process.terminationReason == .exit)
    #expect(process.terminationStatus == 0)
    let err = String(decoding: try Data(contentsOf: errURL), as: UTF8.self)
    #expect(err.contains("recorded 501 events"), "\(err)")
    #expect(err.contains("interrupted"))
    let show = try CLI.run(["show", path, "--json"])
    #expect(show.out.contains(#""id":"item499""#))
  }

  /// Lines are parsed a batch ahead on a second thread, but none waits for a full batch:
  /// what a front end wrote is in the log while standard input is still open.
  @Test func linesReachTheLogWhileStandardInputStaysOpen() throws {
    let dir = try TempDir()
    let path = dir.path("log.ltape")
    let process = Process()
    process.executableURL = CLI.binary
    process.arguments = ["record", path, "--fsync", "always"]
    process.environment = CLI.baseEnvironment
    let input = Pipe()
    process.standardInput = input
    process.standardError = FileHandle.nullDevice
    try process.run()
    var lines = #"{"op":"appendSections","sections":["main"]}"# + "\n"
    for i in 0..<3 { lines += #"{"op":"appendItems","items":["item\#(i)"]}"# + "\n" }
    input.fileHandleForWriting.write(Data(lines.utf8))
    var seen = ""
    let deadline = Date().addingTimeInterval(20)
    while Date() < deadline {
      seen = try CLI.run(["show", path, "--json"]).out
      if seen.contains(#""id":"item2""#) { break }
      usleep(100_000)
    }
    #expect(seen.contains(#""id":"item2""#), "\(seen)")
    #expect(process.isRunning)
    try input.fileHandleForWriting.close()
    #expect(waitForExit(process, seconds: 20))
    #expect(process.terminationStatus == 0)
  }

  @Test func aSecondRecorderOnTheSameLogIsRefused() throws {
    let dir = try TempDir()
    let path = dir.path("log.ltape")
    let process = Process()
    process.executableURL = CLI.binary
    process.arguments = ["record", path]
    process.environment = CLI.baseEnvironment
    let input = Pipe()
    process.standardInput = input
    process.standardError = FileHandle.nullDevice
    try process.run()
    input.fileHandleForWriting.write(
      Data(#"{"op":"appendSections","sections":["a"]}"#.utf8 + [0x0A]))
    // The first recorder holds the log (and its lock) once its event is in it.
    #expect(waitForEvents(path, atLeast: 1))
    let second = try CLI.run(["record", path], input: Data())
    try input.fileHandleForWriting.close()
    #expect(waitForExit(process, seconds: 20))
    #expect(process.terminationStatus == 0)
    #expect(second.code == 74)
    #expect(second.err.hasPrefix("listtape: error: "))
  }
}
