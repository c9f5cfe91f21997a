import ListTapeInvestigate
import ListTapeStore

/// `listtape export LOG --at N --swift`: Swift source that rebuilds a state.
enum ExportCommand: Command {
  struct Arguments: ParsableArguments {
    var log = ""
    var at: Point?
    var swift = false
    var output: String?
    var force = false
  }

  static let spec = CommandSpec<Arguments>(
    name: "export",
    abstract: "Print Swift source that rebuilds the list as it was at an event.",
    discussion: """
      --swift prints a function that applies the state to a \
      UICollectionViewDiffableDataSource<String, String> with Apple's API: an \
      NSDiffableDataSourceSnapshot for the sections, one NSDiffableDataSourceSectionSnapshot \
      per section (appends, then expansion), and the items to select. Paste it into a unit \
      or UI test that reproduces the bug. --swift is required (the only format so far). \
      With -o the source goes to a file (or a pipe or device) instead of standard output.
      """,
    arguments: [.log(\.log)],
    options: [
      .at(\.at),
      .flag(
        \.swift, "swift", help: "Print Swift source (UIKit's diffable data source).",
        required: true),
      .output(\.output, value: "file", help: "Write the source here ('-': standard output)."),
      .force(\.force),
    ])

  static func run(_ arguments: Arguments, _ io: IO) throws(CLIError) -> Int32 {
    let output = try OutputFile.open(
      arguments.output ?? "-", force: arguments.force, content: .text, for: self)
    let path = arguments.log
    let timeline = try openTimeline(path)
    warnIfDamaged(timeline)
    let n = try resolve(arguments.at, in: timeline, for: self)
    let (state, exactness) = try replaying { () throws(StoreError) in
      try timeline.exactState(at: n)
    }
    let inexact = Failures.inexactState(exactness, event: n, timeline)
    if let inexact { Diagnostics.line("listtape: warning: \(inexact)") }
    try output.write(Array(SwiftExport.source(state, event: n, log: path).utf8))
    try output.commit()
    return timeline.readStoppedShort || inexact != nil ? ExitCode.damaged : ExitCode.success
  }
}
