import Foundation
import ListTapeModel
import ListTapeSamples
import Testing

/// Runs a program with arguments and standard input, through files, killing it after
/// `seconds`.
func runTool(
  _ executable: String, _ args: [String], input: Data = Data(), seconds: Double = 60
) throws -> RunResult {
  let dir = try TempDir()
  let inURL = dir.url.appendingPathComponent("stdin")
  let outURL = dir.url.appendingPathComponent("stdout")
  let errURL = dir.url.appendingPathComponent("stderr")
  try input.write(to: inURL)
  _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
  _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
  let process = Process()
  process.executableURL = URL(fileURLWithPath: executable)
  process.arguments = args
  process.standardInput = try FileHandle(forReadingFrom: inURL)
  process.standardOutput = try FileHandle(forWritingTo: outURL)
  process.standardError = try FileHandle(forWritingTo: errURL)
  try process.run()
  guard waitForExit(process, seconds: seconds) else {
    throw RecordFailed(message: "\(executable) \(args) hung")
  }
  return RunResult(
    out: String(decoding: try Data(contentsOf: outURL), as: UTF8.self),
    err: String(decoding: try Data(contentsOf: errURL), as: UTF8.self),
    code: process.terminationStatus)
}

/// The HTML viewer's reducer module (Tools/wasm): built from the sources once per test run
/// by `Tools/wasm/build.sh`, or taken from `LISTTAPE_WASM` when `.ci/run` has just built and
/// checked it.
enum ViewerWasm {
  static let built: Result<String, RecordFailed> = {
    if let path = ProcessInfo.processInfo.environment["LISTTAPE_WASM"], !path.isEmpty {
      return .success(path)
    }
    let out = CLI.packageRoot.appendingPathComponent(".build/wasm-tests").path
    do {
      let r = try runTool(
        "/bin/bash", [CLI.packageRoot.path + "/Tools/wasm/build.sh", out], seconds: 900)
      guard r.code == 0 else {
        return .failure(RecordFailed(message: "build.sh exited \(r.code): \(r.err)"))
      }
    } catch {
      return .failure(error as? RecordFailed ?? RecordFailed(message: "\(error)"))
    }
    return .success(out + "/listtape-viewer.wasm")
  }()

  static func module() throws -> String { try built.get() }

  /// The module the `listtape` binary embeds: the base64 in the generated source.
  static func checkedIn() throws -> Data {
    let source = try String(
      contentsOf: CLI.packageRoot.appendingPathComponent("Tools/listtape/HTML/ViewerModule.swift"),
      encoding: .utf8)
    let body = source.components(separatedBy: "\"\"\"")
    guard body.count == 3,
      let data = Data(base64Encoded: body[1], options: .ignoreUnknownCharacters)
    else { throw RecordFailed(message: "no base64 block in ViewerModule.swift") }
    return data
  }

  static var wasmkit: String? {
    findTool("wasmkit")
      ?? findTool("swift").map {
        URL(fileURLWithPath: $0).resolvingSymlinksInPath().deletingLastPathComponent().path
          + "/wasmkit"
      }
  }

  /// What the module's command-line check prints for `lines` under `wasmkit run`. The
  /// interpreter's own stack is raised from its default, which cannot hold the JSON parser's
  /// 512 levels (a browser's can).
  static func transcript(_ lines: [String]) throws -> [String] {
    guard let tool = wasmkit else { throw RecordFailed(message: "no wasmkit") }
    let input = Data((lines.joined(separator: "\n") + "\n").utf8)
    let r = try runTool(
      tool, ["run", "--stack-size", "8388608", try module()], input: input, seconds: 600)
    guard r.code == 0 else { throw RecordFailed(message: "wasmkit exited \(r.code): \(r.err)") }
    return r.out.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(
      String.init)
  }
}

/// The transcripts the module's check and the page's `#check` write, made by the native
/// reducer: per event `ok`, `fault: op: …` or `malformed: …`, then the state JSON or its
/// FNV-1a 32 (`#hash`), only every Nth event (`#every N`); `#reset` empties the list.
enum NativeTranscript {
  static func of(_ lines: [String]) -> [String] {
    var out: [String] = []
    var state = ListState()
    var n = 0
    var hashing = false
    var every = 1
    for line in lines where !line.isEmpty {
      if line == "#reset" {
        state = ListState()
        n = 0
        continue
      }
      if line == "#hash" {
        hashing = true
        continue
      }
      if line.hasPrefix("#every ") {
        every = max(1, Int(line.dropFirst(7)) ?? 1)
        continue
      }
      n += 1
      out.append(outcome(line, &state))
      if n % every == 0 {
        let json = state.json(event: n)
        out.append(hashing ? hash(json) : json)
      }
    }
    return out
  }

  static func outcome(_ line: String, _ state: inout ListState) -> String {
    let event: Event
    do {
      event = try Event(jsonLine: line)
    } catch {
      return "malformed: \(error.message)"
    }
    do throws(ListFault) {
      try state.apply(event)
      return "ok"
    } catch {
      return "fault: \(event.op): \(error)"
    }
  }

  /// FNV-1a 32 of the UTF-8, eight hex digits.
  static func hash(_ text: String) -> String {
    var h: UInt32 = 0x811c_9dc5
    for b in text.utf8 { h = (h ^ UInt32(b)) &* 0x0100_0193 }
    let hex = String(h, radix: 16)
    return String(repeating: "0", count: 8 - hex.count) + hex
  }

  /// Nil when equal, else where the first difference is, with the input line behind it.
  static func firstDifference(_ a: [String], _ b: [String]) -> String? {
    for i in 0..<max(a.count, b.count)
    where a.indices.contains(i) != b.indices.contains(i)
      || (a.indices.contains(i) && a[i] != b[i])
    {
      let x = a.indices.contains(i) ? a[i] : "<end>"
      let y = b.indices.contains(i) ? b[i] : "<end>"
      return "line \(i + 1): wasm \(x.prefix(300))\n  native \(y.prefix(300))"
    }
    return nil
  }
}

/// The event lines of the model's conformance tests (Tests/ListTapeModelTests/
/// ConformanceTests.swift): one session per test, its string literals' lines (raw, multi-line,
/// and plain ones without escapes) after the shared `base` session. Lines that are not events
/// are kept: they must be malformed in the same words.
enum ConformanceCorpus {
  static func sessions() throws -> [[String]] {
    let text = try String(
      contentsOf: CLI.packageRoot.appendingPathComponent(
        "Tests/ListTapeModelTests/ConformanceTests.swift"),
      encoding: .utf8)
    var chunks = text.components(separatedBy: "@Test")
    let base = literals(in: chunks.removeFirst())
    return [base] + chunks.map { base + literals(in: $0) }
  }

  static func literals(in code: String) -> [String] {
    var out: [String] = []
    var lines = code.split(separator: "\n")[...]
    while let line = lines.popFirst() {
      let trimmed = line.trimmingCharacters(in: .whitespaces)
      if trimmed.hasSuffix("\"\"\"") && trimmed.components(separatedBy: "\"\"\"").count == 2 {
        while let inner = lines.popFirst() {
          let text = inner.trimmingCharacters(in: .whitespaces)
          if text.hasPrefix("\"\"\"") { break }
          out.append(text)
        }
        continue
      }
      out += singleLine(trimmed)
    }
    return out
  }

  /// `#"…"#` literals, and `"…"` ones without a backslash, on one line of code.
  static func singleLine(_ line: String) -> [String] {
    var out: [String] = []
    var rest = Substring(line)
    while let quote = rest.firstIndex(of: "\"") {
      let raw = quote > rest.startIndex && rest[rest.index(before: quote)] == "#"
      let after = rest[rest.index(after: quote)...]
      guard let end = raw ? after.range(of: "\"#")?.lowerBound : after.firstIndex(of: "\"")
      else { break }
      let literal = after[..<end]
      if raw || !literal.contains("\\") { out.append(String(literal)) }
      rest = after[after.index(end, offsetBy: raw ? 2 : 1)...]
    }
    return out
  }
}

/// Random sessions for the comparisons: `listtape generate` sessions (edits, faults, marks,
/// batches), one with its events shuffled locally (many faults of every kind), one opening
/// with a UUID-keyed outline large enough to grow the id tables, and a deep chain.
enum RandomSessions {
  static func generated(seed: Int, events: Int, extra: [String] = []) throws -> [String] {
    let r = try CLI.run(
      ["generate", "--events", "\(events)", "--seed", "\(seed)", "--max-items", "300"] + extra)
    guard r.code == 0 else { throw RecordFailed(message: "generate: \(r.err)") }
    return r.out.split(separator: "\n").map(String.init)
  }

  static func shuffled(_ lines: [String], seed: UInt64) -> [String] {
    var rng = SplitMix64(seed: seed)
    var out = lines
    for i in out.indices {
      let j = min(out.count - 1, i + Int(rng.next() % 8))
      out.swapAt(i, j)
    }
    return out
  }

  /// Items nested `depth` levels by one event each, expanded, the deepest selected, then
  /// one event carrying the whole chain as nested JSON (past the parser's depth limit).
  static func deepChain(depth: Int) -> [String] {
    var lines = [
      #"{"op":"appendSections","sections":["deep"]}"#, #"{"op":"appendItems","items":["d0"]}"#,
    ]
    for i in 1..<depth {
      lines.append(#"{"op":"appendItems","parent":"d\#(i - 1)","items":["d\#(i)"]}"#)
    }
    lines.append(
      #"{"op":"expand","items":[\#((0..<depth).map { "\"d\($0)\"" }.joined(separator: ","))]}"#)
    lines.append(#"{"op":"select","items":["d\#(depth - 1)"]}"#)
    lines.append(#"{"op":"collapse","items":["d\#(depth / 2)"]}"#)
    var nested = #""leaf""#
    for i in 0..<depth { nested = #"{"id":"n\#(i)","expanded":true,"children":[\#(nested)]}"# }
    lines.append(#"{"op":"appendItems","section":"deep","items":[\#(nested)]}"#)
    return lines
  }

  static func all() throws -> [String] {
    var lines = ["#hash", "#every 3"]
    for seed in 1...3 {
      lines += ["#reset"] + (try generated(seed: seed, events: 900))
    }
    lines += ["#reset"] + shuffled(try generated(seed: 4, events: 900), seed: 4)
    lines += ["#reset", "#every 50"]
    lines += try generated(
      seed: 5, events: 400, extra: ["--outline", "3000", "--shape", "uuid"])
    lines += ["#reset", "#every 1"] + deepChain(depth: 300)
    return lines
  }
}

@Suite(.serialized)
struct WasmReducerTests {
  /// The module `listtape html` embeds is the one the sources build (CI also checks this
  /// with `Tools/wasm/build.sh --check` before the tests).
  @Test func checkedInModuleMatchesTheSources() throws {
    let built = try Data(contentsOf: URL(fileURLWithPath: try ViewerWasm.module()))
    #expect(built.count > 1000)
    #expect(built.prefix(4) == Data([0x00, 0x61, 0x73, 0x6D]))
    #expect(
      try ViewerWasm.checkedIn() == built,
      "Tools/listtape/HTML/ViewerModule.swift is stale: run bash Tools/wasm/build.sh --update")
  }

  /// Every line of the conformance tests, folded by the module under `wasmkit run` and by
  /// the native reducer: the same outcome (fault and malformed messages included) and the
  /// same state JSON after every line.
  @Test(.enabled(if: ViewerWasm.wasmkit != nil, "wasmkit is not in the toolchain"))
  func wasmFoldMatchesNativeOnTheConformanceCorpus() throws {
    let sessions = try ConformanceCorpus.sessions()
    let lines = sessions.flatMap { ["#reset"] + $0 }
    let native = NativeTranscript.of(lines)
    // The corpus is what the conformance tests exercise, not a handful of lines.
    #expect(sessions.count >= 15)
    #expect(native.count(where: { $0 == "ok" }) >= 100)
    #expect(native.count(where: { $0.hasPrefix("fault: ") }) >= 30)
    #expect(native.count(where: { $0.hasPrefix("malformed: ") }) >= 40)
    let wasm = try ViewerWasm.transcript(lines)
    let difference = NativeTranscript.firstDifference(wasm, native)
    #expect(difference == nil, "\(difference ?? "")")
  }

  @Test(.enabled(if: ViewerWasm.wasmkit != nil, "wasmkit is not in the toolchain"))
  func wasmFoldMatchesNativeOnRandomSessions() throws {
    let lines = try RandomSessions.all()
    let native = NativeTranscript.of(lines)
    #expect(native.count(where: { $0.hasPrefix("fault: ") }) >= 200)
    #expect(native.contains { $0.hasPrefix("malformed: ") && $0.contains("nesting deeper than") })
    let wasm = try ViewerWasm.transcript(lines)
    let difference = NativeTranscript.firstDifference(wasm, native)
    #expect(difference == nil, "\(difference ?? "")")
  }
}
