import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `record` refuses a LOG that is a pipe or a device before it creates anything: a log is
/// appended to, read back and synced in place (opening a pipe would wait for a reader).
@Suite struct RecordLogKindTests {
  static let event = Data(#"{"op":"appendSections","sections":["a"]}"#.utf8 + [0x0A])

  static func entries(_ dir: TempDir) throws -> [String] {
    try FileManager.default.contentsOfDirectory(atPath: dir.url.path).sorted()
  }

  @Test func aPipeIsRefusedBeforeAnythingIsCreated() throws {
    let dir = try TempDir()
    let fifo = dir.path("log.ltape")
    #expect(mkfifo(fifo, 0o644) == 0)
    // Without the check, opening the pipe waits for a reader: CLI.run's guard calls it hung.
    let r = try CLI.run(["record", fifo, "--listen", dir.path("sock")], input: Self.event)
    #expect(r.code == 73)
    #expect(
      r.err
        == "listtape: error: cannot record to \(fifo): it is a pipe, and a log must be a "
        + "regular file; record to a file, then 'listtape events LOG --json' streams its "
        + "events\n")
    #expect(try Self.entries(dir) == ["log.ltape"], "no socket, no index, no tail file")
  }

  @Test(.enabled(if: FileManager.default.fileExists(atPath: "/dev/null"), "needs /dev/null"))
  func aDeviceIsRefused() throws {
    let r = try CLI.run(["record", "/dev/null"], input: Self.event)
    #expect(r.code == 73)
    #expect(r.err.contains("cannot record to /dev/null: it is a device"), "\(r.err)")
    #expect(r.err.split(separator: "\n").count == 1)
  }

  /// A reader refuses a pipe, a directory or a device as a log at once (66, what it is):
  /// opening a pipe used to wait for a writer forever (CLI.run's guard calls that hung),
  /// and a pipe among the logs of a directory hung `stats`, `find` and `export` over it. A
  /// pipe where the index file would be is no index: the log is read without it.
  @Test func aReaderRefusesAPipeADirectoryOrADevice() throws {
    let dir = try TempDir()
    let fifo = dir.path("pipe.ltape")
    #expect(mkfifo(fifo, 0o644) == 0)
    let symbols = CLI.samples.appendingPathComponent("symbols.ltape").path
    for (path, what) in [
      (fifo, "a pipe"), (dir.url.path, "a directory"), ("/dev/null", "a device"),
    ] {
      for args in [["show", path], ["verify", path], ["upgrade", path, "-o", dir.path("up")]] {
        let r = try CLI.run(args, seconds: 20)
        #expect(r.code == 66, "\(args): \(r.err)")
        #expect(
          r.err
            == "listtape: error: cannot open: it is \(what), and a log is a regular file (read "
            + "again at offsets) (\(path))\n", "\(args)")
      }
    }
    try FileManager.default.copyItem(atPath: symbols, toPath: dir.path("symbols.ltape"))
    for args in [
      ["stats", dir.url.path], ["export", dir.url.path, "--parquet", "-o", dir.path("t")],
    ] {
      let r = try CLI.run(args, seconds: 20)
      #expect(r.code == 2, "\(args): \(r.err)")
      #expect((r.out + r.err).contains("it is a pipe"), "\(args)")
    }
    #expect(mkfifo(dir.path("symbols.ltape.idx"), 0o644) == 0)
    let shown = try CLI.run(
      ["show", dir.path("symbols.ltape"), "--at", "40", "--json"], seconds: 20)
    #expect(shown.code == 0, "\(shown.err)")
    #expect(shown.out == (try CLI.run(["show", symbols, "--at", "40", "--json"])).out)
  }

  /// A reading command's LOG of `-` is a file named `-` when there is one; otherwise the
  /// error says why standard input cannot be a log (66, as for any log that is not there).
  @Test func aReaderTakesDashAsAFileAndSaysWhyNotStandardInput() throws {
    let dir = try TempDir()
    for args in [
      ["show", "-", "--at", "1"], ["replay", "-"], ["stats", "-"],
      ["export", "-", "--parquet", "-o", "tables"], ["find", "-", "--faults"],
    ] {
      let r = try CLI.run(args, input: Data("not a log".utf8), in: dir.url)
      #expect(r.code == 66, "\(args)")
      #expect(
        r.err
          == "listtape: error: cannot open -: a log is read from its file (seeks read it again "
          + "from offsets), and standard input cannot be one: name the log's file (./- for a "
          + "file named '-')\n", "\(args)")
      #expect(r.out.isEmpty)
      #expect(!FileManager.default.fileExists(atPath: dir.path("tables")), "\(args)")
    }
    // Among several logs, `-` is reported the same way (in the listing's damage lines, exit
    // 2) and the others are read.
    let many = try CLI.run(
      ["stats", "-", CLI.samples.appendingPathComponent("symbols.ltape").path], in: dir.url)
    #expect(many.code == 2)
    #expect(
      many.out.contains("-: cannot open -: a log is read from its file"), "\(many.out)")
    #expect(many.out.contains("events       105"), "\(many.out)")
    try FileManager.default.copyItem(
      atPath: CLI.samples.appendingPathComponent("symbols.ltape").path, toPath: dir.path("-"))
    let shown = try CLI.run(["show", "-", "--at", "1", "--json"], in: dir.url)
    #expect(shown.code == 0, "\(shown.err)")
    #expect(shown.out == (try CLI.run(["show", dir.path("-"), "--at", "1", "--json"])).out)
  }

  /// `-` names no file (other commands read it as standard input or write standard output
  /// there): refused as a usage error, and no file named `-` appears; `./-` is a file.
  @Test func aDashIsRefusedAndCreatesNothing() throws {
    let dir = try TempDir()
    func record(_ log: String) throws -> (code: Int32, err: String) {
      let process = Process()
      process.executableURL = CLI.binary
      process.arguments = ["record", log]
      process.environment = CLI.baseEnvironment
      process.currentDirectoryURL = dir.url
      let input = Pipe()
      let error = Pipe()
      process.standardInput = input
      process.standardOutput = FileHandle.nullDevice
      process.standardError = error
      try process.run()
      input.fileHandleForWriting.write(Self.event)
      try input.fileHandleForWriting.close()
      let err = error.fileHandleForReading.readDataToEndOfFile()
      #expect(waitForExit(process))
      return (process.terminationStatus, String(decoding: err, as: UTF8.self))
    }
    let dash = try record("-")
    #expect(dash.code == 64)
    #expect(
      dash.err.hasPrefix(
        "Error: a log is a file that record appends to and reads back; '-' (standard output) "
          + "cannot be one: name a file (./- for a file named '-')\n"), "\(dash.err)")
    #expect(try Self.entries(dir) == [])
    #expect(try record("./-").code == 0)
    #expect(try Self.entries(dir) == ["-"])
  }

  /// A link to a log that does not exist yet is followed as a shell's `>` follows it: the
  /// log is made where it points (it failed with "cannot create: File exists", 74). A link
  /// into a missing directory names both; a loop of links cannot be opened (66).
  @Test func aLinkToNothingIsRecordedThroughAndABadOneNamesItsTarget() throws {
    let dir = try TempDir()
    try FileManager.default.createDirectory(
      atPath: dir.path("sub"), withIntermediateDirectories: false)
    #expect(symlink("../chain.ltape", dir.path("sub/first.ltape")) == 0)
    #expect(symlink("target.ltape", dir.path("chain.ltape")) == 0)
    let r = try CLI.run(["record", dir.path("sub/first.ltape")], input: Self.event)
    #expect(r.code == 0, "\(r.err)")
    #expect(FileManager.default.fileExists(atPath: dir.path("target.ltape")))
    let again = try CLI.run(["record", dir.path("chain.ltape")], input: Self.event)
    #expect(again.err.contains("2 events in the log"), "\(again.err)")
    #expect(try CLI.run(["stats", dir.path("target.ltape")]).out.contains("events       2"))

    #expect(symlink("nowhere/x.ltape", dir.path("lost.ltape")) == 0)
    let lost = try CLI.run(["record", dir.path("lost.ltape")], input: Self.event)
    #expect(lost.code == 66)
    #expect(
      lost.err
        == "listtape: error: cannot create: No such file or directory (\(dir.path("nowhere/x.ltape")), "
        + "where \(dir.path("lost.ltape")) links)\n")
    #expect(symlink("loop2", dir.path("loop1")) == 0)
    #expect(symlink("loop1", dir.path("loop2")) == 0)
    let loop = try CLI.run(["record", dir.path("loop1")], input: Self.event)
    #expect(loop.code == 66, "\(loop.err)")
    #expect(loop.err.contains("Too many levels of symbolic links"), "\(loop.err)")
  }

  /// The mistakes a newcomer makes with LOG: a directory, an empty name, and the JSON Lines
  /// file itself (`record session.jsonl`), which is left as it was.
  @Test func aDirectoryAnEmptyNameOrTheJSONLinesThemselvesAreExplained() throws {
    let dir = try TempDir()
    let folder = try CLI.run(["record", dir.url.path], input: Self.event)
    #expect(folder.code == 66)
    #expect(
      folder.err
        == "listtape: error: cannot record to \(dir.url.path): it is a directory; name a file "
        + "in it, like \(dir.url.path)/session.ltape\n")
    let empty = try CLI.run(["record", ""], input: Self.event)
    #expect(empty.code == 64)
    #expect(empty.err.hasPrefix("Error: the log's name is empty"), "\(empty.err)")
    let lines = dir.path("session.jsonl")
    try Self.event.write(to: URL(fileURLWithPath: lines))
    let jsonl = try CLI.run(["record", lines], input: Self.event)
    #expect(jsonl.code == 2)
    #expect(
      jsonl.err
        == "listtape: error: \(lines) holds JSON Lines, not a log; record appends to a log, "
        + "reading the events from standard input: listtape record NEW.ltape < \(lines)\n")
    #expect(try Data(contentsOf: URL(fileURLWithPath: lines)) == Self.event)
    #expect(try Self.entries(dir) == ["session.jsonl"])
  }
}
