import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Every command that writes a file treats `-o` as Unix tools do (docs/cli.md, "Output
/// files"): `-` is standard output where the output can stream, a pipe or device is written
/// to and never replaced, an existing file is refused (73) unless --force, a symlink is
/// written through, and nothing but the named output is ever created, replaced or removed.
@Suite struct OutputFileTests {
  /// A command that writes one output, how to call it, and how to tell its output is right.
  struct Writer: CustomStringConvertible, Sendable {
    var name: String
    /// The command line without `-o OUT`.
    var arguments: [String]
    /// Whether `-o -` writes to standard output (else it is a usage error: stdout carries
    /// the report).
    var streamsToStdout: Bool
    /// Whether the output is a log (checked with `listtape stats`) rather than text.
    var isLog: Bool
    /// Text every correct output holds (for text outputs).
    var marker: String

    var description: String { name }
  }

  static let symbols = CLI.samples.appendingPathComponent("symbols.ltape").path

  static let writers: [Writer] = [
    Writer(
      name: "html", arguments: ["html", symbols], streamsToStdout: true, isLog: false,
      marker: "<!DOCTYPE html>"),
    Writer(
      name: "cut", arguments: ["cut", symbols, "--to", "10"], streamsToStdout: true, isLog: true,
      marker: ""),
    Writer(
      name: "what-if", arguments: ["what-if", symbols, "--without", "5"], streamsToStdout: false,
      isLog: true, marker: ""),
    Writer(
      name: "shrink", arguments: ["shrink", symbols, "--where", "count(sections) >= 1"],
      streamsToStdout: false, isLog: true, marker: ""),
    Writer(
      name: "salvage", arguments: ["salvage", symbols], streamsToStdout: true, isLog: true,
      marker: ""),
    Writer(
      name: "upgrade", arguments: ["upgrade", symbols], streamsToStdout: true, isLog: true,
      marker: ""),
    Writer(
      name: "export", arguments: ["export", symbols, "--swift"], streamsToStdout: true,
      isLog: false, marker: "NSDiffableDataSourceSnapshot"),
    Writer(
      name: "generate", arguments: ["generate", "--events", "50"], streamsToStdout: true,
      isLog: false, marker: "\"op\":"),
  ]

  /// The names in `dir`, sorted.
  static func entries(_ dir: TempDir) throws -> [String] {
    try FileManager.default.contentsOfDirectory(atPath: dir.url.path).sorted()
  }

  /// Checks that the file at `path` is a correct output of `writer`.
  static func expectOutput(_ writer: Writer, at path: String) throws {
    if writer.isLog {
      let stats = try CLI.run(["stats", path])
      #expect(stats.code == 0, "\(writer): \(stats.err)")
    } else {
      let text = String(decoding: try Data(contentsOf: URL(fileURLWithPath: path)), as: UTF8.self)
      #expect(text.contains(writer.marker), "\(writer)")
    }
  }

  @Test(arguments: writers)
  func aNewFileIsWrittenAndNothingElse(_ writer: Writer) throws {
    let dir = try TempDir()
    let out = dir.path("out")
    let result = try CLI.run(writer.arguments + ["-o", out])
    #expect(result.code == 0, "\(result.err)")
    #expect(try Self.entries(dir) == ["out"])
    try Self.expectOutput(writer, at: out)
  }

  @Test(arguments: writers)
  func anExistingFileIsRefusedUnlessForced(_ writer: Writer) throws {
    let dir = try TempDir()
    let out = dir.path("out")
    try Data("precious".utf8).write(to: URL(fileURLWithPath: out))
    let refused = try CLI.run(writer.arguments + ["-o", out])
    #expect(refused.code == 73)
    #expect(refused.err.contains("already exists; pass --force"), "\(refused.err)")
    #expect(refused.out.isEmpty)
    #expect(try String(contentsOfFile: out, encoding: .utf8) == "precious")
    #expect(try Self.entries(dir) == ["out"])

    let forced = try CLI.run(writer.arguments + ["-o", out, "--force"])
    #expect(forced.code == 0, "\(forced.err)")
    #expect(try Self.entries(dir) == ["out"])
    try Self.expectOutput(writer, at: out)
  }

  @Test(arguments: writers)
  func aSymlinkIsWrittenThroughAndStays(_ writer: Writer) throws {
    let dir = try TempDir()
    let target = dir.path("target")
    let link = dir.path("link")
    try Data("old".utf8).write(to: URL(fileURLWithPath: target))
    #expect(symlink("target", link) == 0)
    let refused = try CLI.run(writer.arguments + ["-o", link])
    #expect(refused.code == 73)
    #expect(refused.err.contains("through the link to"), "\(refused.err)")

    let forced = try CLI.run(writer.arguments + ["-o", link, "--force"])
    #expect(forced.code == 0, "\(forced.err)")
    #expect(try Self.entries(dir) == ["link", "target"])
    #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link) == "target")
    try Self.expectOutput(writer, at: target)

    // A dangling link creates its target; the link stays a link.
    let other = try TempDir()
    #expect(symlink("made", other.path("dangling")) == 0)
    let created = try CLI.run(writer.arguments + ["-o", other.path("dangling")])
    #expect(created.code == 0, "\(created.err)")
    #expect(try Self.entries(other) == ["dangling", "made"])
    #expect(
      try FileManager.default.destinationOfSymbolicLink(atPath: other.path("dangling")) == "made")
    try Self.expectOutput(writer, at: other.path("made"))
  }

  @Test(arguments: writers)
  func dashIsStandardOutputWhereTheOutputCanStream(_ writer: Writer) throws {
    let dir = try TempDir()
    let result = try CLI.run(writer.arguments + ["-o", "-"])
    #expect(try Self.entries(dir).isEmpty)
    #expect(!FileManager.default.fileExists(atPath: "-"))
    guard writer.streamsToStdout else {
      #expect(result.code == 64)
      #expect(result.err.hasPrefix("Error: '-o -' cannot be used here"), "\(result.err)")
      #expect(result.out.isEmpty)
      return
    }
    #expect(result.code == 0, "\(result.err)")
    let copy = dir.path("copy")
    try Data(result.out.utf8).write(to: URL(fileURLWithPath: copy))
    if writer.isLog {
      // Bytes through a String would not survive: read the log back from a file instead.
      let raw = try CLI.runRaw(writer.arguments + ["-o", "-"])
      try raw.write(to: URL(fileURLWithPath: copy))
    }
    try Self.expectOutput(writer, at: copy)
  }

  @Test(arguments: writers)
  func aDeviceIsWrittenToAndNeverReplaced(_ writer: Writer) throws {
    // A log is built in a private temporary file first: it is gone afterwards.
    let scratch = try TempDir()
    let result = try CLI.run(
      writer.arguments + ["-o", "/dev/null"], environment: ["TMPDIR": scratch.url.path])
    #expect(result.code == 0, "\(result.err)")
    #expect(try Self.entries(scratch).isEmpty)
    var info = stat()
    #expect(stat("/dev/null", &info) == 0)
    #expect(info.st_mode & S_IFMT == S_IFCHR)
  }

  @Test(arguments: writers)
  func aPipeIsWrittenToAndNeverReplaced(_ writer: Writer) throws {
    let dir = try TempDir()
    let fifo = dir.path("fifo")
    #expect(mkfifo(fifo, 0o600) == 0)
    // Open the reading end first, without blocking, so the command's open never waits.
    let reader = open(fifo, O_RDONLY | O_NONBLOCK)
    #expect(reader >= 0)
    defer { close(reader) }
    let process = Process()
    process.executableURL = CLI.binary
    process.arguments = writer.arguments + ["-o", fifo]
    process.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
    process.standardError = FileHandle(forWritingAtPath: "/dev/null")
    try process.run()
    var received: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 1 << 16)
    let deadline = Date().addingTimeInterval(60)
    while Date() < deadline {
      let n = buffer.withUnsafeMutableBytes { read(reader, $0.baseAddress, $0.count) }
      if n > 0 {
        received += buffer[0..<n]
        continue
      }
      if !process.isRunning { break }
      usleep(1000)
    }
    process.waitUntilExit()
    while true {
      let n = buffer.withUnsafeMutableBytes { read(reader, $0.baseAddress, $0.count) }
      guard n > 0 else { break }
      received += buffer[0..<n]
    }
    #expect(process.terminationStatus == 0)
    var info = stat()
    #expect(lstat(fifo, &info) == 0)
    #expect(info.st_mode & S_IFMT == S_IFIFO)
    #expect(try Self.entries(dir) == ["fifo"])
    let copy = try TempDir()
    try Data(received).write(to: copy.url.appendingPathComponent("copy"))
    try Self.expectOutput(writer, at: copy.path("copy"))
  }

  /// Under `script`, which gives the tool a terminal: `/dev/tty` is written to when the
  /// output is text, and a log is refused (64) rather than sprayed over the screen.
  @Test(arguments: writers)
  func aTerminalGetsTextButNeverALog(_ writer: Writer) throws {
    guard FileManager.default.isExecutableFile(atPath: "/usr/bin/script") else { return }
    let quoted = ([CLI.binary.path] + writer.arguments + ["-o", "/dev/tty"])
      .map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/script")
    process.arguments = ["-qfec", quoted + "; echo EXIT=$?", "/dev/null"]
    process.environment = CLI.baseEnvironment
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardInput = FileHandle.nullDevice
    try process.run()
    let screen = String(
      decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    if writer.isLog {
      #expect(screen.contains("EXIT=64"), "\(screen.suffix(300))")
      #expect(screen.contains("A log is binary and is not written to a terminal"))
    } else {
      #expect(screen.contains("EXIT=0"), "\(screen.suffix(300))")
      #expect(screen.contains(writer.marker))
    }
  }

  @Test func aFailureLeavesNothingBehind() throws {
    let dir = try TempDir()
    // The predicate never holds at the end: shrink exits 1 after its work, writing nothing.
    let shrink = try CLI.run([
      "shrink", Self.symbols, "--where", "count(sections) > 99", "-o", dir.path("out"),
    ])
    #expect(shrink.code == 1)
    // Over the page's size cap: refused after reading the log.
    let html = try CLI.run(["html", Self.symbols, "--max-events", "1", "-o", dir.path("page")])
    #expect(html.code == 64)
    // An existing output replaced with --force, but the command fails: the old content stays.
    try Data("old".utf8).write(to: URL(fileURLWithPath: dir.path("kept")))
    let cut = try CLI.run([
      "cut", Self.symbols, "--to", "mark:nope", "-o", dir.path("kept"), "--force",
    ])
    #expect(cut.code == 64)
    #expect(try String(contentsOfFile: dir.path("kept"), encoding: .utf8) == "old")
    #expect(try Self.entries(dir) == ["kept"])
  }

  @Test func aDirectoryIsRefused() throws {
    let dir = try TempDir()
    let result = try CLI.run(["cut", Self.symbols, "--to", "3", "-o", dir.url.path])
    #expect(result.code == 73)
    #expect(result.err.contains("is a directory"), "\(result.err)")
    #expect(try Self.entries(dir).isEmpty)
    let nowhere = try CLI.run(["html", Self.symbols, "-o", dir.path("no/such/page.html")])
    #expect(nowhere.code == 73)
    #expect(
      nowhere.err.contains(
        "cannot create \(dir.path("no/such/page.html")): \(dir.path("no/such")) does not exist"),
      "\(nowhere.err)")
    try Data("x".utf8).write(to: dir.url.appendingPathComponent("file"))
    let under = try CLI.run(["html", Self.symbols, "-o", dir.path("file/page.html")])
    #expect(under.code == 73)
    #expect(under.err.contains("as the output: Not a directory"), "\(under.err)")
  }
}

extension CLI {
  /// Runs the tool and returns its standard output as bytes (logs are binary).
  static func runRaw(_ args: [String]) throws -> Data {
    let dir = try TempDir()
    let outURL = dir.url.appendingPathComponent("stdout")
    _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
    let process = Process()
    process.executableURL = binary
    process.arguments = args
    process.environment = baseEnvironment
    process.standardOutput = try FileHandle(forWritingTo: outURL)
    process.standardError = FileHandle(forWritingAtPath: "/dev/null")
    try process.run()
    guard waitForExit(process) else { throw RecordFailed(message: "listtape \(args) hung") }
    return try Data(contentsOf: outURL)
  }
}
