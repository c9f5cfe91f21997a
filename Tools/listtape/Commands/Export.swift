import ListTapeInvestigate
import ListTapeStore

/// `listtape export LOG --at N --swift`: Swift source that rebuilds a state.
enum ExportCommand: Command {
  struct Arguments: ParsableArguments {
    var log = ""
    var at: Point?
    var swift = false
  }

  static let spec = CommandSpec<Arguments>(
    name: "export",
    abstract: "Print Swift source that rebuilds the list as it was at an event.",
    discussion: """
      --swift prints a function that applies the state to a \
      UICollectionViewDiffableDataSource<String, String> with Apple's API: an \
      NSDiffableDataSourceSnapshot for the sections, one NSDiffableDataSourceSectionSnapshot \
      per section (appends, then expansion), and the items to select. Paste it into a unit \
      or UI test that reproduces the bug. --swift is required (the only format so far).
      """,
    arguments: [.log(\.log)],
    options: [
      .at(\.at),
      .flag(\.swift, "swift", help: "Print Swift source (UIKit's diffable data source)."),
    ])

  static func run(_ arguments: Arguments, _ io: IO) throws(CLIError) -> Int32 {
    guard arguments.swift else {
      throw usageError("Missing '--swift': the format to export (the only one)")
    }
    let path = arguments.log
    let timeline = try openTimeline(path)
    warnIfDamaged(timeline)
    let n = try resolve(arguments.at, in: timeline, for: self)
    let state = try replaying { () throws(StoreError) in try timeline.state(at: n) }
    io.out.write(SwiftExport.source(state, event: n, log: path))
    return ExitCode.success
  }
}
