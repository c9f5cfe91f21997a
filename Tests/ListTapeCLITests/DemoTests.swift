import Foundation
import Testing

#if canImport(Glibc)
import Glibc

/// `listtape demo`: each seed app driven through tmux; the recorded log must replay to
/// exactly the rows that were on screen.
@Suite struct DemoTests {
  @Test func symbolsCollapseAndSingleSelection() throws {
    let dir = try TempDir()
    let log = dir.path("symbols.ltape")
    let demo = try TmuxDemo("symbols", log: log, in: dir)
    defer { demo.stop() }
    // Loaded with three events (sections, items expanded by default, a mark).
    let first = try demo.waitForScreen { $0.contains("[event 3]") }
    #expect(first.contains("▾ header.weather  \"Weather\""))
    try demo.moveCursor(to: "header.weather")
    try demo.act("Enter", event: 4)
    try demo.moveCursor(to: "pencil")
    try demo.act("Space", event: 5)
    try demo.moveCursor(to: "mic")
    let screen = try demo.act("Enter", event: 6)
    #expect(screen.contains("▸ header.weather  \"Weather\""))
    #expect(screen.contains("mic ✓"))
    #expect(!screen.contains("pencil ✓"), "single selection replaces")
    try demo.quitAndCompare(screen)
    let json = try CLI.run(["show", log, "--json"]).out
    #expect(json.contains(#""selected":["mic"]"#))
    #expect(json.contains(#"{"id":"header.weather","parent":null,"level":0,"expanded":false"#))
  }

  @Test func languagesExpandSelectCollapse() throws {
    let dir = try TempDir()
    let log = dir.path("languages.ltape")
    let demo = try TmuxDemo("languages", log: log, in: dir)
    defer { demo.stop() }
    let first = try demo.waitForScreen { $0.contains("[event 3]") }
    #expect(first.contains("▸ Programming Languages"))
    try demo.act("Enter", event: 4)
    try demo.moveCursor(to: "C++")
    let selected = try demo.act("Enter", event: 5)
    #expect(selected.contains("C++ ✓"))
    // ← on a child goes to its parent; Return collapses it, and the hidden row leaves the
    // selection.
    try demo.keys("Left")
    try demo.waitForCursor("Programming Languages")
    try demo.act("Enter", event: 6)
    let screen = try demo.act("Right", event: 7)
    #expect(screen.contains("▾ Programming Languages"))
    #expect(!screen.contains("✓"))
    try demo.quitAndCompare(screen)
    #expect(try CLI.run(["show", log, "--json"]).out.contains(#""selected":[]"#))
  }

  @Test func formPickCollapsesTheParentAndSetsItsTitle() throws {
    let dir = try TempDir()
    let log = dir.path("form.ltape")
    let demo = try TmuxDemo("form", log: log, in: dir)
    defer { demo.stop() }
    _ = try demo.waitForScreen { $0.contains("[event 5]") }
    try demo.moveCursor(to: "favoriteSport")
    let open = try demo.act("Enter", event: 6)
    #expect(open.contains("▾ favoriteSport  \"Favorite sport\""))
    try demo.moveCursor(to: "sport.basketball")
    let picked = try demo.act("Enter", event: 7)
    #expect(picked.contains("▸ favoriteSport  \"Basketball\""))
    #expect(!TmuxDemo.rows(picked).contains { $0.id.hasPrefix("sport.") }, "options hidden again")
    try demo.moveCursor(to: "level")
    try demo.act("Enter", event: 8)
    try demo.moveCursor(to: "level.7")
    let screen = try demo.act("Space", event: 9)
    #expect(screen.contains("▸ level  \"7\""))
    try demo.quitAndCompare(screen)
    let json = try CLI.run(["show", log, "--json"]).out
    #expect(
      json.contains(
        #"{"id":"favoriteSport","parent":null,"level":0,"expanded":false,"title":"Basketball"}"#),
      "\(json)")
    #expect(json.contains(#"{"id":"level","parent":null,"level":0,"expanded":false,"title":"7"}"#))
    // A pick is one atomic event: the title and the collapse together.
    let events = try CLI.run(["events", log, "--json", "--from", "7", "--to", "7"]).out
    #expect(events.contains(#""op":"batch""#))
    #expect(events.contains(#""op":"update","item":"favoriteSport","title":"Basketball""#))
  }

  @Test func contactsMultipleSelectionAndDelete() throws {
    let dir = try TempDir()
    let log = dir.path("contacts.ltape")
    let demo = try TmuxDemo("contacts", log: log, in: dir)
    defer { demo.stop() }
    _ = try demo.waitForScreen { $0.contains("[event 5]") }
    try demo.moveCursor(to: "contact-001")
    try demo.act("Enter", event: 6)
    try demo.moveCursor(to: "contact-005")
    try demo.act("Enter", event: 7)
    try demo.moveCursor(to: "contact-004")
    let deleted = try demo.act("d", event: 8)
    #expect(!TmuxDemo.rows(deleted).contains { $0.id == "contact-004" })
    #expect(deleted.contains("all  11 items, 11 visible"))
    try demo.moveCursor(to: "contact-008")
    try demo.act("d", event: 9)
    try demo.moveCursor(to: "contact-002")
    try demo.act("Enter", event: 10)
    try demo.moveCursor(to: "contact-001")
    let screen = try demo.act("Enter", event: 11)
    #expect(screen.contains("2 selected · multiple selection"))
    try demo.quitAndCompare(screen)
    let json = try CLI.run(["show", log, "--json"]).out
    #expect(json.contains(#""selected":["contact-002","contact-005"]"#), "\(json)")
  }

  @Test func aSignalRestoresTheTerminalAndKeepsTheSession() throws {
    let dir = try TempDir()
    let log = dir.path("languages.ltape")
    let demo = try TmuxDemo("languages", log: log, in: dir, checkTerminal: true)
    defer { demo.stop() }
    _ = try demo.waitForScreen { $0.contains("[event 3]") }
    try demo.act("Enter", event: 4)
    let pid = try demo.demoPID()
    kill(pid, SIGTERM)
    let after = try demo.waitForScreen { $0.contains("DONE") }
    #expect(after.contains("interrupted"), "\(after)")
    #expect(!after.contains("[event"), "the alternate screen is gone")
    #expect(after.contains("SAME"), "stty settings restored: \(after)")
    #expect(try CLI.run(["show", log, "--json"]).out.contains(#""event":4"#))
  }

  @Test func needsATerminalAndAKnownName() throws {
    let r = try CLI.run(["demo", "form"])
    #expect(r.code == 64)
    #expect(r.err.hasPrefix("listtape: error: demo needs a terminal"))
    let unknown = try CLI.run(["demo", "calendar"])
    #expect(unknown.code == 64)
    #expect(unknown.err.contains("expected one of: symbols, languages, form, contacts"))
  }
}

/// A demo running in a private tmux server (its own socket), driven by keys and read back
/// with `capture-pane`. Every wait polls with a generous deadline.
final class TmuxDemo {
  let server = "listtape-demo-test-\(UUID().uuidString.prefix(8))"
  let log: String
  /// The server's socket file, which tmux leaves behind.
  private(set) var socket: String?
  static let timeout = 30.0

  init(_ name: String, log: String, in dir: TempDir, checkTerminal: Bool = false) throws {
    self.log = log
    let binary = "'\(CLI.binary.path)'"
    var command = "\(binary) demo \(name) --record '\(log)' 2>'\(dir.path("demo.err"))'"
    if checkTerminal {
      // The shell compares the terminal settings before and after, then stays for a look.
      command =
        "stty -g > '\(dir.path("before"))'; \(binary) demo \(name) --record '\(log)'; "
        + "stty -g > '\(dir.path("after"))'; cmp -s '\(dir.path("before"))' "
        + "'\(dir.path("after"))' && echo SAME; echo DONE; sleep 60"
    }
    try tmux([
      "-f", "/dev/null", "new-session", "-d", "-x", "100", "-y", "30", "-s", "demo", command,
    ])
    socket = try tmux(["display-message", "-p", "#{socket_path}"])
      .trimmingCharacters(in: .whitespacesAndNewlines)
  }

  /// Runs `tmux -L server ARGS`; its standard output.
  ///
  /// Spawned directly rather than through `Process`: the server that `new-session` forks
  /// would inherit the descriptors Foundation watches for a child's exit (and those of other
  /// tests' children), so the spawn closes every descriptor above 2 and waits with
  /// `waitpid`.
  @discardableResult
  func tmux(_ args: [String]) throws -> String {
    let outURL = FileManager.default.temporaryDirectory
      .appendingPathComponent("listtape-tmux-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: outURL) }
    var env = CLI.baseEnvironment
    env["TMUX"] = nil
    env["TERM"] = "xterm-256color"
    let argv = ["tmux", "-u", "-L", server] + args
    let status = try spawn(
      "/usr/bin/env", argv: ["env"] + argv, environment: env, stdout: outURL.path)
    guard status == 0 else { throw RecordFailed(message: "tmux \(args) exited \(status)") }
    return String(decoding: try Data(contentsOf: outURL), as: UTF8.self)
  }

  func screen() throws -> String { try tmux(["capture-pane", "-p", "-t", "demo"]) }

  func keys(_ keys: String...) throws { try tmux(["send-keys", "-t", "demo"] + keys) }

  /// Polls the pane until `done` holds for it.
  @discardableResult
  func waitForScreen(_ what: String = "", _ done: (String) -> Bool) throws -> String {
    let deadline = Date().addingTimeInterval(Self.timeout)
    var last = ""
    while Date() < deadline {
      last = (try? screen()) ?? last
      if done(last) { return last }
      usleep(30_000)
    }
    throw RecordFailed(message: "timed out waiting for the screen \(what):\n\(last)")
  }

  /// Sends a key and waits until the status line shows event `n`.
  @discardableResult
  func act(_ key: String, event n: Int) throws -> String {
    try keys(key)
    return try waitForScreen("[event \(n)]") { $0.contains("[event \(n)] ") }
  }

  /// The visible rows on a screen: item id and whether the cursor is on it.
  static func rows(_ screen: String) -> [(id: String, cursor: Bool)] {
    screen.lines.compactMap { line in
      guard line.count > 4, line.dropFirst(2).hasPrefix("  ") else { return nil }
      var text = line.dropFirst(2).drop { $0 == " " }
      if text.hasPrefix("▸ ") || text.hasPrefix("▾ ") { text = text.dropFirst(2) }
      var id = String(text.components(separatedBy: "  ")[0])
      if id.hasSuffix(" ✓") { id = String(id.dropLast(2)) }
      return (id, line.hasPrefix(">"))
    }
  }

  func waitForCursor(_ id: String) throws {
    try waitForScreen("cursor on \(id)") { screen in
      Self.rows(screen).contains { $0.id == id && $0.cursor }
    }
  }

  /// Moves the cursor with j/k to the row showing `id`.
  func moveCursor(to id: String) throws {
    let rows = Self.rows(try screen())
    guard let target = rows.firstIndex(where: { $0.id == id }),
      let at = rows.firstIndex(where: { $0.cursor })
    else { throw RecordFailed(message: "no row \(id) or no cursor on screen") }
    if target != at {
      try tmux(
        ["send-keys", "-t", "demo"]
          + Array(repeating: target > at ? "j" : "k", count: abs(target - at)))
    }
    try waitForCursor(id)
  }

  /// Quits with q, waits for the demo to end (the log is then closed), and checks that
  /// `listtape show LOG` prints exactly the list that was on `screen`.
  func quitAndCompare(_ screen: String) throws {
    try keys("q")
    let deadline = Date().addingTimeInterval(Self.timeout)
    while (try? tmux(["has-session", "-t", "demo"])) != nil {
      guard Date() < deadline else { throw RecordFailed(message: "the demo did not quit") }
      usleep(30_000)
    }
    let show = try CLI.run(["show", log])
    #expect(show.code == 0)
    #expect(Self.body(ofScreen: screen) == Self.body(ofShow: show.out))
  }

  /// The list area of the screen without the cursor gutter: between the title line and the
  /// status line.
  static func body(ofScreen screen: String) -> [String] {
    let lines = screen.lines.map(String.init)
    let end = lines.firstIndex { $0.hasPrefix("[event ") } ?? lines.count
    return trimmed(lines[1..<end].map { String($0.dropFirst(2)) })
  }

  /// `show`'s text after its header line.
  static func body(ofShow text: String) -> [String] {
    trimmed(text.lines.dropFirst().map(String.init))
  }

  private static func trimmed(_ lines: [String]) -> [String] {
    var out = lines.map { String($0.reversed().drop { $0 == " " }.reversed()) }
    while out.last?.isEmpty == true { out.removeLast() }
    return out
  }

  /// The demo's process id (a child of the pane's shell).
  func demoPID() throws -> pid_t {
    let shell = try tmux(["display-message", "-p", "-t", "demo", "#{pane_pid}"])
      .trimmingCharacters(in: .whitespacesAndNewlines)
    let children = try String(
      contentsOfFile: "/proc/\(shell)/task/\(shell)/children", encoding: .utf8)
    guard let pid = children.split(separator: " ").first.flatMap({ pid_t($0) }) else {
      throw RecordFailed(message: "no demo process under the pane's shell \(shell)")
    }
    return pid
  }

  /// Ends the tmux server, whatever state the test left it in, and removes its socket file
  /// (tmux leaves it behind).
  func stop() {
    _ = try? tmux(["kill-server"])
    if let socket, !socket.isEmpty { try? FileManager.default.removeItem(atPath: socket) }
  }
}

#endif
