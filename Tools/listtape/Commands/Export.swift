import ListTapeInvestigate
import ListTapeRead
import ListTapeStore

/// `listtape export LOG --at N --swift`: Swift source that rebuilds a state;
/// `listtape export LOG... --parquet -o OUT`: Parquet tables of many logs (ExportParquet).
enum ExportCommand: Command {
  struct Arguments: ParsableArguments {
    var logs: [String] = []
    var at: Point?
    var swift = false
    var parquet = false
    var output: String?
    var force = false
    var rowGroupRows: Int?
    var json = false
  }

  static let spec = CommandSpec<Arguments>(
    name: "export",
    abstract: "Print Swift source for a state, or write logs as Parquet tables.",
    discussion: """
      --swift prints a function that applies the state to a \
      UICollectionViewDiffableDataSource<String, String> with Apple's API: an \
      NSDiffableDataSourceSnapshot for the sections, one NSDiffableDataSourceSectionSnapshot \
      per section (appends, then expansion), and the items to select. Paste it into a unit \
      or UI test that reproduces the bug. It takes one log; with -o the source goes to a file \
      (or a pipe or device) instead of standard output.

      --parquet -o OUT writes the logs (files, or directories of .ltape files) as two \
      tables in a new directory OUT: events.parquet, one row per event (the log, event \
      number, time, op, what it names, its fault, and the list's counts after it), and \
      sessions.parquet, one row per log (events, faults by kind, marks, time span, bytes, \
      format, damage); columns in docs/fleet.md. Pyarrow, DuckDB, ClickHouse and Spark read \
      them. A damaged log is exported up to the damage, with a warning; a file that is not a \
      log is skipped with a warning when others are exported, and nothing is written when \
      none can be read. OUT appears only once complete.

      Exit status: 0 written; 2 some log damaged, unreadable or not a log; 73 OUT exists \
      (--force replaces the two files in an existing directory); 66 no such log.
      """,
    arguments: [.logs(\.logs)],
    options: [
      .at(\.at),
      .flag(\.swift, "swift", help: "Print Swift source (UIKit's diffable data source)."),
      .flag(\.parquet, "parquet", help: "Write Parquet tables into the directory -o names."),
      .output(
        \.output, value: "out",
        help: "--parquet: the directory to create; --swift: a file ('-': standard output)."),
      .flag(
        \.force, "force",
        help: "Replace an existing file (--swift) or the tables in a directory (--parquet)."),
      .option(
        \.rowGroupRows, "row-group-rows", value: "n",
        help: "Events per row group of events.parquet (--parquet).", defaultText: "131072",
        valid: 1...Int(Int32.max)),
      .flag(\.json, "json", help: "Print what was written as a JSON object (--parquet)."),
    ])

  static func run(_ arguments: Arguments, _ io: IO) throws(CLIError) -> Int32 {
    switch (arguments.swift, arguments.parquet) {
    case (true, true):
      throw usageError("'--swift' and '--parquet' cannot be used together")
    case (false, false):
      throw usageError("Missing '--swift' or '--parquet': the format to export")
    case (false, true):
      return try ExportParquet.run(arguments, io)
    case (true, false):
      break
    }
    guard arguments.rowGroupRows == nil, !arguments.json else {
      throw usageError("'--row-group-rows' and '--json' go with '--parquet'")
    }
    guard arguments.logs.count == 1, let path = arguments.logs.first else {
      throw usageError("'--swift' takes one log")
    }
    let output = try OutputFile.open(
      arguments.output ?? "-", force: arguments.force, content: .text, for: self)
    let timeline = try openTimeline(path)
    warnIfDamaged(timeline)
    let n = try resolve(arguments.at, in: timeline, for: self)
    let (state, exactness) = try replaying { () throws(StoreError) in
      try timeline.exactState(at: n)
    }
    let inexact = Failures.inexactState(exactness, event: n, timeline)
    if let inexact { Diagnostics.line("listtape: warning: \(inexact)") }
    try output.write(
      Array(SwiftExport.source(state, event: n, log: path, exact: inexact == nil).utf8))
    try output.commit()
    return timeline.readStoppedShort || inexact != nil ? ExitCode.damaged : ExitCode.success
  }
}
