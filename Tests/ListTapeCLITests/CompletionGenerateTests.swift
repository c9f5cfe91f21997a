import Foundation
import ListTapeModel
import Testing

@Suite struct CompletionGenerateTests {
  private func shellAccepts(_ shell: String, _ script: String) throws -> Bool? {
    guard FileManager.default.isExecutableFile(atPath: shell) else { return nil }
    let dir = try TempDir()
    let file = dir.url.appendingPathComponent("script")
    try Data(script.utf8).write(to: file)
    let process = Process()
    process.executableURL = URL(fileURLWithPath: shell)
    process.arguments = ["-n", file.path]
    try process.run()
    process.waitUntilExit()
    return process.terminationStatus == 0
  }

  @Test func bash() throws {
    let r = try CLI.run(["completion", "bash"])
    #expect(r.code == 0)
    #expect(r.out.contains("complete -o filenames -o bashdefault -F _listtape listtape"))
    for c in ["record", "show", "replay", "events", "verify", "stats"] {
      #expect(r.out.contains("    \(c))\n"))
    }
    #expect(
      r.out.contains(
        #"--color) COMPREPLY=($(compgen -W "always never auto" -- "$cur")); return ;;"#))
    #expect(try shellAccepts("/bin/bash", r.out) != false)
  }

  @Test func zsh() throws {
    let r = try CLI.run(["completion", "zsh"])
    #expect(r.code == 0)
    #expect(r.out.hasPrefix("#compdef listtape\n"))
    #expect(
      r.out.contains(
        "'--at[An event number N (0 is the empty list), mark LABEL (the first mark with that label) or time ISO8601 (the last event at or before that time)]:point:'"
      ))
    #expect(
      r.out.contains(
        "'--fsync[When to force events to disk  after every write, once a second, or only at the end]:mode:(always interval never)'"
      ))
    #expect(try shellAccepts("/usr/bin/zsh", r.out) != false)
  }

  @Test func generateIsDeterministic() throws {
    let a = try CLI.run(["generate", "--events", "2000", "--seed", "7"])
    #expect(a.code == 0)
    let lines = a.out.lines.filter { !$0.isEmpty }
    #expect(lines.count == 2000)
    for line in lines.prefix(200) { _ = try Event(jsonLine: String(line)) }
    #expect(try CLI.run(["generate", "--events", "2000", "--seed", "7"]).out == a.out)
    #expect(try CLI.run(["generate", "--events", "2000", "--seed", "8"]).out != a.out)
  }

  @Test func generatedSessionRecordsAndReplays() throws {
    let dir = try TempDir()
    let gen = try CLI.run(["generate", "--events", "5000"])
    let path = dir.path("big.ltape")
    let rec = try CLI.run(["record", path], input: Data(gen.out.utf8))
    #expect(rec.code == 0)
    #expect(rec.err.contains("recorded 5,000 events"))
    let replay = try CLI.run(["replay", path])
    #expect(replay.code == 0 || replay.code == 3)
    #expect(replay.out.contains("replayed 5,000 events"))
  }
}
