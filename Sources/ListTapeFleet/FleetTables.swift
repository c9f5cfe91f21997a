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
    ParquetColumn("site", .string, .optional),
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
    static let site = 4
    static let section = 5
    static let parent = 6
    static let anchor = 7
    static let ids = 8
    static let fault = 9
    static let reason = 10
    static let label = 11
    static let sections = 12
    static let items = 13
    static let visible = 14
    static let selected = 15
    static let depth = 16
    static let exact = 17
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
