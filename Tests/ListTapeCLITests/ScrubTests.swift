import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Whether a tool the viewer tests drive can be found; in CI (`CI` set) the tests run
/// regardless, so a missing tool fails them instead of skipping them.
func toolAvailable(_ name: String) -> Bool {
  if let ci = ProcessInfo.processInfo.environment["CI"], !ci.isEmpty { return true }
  return findTool(name) != nil
}

func findTool(_ name: String) -> String? {
  let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
  for dir in path.split(separator: ":") {
    let candidate = "\(dir)/\(name)"
    if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
  }
  return nil
}

/// A tmux server of its own (a private socket) running one command in a 100×30 pane.
final class TmuxSession {
  let socket = "listtape-test-\(UUID().uuidString.prefix(8))"
  let name = "scrub"

  init(_ command: String, width: Int = 100, height: Int = 30) throws {
    try tmux(["new-session", "-d", "-x", "\(width)", "-y", "\(height)", "-s", name, command])
  }

  deinit { _ = try? tmux(["kill-server"]) }

  /// Runs tmux on this session's server and returns what it printed.
  ///
  /// Spawned directly and reaped with `waitpid` (see `spawn`): with Foundation's `Process`,
  /// the client that starts the server (it forks the server and exits) was sometimes never
  /// reaped.
  @discardableResult
  func tmux(_ args: [String]) throws -> String {
    let dir = try TempDir()
    let out = dir.path("out")
    let argv = [findTool("tmux") ?? "/usr/bin/tmux", "-u", "-L", socket, "-f", "/dev/null"] + args
    var env = ProcessInfo.processInfo.environment
    env["TMUX"] = nil
    env["TERM"] = "xterm-256color"
    let status = try spawn(argv[0], argv: argv, environment: env, stdout: out)
    guard status == 0 || args.first == "kill-server" else {
      throw RecordFailed(message: "tmux \(args) exited \(status)")
    }
    return (try? String(contentsOfFile: out, encoding: .utf8)) ?? ""
  }

  /// Sends key names (`Right`, `PPage`, `Enter`, `q`) one by one.
  func keys(_ names: String...) throws {
    for key in names { try tmux(["send-keys", "-t", name, key]) }
  }

  /// Types text literally.
  func type(_ text: String) throws { try tmux(["send-keys", "-t", name, "-l", text]) }

  func screen() throws -> String { try tmux(["capture-pane", "-p", "-t", name]) }

  /// Polls the pane until `predicate` holds (every 20 ms, up to `seconds`); returns the
  /// last screen either way, so a failing expectation shows what was there.
  @discardableResult
  func wait(
    seconds: Double = 10, sourceLocation: SourceLocation = #_sourceLocation,
    _ predicate: (String) -> Bool
  ) throws -> String {
    let deadline = Date().addingTimeInterval(seconds)
    var text = try screen()
    while !predicate(text) && Date() < deadline {
      usleep(20_000)
      text = try screen()
    }
    #expect(predicate(text), "screen was:\n\(text)", sourceLocation: sourceLocation)
    return text
  }

  @discardableResult
  func waitFor(
    _ needle: String, seconds: Double = 10, sourceLocation: SourceLocation = #_sourceLocation
  ) throws -> String {
    try wait(seconds: seconds, sourceLocation: sourceLocation) { $0.contains(needle) }
  }

  /// The process id of the pane's shell.
  func panePID() throws -> Int32? {
    Int32(
      try tmux(["list-panes", "-t", name, "-F", "#{pane_pid}"]).trimmingCharacters(
        in: .whitespacesAndNewlines))
  }
}

@Suite(
  .serialized, .enabled(if: toolAvailable("tmux"), "tmux is not installed (apt-get install tmux)"))
struct ScrubTests {
  /// A shell line that runs the scrubber, then reports its exit code and whether the
  /// terminal settings are as they were before; it stays open so the pane can be read.
  static func command(_ log: String, _ extra: String = "") -> String {
    let tool = CLI.binary.path
    return "before=$(stty -g); echo READY; '\(tool)' scrub '\(log)' \(extra); echo \"EXIT=$?\"; "
      + "[ \"$(stty -g)\" = \"$before\" ] && echo TTY-RESTORED; sleep 600"
  }

  @Test func stepsPagesAndQuits() throws {
    let dir = try TempDir()
    let log = try CLI.record(CLI.sample("symbols"), in: dir)
    let tmux = try TmuxSession(Self.command(log))
    let first = try tmux.wait { $0.contains("event 105 of 105") && $0.contains("◆ 6 marks") }
    #expect(first.contains("main  "))
    // The last event sits in the bar's last column, which a full line keeps.
    #expect(first.split(separator: "\n").contains { $0.hasSuffix("●") }, "\(first)")
    try tmux.keys("Left")
    try tmux.waitFor("event 104 of 105")
    try tmux.keys("Right")
    try tmux.waitFor("event 105 of 105")
    try tmux.keys("Home")
    let empty = try tmux.waitFor("event 0 of 105")
    #expect(empty.contains("(no sections)"))
    try tmux.keys("NPage")
    try tmux.waitFor("event 100 of 105")
    try tmux.keys("PPage")
    try tmux.waitFor("event 0 of 105")
    try tmux.keys("End")
    try tmux.waitFor("event 105 of 105")
    try tmux.keys("?")
    try tmux.waitFor("next / previous mark")
    try tmux.keys("Escape")
    try tmux.keys("q")
    let after = try tmux.wait { $0.contains("EXIT=0") && $0.contains("TTY-RESTORED") }
    // The alternate screen is gone: what was there before the viewer is back.
    #expect(after.contains("READY"))
    #expect(!after.contains("event 105 of 105"))
  }

  @Test func jumpsAndSearches() throws {
    let dir = try TempDir()
    let log = try CLI.record(CLI.sample("symbols"), in: dir)
    let tmux = try TmuxSession(Self.command(log, "--at 1"))
    try tmux.waitFor("event 1 of 105")
    try tmux.keys("g")
    try tmux.waitFor("go to event")
    try tmux.type("12")
    try tmux.keys("Enter")
    let twelve = try tmux.waitFor("event 12 of 105")
    #expect(twelve.contains("expand  header.weather"))
    #expect(twelve.contains("▾ header.weather  \"Weather\""))
    try tmux.keys("g")
    try tmux.type("mark:expanded")
    try tmux.keys("Enter")
    try tmux.waitFor("event 4 of 105")
    try tmux.keys("/")
    try tmux.waitFor("search item id")
    try tmux.type("message")
    try tmux.keys("Enter")
    let found = try tmux.waitFor("event 25 of 105")
    #expect(found.contains("select  message"))
    #expect(found.contains("message ✓"))
    try tmux.keys("n")
    try tmux.wait { !$0.contains("event 25 of 105") && $0.contains("touches message") }
    try tmux.keys("/")
    try tmux.type("no-such-item")
    try tmux.keys("Enter")
    try tmux.waitFor("touches \"no-such-item\"")
    try tmux.keys("q")
    try tmux.wait { $0.contains("EXIT=0") && $0.contains("TTY-RESTORED") }
  }

  @Test func marksFaultsAndDiff() throws {
    let dir = try TempDir()
    let log = try CLI.record(CLI.sample("symbols"), in: dir)
    let tmux = try TmuxSession(Self.command(log, "--at 0"))
    try tmux.waitFor("event 0 of 105")
    try tmux.wait { $0.contains("◆ 6 marks") && $0.contains("✗ 1 fault") }
    try tmux.keys("m")
    try tmux.waitFor("event 1 of 105  mark")
    try tmux.keys("m")
    try tmux.waitFor("event 4 of 105  mark")
    try tmux.keys("M")
    try tmux.waitFor("event 1 of 105  mark")
    try tmux.keys("f")
    let fault = try tmux.waitFor("event 98 of 105")
    #expect(fault.contains("✗ fault: select: item \"message\" is not visible"))
    try tmux.keys("f")
    try tmux.waitFor("no fault after event 98")
    try tmux.keys("Left", "d")
    let diff = try tmux.waitFor("diff from the previous event")
    #expect(diff.contains("event 97 of 105"))
    try tmux.keys("g")
    try tmux.type("12")
    try tmux.keys("Enter")
    try tmux.waitFor("▾ header.weather expanded")
    try tmux.keys("d")
    try tmux.wait { !$0.contains("header.weather expanded") }
    try tmux.keys("C-c")
    try tmux.wait { $0.contains("EXIT=0") && $0.contains("TTY-RESTORED") }
  }

  @Test func sigintRestoresTheTerminal() throws {
    let dir = try TempDir()
    let log = try CLI.record(CLI.sample("form"), in: dir)
    let tmux = try TmuxSession(Self.command(log))
    try tmux.waitFor("event 41 of 41")
    let shell = try #require(try tmux.panePID())
    let children = try String(
      contentsOfFile: "/proc/\(shell)/task/\(shell)/children", encoding: .utf8)
    let viewer = try #require(children.split(separator: " ").compactMap { Int32($0) }.first)
    kill(viewer, SIGINT)
    let after = try tmux.wait { $0.contains("EXIT=130") && $0.contains("TTY-RESTORED") }
    #expect(!after.contains("event 41 of 41"))
  }

  @Test func refusesWithoutATerminal() throws {
    let dir = try TempDir()
    let log = try CLI.record(CLI.sample("form"), in: dir)
    let r = try CLI.run(["scrub", log])
    #expect(r.code == 64)
    #expect(r.err.contains("scrub needs a terminal"))
    #expect(r.err.contains("listtape show"))
    #expect(r.out.isEmpty)
  }
}
