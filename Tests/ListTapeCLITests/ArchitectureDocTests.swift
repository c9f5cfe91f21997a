import Foundation
import Testing

/// docs/architecture.md draws the module graph; its table of direct dependencies must be
/// the one Package.swift declares, target for target.
@Suite struct ArchitectureDocTests {
  /// `name → dependencies` of every target but the tests in Package.swift.
  static func packageGraph() throws -> [String: Set<String>] {
    let text = try String(
      contentsOf: CLI.packageRoot.appendingPathComponent("Package.swift"), encoding: .utf8)
    let declaration = try NSRegularExpression(
      pattern: #"\.(target|executableTarget|systemLibrary|testTarget)\("#)
    let starts = declaration.matches(in: text, range: NSRange(text.startIndex..., in: text))
      .compactMap { Range($0.range, in: text) }
    var graph: [String: Set<String>] = [:]
    for (i, start) in starts.enumerated() {
      let end = i + 1 < starts.count ? starts[i + 1].lowerBound : text.endIndex
      let piece = String(text[start.lowerBound..<end])
      guard !piece.hasPrefix(".testTarget"), let name = quoted(after: "name:", in: piece) else {
        continue
      }
      var deps: Set<String> = []
      if let open = piece.range(of: "dependencies:"),
        let close = piece[open.upperBound...].firstIndex(of: "]")
      {
        deps = Set(strings(in: String(piece[open.upperBound..<close])))
      }
      graph[name] = deps
    }
    return graph
  }

  /// `module → dependencies` from the table in docs/architecture.md.
  static func documentedGraph() throws -> [String: Set<String>] {
    let text = try String(
      contentsOf: CLI.packageRoot.appendingPathComponent("docs/architecture.md"),
      encoding: .utf8)
    var graph: [String: Set<String>] = [:]
    // The rows of the table headed `| module | what | depends on (Package.swift) |`.
    let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
    guard let header = lines.firstIndex(where: { $0.hasPrefix("| module |") }) else { return [:] }
    for line in lines[(header + 2)...].prefix(while: { $0.hasPrefix("|") }) {
      let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
      guard cells.count == 3, let name = strings(in: cells[0], quote: "`").first else { continue }
      graph[name] = Set(strings(in: cells[2], quote: "`"))
    }
    return graph
  }

  static func quoted(after key: String, in text: String) -> String? {
    guard let r = text.range(of: key) else { return nil }
    return strings(in: String(text[r.upperBound...])).first
  }

  static func strings(in text: String, quote: Character = "\"") -> [String] {
    text.split(separator: quote, omittingEmptySubsequences: false).enumerated()
      .filter { $0.offset % 2 == 1 }.map { String($0.element) }
  }

  @Test func theDocumentedGraphIsPackageSwifts() throws {
    let package = try Self.packageGraph()
    let documented = try Self.documentedGraph()
    #expect(!documented.isEmpty)
    for (module, deps) in documented {
      let declared = try #require(package[module], "\(module) is not a target of Package.swift")
      // The command line's row says "every module above but the C ones".
      if module == "listtape" { continue }
      #expect(
        deps == declared, "\(module): documented \(deps.sorted()), declared \(declared.sorted())")
    }
    for module in package.keys where module.hasPrefix("ListTape") || module.hasPrefix("C") {
      #expect(documented[module] != nil, "\(module) is missing from docs/architecture.md")
    }
  }

  /// What an app links changes nothing process-wide: no library spawns a process, runs a
  /// shell, installs a signal handler or ends the process; the command line does those.
  @Test func librariesLeaveTheProcessAlone() throws {
    let sources = CLI.packageRoot.appendingPathComponent("Sources")
    let files = try #require(FileManager.default.enumerator(atPath: sources.path))
      .compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") }
    #expect(files.count > 20)
    let forbidden = try NSRegularExpression(
      pattern: #"\bProcess\(|/bin/sh|[^.]\bsignal\(|\bsigaction\(|\bexit\(|\bposix_spawn"#)
    for file in files {
      let text = try String(
        contentsOf: sources.appendingPathComponent(file), encoding: .utf8)
      for line in text.split(separator: "\n")
      where !line.trimmingCharacters(in: .whitespaces)
        .hasPrefix("//")
      {
        let l = String(line)
        let hit = forbidden.firstMatch(in: l, range: NSRange(l.startIndex..., in: l))
        #expect(hit == nil, "Sources/\(file): \(l)")
      }
    }
  }
}
