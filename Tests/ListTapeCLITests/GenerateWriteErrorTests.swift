import Foundation
import Testing

/// `generate -o` stops at the first write error with exit 74, instead of generating every
/// event it was asked for and failing at the end.
@Suite struct GenerateWriteErrorTests {
  @Test(.enabled(if: FileManager.default.fileExists(atPath: "/dev/full"), "needs /dev/full"))
  func aWriteErrorStopsAtOnce() throws {
    // A billion events take hours to generate: only a stop at the first write returns before
    // CLI.run's 60-second guard calls it hung.
    let r = try CLI.run(["generate", "--events", "1000000000", "-o", "/dev/full"])
    #expect(r.code == 74)
    #expect(r.err == "listtape: error: cannot write /dev/full: No space left on device\n")
    #expect(r.out.isEmpty)
  }
}
