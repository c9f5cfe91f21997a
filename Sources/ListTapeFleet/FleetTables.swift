import ListTapeInvestigate
import ListTapeParquet

/// The columns of the two tables `listtape export --parquet` writes (docs/fleet.md): one row
/// per event of every log, and one row per log.
package enum FleetTables {
  /// `events.parquet`: an event, what it names, its fault, and the list after it.
  package static let events: [ParquetColumn] = [
    ParquetColumn("log", .string),
    ParquetColumn("event", .int64),
    ParquetColumn("time", .timestampMillis, .optional),
    ParquetColumn("op", .string),
    ParquetColumn("section", .string, .optional),
    ParquetColumn("parent", .string, .optional),
    ParquetColumn("anchor", .string, .optional),
    ParquetColumn("ids", .string, .list),
    ParquetColumn("fault", .string, .optional),
    ParquetColumn("reason", .string, .optional),
    ParquetColumn("label", .string, .optional),
    ParquetColumn("sections", .int32),
    ParquetColumn("items", .int32),
    ParquetColumn("visible", .int32),
    ParquetColumn("selected", .int32),
    ParquetColumn("depth", .int32, .optional),
    ParquetColumn("exact", .bool),
  ]

  /// Column numbers of `events`.
  enum Event {
    static let log = 0
    static let event = 1
    static let time = 2
    static let op = 3
    static let section = 4
    static let parent = 5
    static let anchor = 6
    static let ids = 7
    static let fault = 8
    static let reason = 9
    static let label = 10
    static let sections = 11
    static let items = 12
    static let visible = 13
    static let selected = 14
    static let depth = 15
    static let exact = 16
  }

  /// `sessions.parquet`: a log's counts (as `listtape stats` gives them), its damage, and
  /// the list at its end.
  package static let sessions: [ParquetColumn] =
    [
      ParquetColumn("log", .string),
      ParquetColumn("events", .int64),
      ParquetColumn("faults", .int64),
    ]
    + FaultKind.allCases.map { ParquetColumn("faults_\($0.rawValue)", .int64) }
    + [
      ParquetColumn("marks", .int64),
      ParquetColumn("first_time", .timestampMillis, .optional),
      ParquetColumn("last_time", .timestampMillis, .optional),
      ParquetColumn("bytes", .int64),
      ParquetColumn("format", .int32),
      ParquetColumn("damaged", .bool),
      ParquetColumn("damage", .string, .optional),
      ParquetColumn("lost_events", .int64),
      ParquetColumn("sections", .int32),
      ParquetColumn("items", .int32),
      ParquetColumn("visible", .int32),
      ParquetColumn("selected", .int32),
      ParquetColumn("depth", .int32, .optional),
    ]
}
