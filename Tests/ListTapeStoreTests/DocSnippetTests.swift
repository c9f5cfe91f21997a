import Foundation
import Testing

/// Every ```swift block of README.md, docs/*.md and the DocC articles compiles as it stands,
/// against the modules this build made, so a snippet an app developer pastes is one that
/// works. The rules, by kind of block:
///
/// - a manifest (`import PackageDescription`) is the `Package.swift` of an app next to a
///   checkout named `ListTape` (a symlink to this one), and SwiftPM resolves its product
///   dependencies: the package identity in the manifest line is checked too;
/// - a block of a DocC article is one step of the article: its blocks compile together;
/// - a block of docs/cli.md, which documents the command line's own code, compiles inside
///   that module (`@testable import listtape`);
/// - any other block compiles alone, as a program's main file (top-level `try` and `await`
///   allowed), in Swift 6 mode; `import UIKit` gets Tools/api/snippets/UIKit.swift, a
///   stand-in with Apple's signatures, on platforms without UIKit.
///
/// Linux only: it finds the build's modules where `swift test` puts them there.
@Suite struct DocSnippetTests {
  static let root = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

  /// The documents checked, relative to the root.
  static let documents: [String] = {
    let fm = FileManager.default
    var files = ["README.md"]
    let docs = (try? fm.contentsOfDirectory(atPath: root.appendingPathComponent("docs").path)) ?? []
    files += docs.filter { $0.hasSuffix(".md") }.sorted().map { "docs/\($0)" }
    for module in ["ListTapeModel", "ListTapeStore", "ListTapeInvestigate"] {
      let catalog = "Sources/\(module)/\(module).docc"
      let articles =
        (try? fm.contentsOfDirectory(atPath: root.appendingPathComponent(catalog).path)) ?? []
      files += articles.filter { $0.hasSuffix(".md") }.sorted().map { "\(catalog)/\($0)" }
    }
    return files
  }()

  /// One fenced block: where it starts (1-based line of its first code line) and its code.
  struct Block {
    var line: Int
    var code: String
  }

  /// The ```swift blocks of a Markdown text, indented ones (in list items) included.
  static func swiftBlocks(_ text: String) -> [Block] {
    var blocks: [Block] = []
    var open: (line: Int, indent: Int, lines: [String])?
    for (i, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
      let line = String(raw)
      let trimmed = line.drop { $0 == " " }
      if var block = open {
        if trimmed.hasPrefix("```") {
          blocks.append(Block(line: block.line, code: block.lines.joined(separator: "\n")))
          open = nil
        } else {
          block.lines.append(
            String(line.dropFirst(min(block.indent, line.prefix { $0 == " " }.count))))
          open = block
        }
      } else if trimmed.hasPrefix("```swift") {
        open = (i + 2, line.count - trimmed.count, [])
      }
    }
    return blocks
  }

  @Test func everyDocumentWithSwiftIsChecked() throws {
    let withSwift = try Self.documents.filter {
      !Self.swiftBlocks(
        try String(contentsOf: Self.root.appendingPathComponent($0), encoding: .utf8)
      )
      .isEmpty
    }
    #expect(withSwift.contains("README.md"))
    #expect(withSwift.contains("docs/recording.md"))
    #expect(withSwift.contains("docs/apple.md"))
    #expect(
      withSwift.contains("Sources/ListTapeStore/ListTapeStore.docc/RecordYourFirstSession.md"))
  }

  #if os(Linux)
  @Test(arguments: documents)
  func snippetsCompile(document: String) throws {
    let text = try String(contentsOf: Self.root.appendingPathComponent(document), encoding: .utf8)
    let blocks = Self.swiftBlocks(text)
    guard !blocks.isEmpty else { return }
    let work = FileManager.default.temporaryDirectory.appendingPathComponent(
      "listtape-snippets-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: work) }
    let compiler = try Compiler(work: work)

    if document.contains(".docc/") {
      let code = blocks.map(\.code).joined(separator: "\n\n")
      let problems = try compiler.check(code, name: "article")
      #expect(
        problems == nil, "\(document): the article's blocks do not compile:\n\(problems ?? "")")
      return
    }
    for (n, block) in blocks.enumerated() {
      let problems: String?
      if block.code.contains("import PackageDescription") {
        problems = try compiler.checkManifest(block.code)
      } else if document == "docs/cli.md" {
        problems = try compiler.check("@testable import listtape\n" + block.code, name: "cli\(n)")
      } else {
        problems = try compiler.check(block.code, name: "block\(n)")
      }
      #expect(
        problems == nil,
        "\(document):\(block.line): the snippet does not compile:\n\(problems ?? "")")
    }
  }
  #endif
}

#if os(Linux)
/// Runs the toolchain on snippets against this build's modules.
struct Compiler {
  let work: URL
  /// The build's products (`.build/debug`): `swift test` runs from there on Linux.
  let products = Bundle.main.bundleURL

  init(work: URL) throws {
    self.work = work
    let modules = products.appendingPathComponent("Modules/ListTapeStore.swiftmodule").path
    try #require(FileManager.default.fileExists(atPath: modules), "no built modules at \(modules)")
  }

  /// nil when `code` type-checks as a main file; else the compiler's output.
  func check(_ code: String, name: String) throws -> String? {
    let dir = work.appendingPathComponent(name)
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    let file = dir.appendingPathComponent("main.swift")
    try code.write(to: file, atomically: true, encoding: .utf8)
    var arguments = [
      "swiftc", "-typecheck", "-swift-version", "6", "-I",
      products.appendingPathComponent("Modules").path,
      "-Xcc",
      "-fmodule-map-file=\(DocSnippetTests.root.path)/Sources/CListTapeZlib/module.modulemap",
      "-Xcc",
      "-fmodule-map-file=\(DocSnippetTests.root.path)/Sources/CListTapePrefetch/include/module.modulemap",
      "-Xcc",
      "-fmodule-map-file=\(DocSnippetTests.root.path)/Sources/CListTapeCRC/include/module.modulemap",
    ]
    if code.contains("import UIKit") {
      let stub = dir.appendingPathComponent("UIKit.swiftmodule").path
      let source = DocSnippetTests.root.appendingPathComponent("Tools/api/snippets/UIKit.swift")
        .path
      if let problems = try run(
        [
          "swiftc", "-emit-module", "-module-name", "UIKit", "-parse-as-library", "-swift-version",
          "6", source, "-emit-module-path", stub,
        ], in: dir)
      {
        return "the UIKit stand-in does not compile:\n" + problems
      }
      arguments += ["-I", dir.path]
    }
    return try run(arguments + [file.path], in: dir)
  }

  /// nil when the manifest resolves as an app's `Package.swift` beside a checkout named
  /// `ListTape`; else SwiftPM's output.
  func checkManifest(_ manifest: String) throws -> String? {
    let fm = FileManager.default
    try fm.createSymbolicLink(
      at: work.appendingPathComponent("ListTape"), withDestinationURL: DocSnippetTests.root)
    let app = work.appendingPathComponent("MyApp")
    let sources = app.appendingPathComponent("Sources/MyApp")
    try fm.createDirectory(at: sources, withIntermediateDirectories: true)
    try manifest.write(
      to: app.appendingPathComponent("Package.swift"), atomically: true, encoding: .utf8)
    try "import ListTapeStore\n".write(
      to: sources.appendingPathComponent("MyApp.swift"), atomically: true, encoding: .utf8)
    return try run(["swift", "package", "show-dependencies"], in: app)
  }

  /// nil when the command succeeds; else its output.
  private func run(_ arguments: [String], in directory: URL) throws -> String? {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = arguments
    process.currentDirectoryURL = directory
    let output = Pipe()
    process.standardOutput = output
    process.standardError = output
    try process.run()
    let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    return process.terminationStatus == 0 ? nil : text
  }
}
#endif
