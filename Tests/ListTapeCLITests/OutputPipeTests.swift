import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Standard output into a pipe: the tool widens the pipe to 1 MiB (a state's JSON is
/// megabytes, and through 64 KiB the writer and its reader take turns every 64 KiB), and what
/// comes out of it is what a file gets.
@Suite struct OutputPipeTests {
  @Test func aPipeOnStandardOutputIsWidenedAndCarriesTheSameBytes() throws {
    #if os(Linux)
    let dir = try TempDir()
    let log = try CLI.record(CLI.sample("contacts"), in: dir)
    let pipe = Pipe()
    let before = fcntl(pipe.fileHandleForReading.fileDescriptor, 1032)  // F_GETPIPE_SZ
    let process = Process()
    process.executableURL = CLI.binary
    process.arguments = ["show", log, "--json"]
    process.standardOutput = pipe
    process.standardError = FileHandle.nullDevice
    try process.run()
    try? pipe.fileHandleForWriting.close()
    let piped = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    let after = fcntl(pipe.fileHandleForReading.fileDescriptor, 1032)
    #expect(process.terminationStatus == 0)
    let limit =
      (try? String(contentsOfFile: "/proc/sys/fs/pipe-max-size", encoding: .utf8))
      .flatMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) } ?? 0
    #expect(before < 1 << 20)
    if limit >= 1 << 20 || getuid() == 0 {
      #expect(after == 1 << 20, "pipe of \(before) bytes, then \(after)")
    }
    let direct = try CLI.run(["show", log, "--json"])
    #expect(direct.code == 0)
    #expect(String(decoding: piped, as: UTF8.self) == direct.out)
    #endif
  }
}
