import Foundation
import ListTapeFleet
import ListTapeInvestigate
import ListTapeJSON
import ListTapeParquet
import ListTapeRead
import ListTapeStore

/// `listtape export LOG... --parquet -o OUT`: the logs as `events.parquet` and
/// `sessions.parquet` in a new directory, written aside and moved into place when complete.
enum ExportParquet {
  static func run(_ arguments: ExportCommand.Arguments, _ io: IO) throws(CLIError) -> Int32 {
    guard arguments.at == nil else {
      throw ExportCommand.usageError("'--at' goes with '--swift'; '--parquet' exports every event")
    }
    guard let output = arguments.output else {
      throw ExportCommand.usageError("Missing '-o, --output <out>': the directory to create")
    }
    guard output != "-" else {
      throw ExportCommand.usageError(
        "'--parquet' writes two files into a directory; '-o -' (standard output) cannot hold them")
    }
    let (files, missing) = try openable(arguments.logs)
    let replacing = try checkOutput(output, force: arguments.force)
    // Ctrl-C or SIGTERM from here removes the staging directory (and exits 130 or 143).
    let partial = PartialOutputs.shared.add(stagingPath(for: output))
    defer { PartialOutputs.shared.forget(partial) }
    let staging = try makeStaging(for: output)
    var options = ParquetOptions()
    options.createdBy = "listtape version \(CLI.version)"
    if let rows = arguments.rowGroupRows { options.rowGroupRows = rows }
    var problems = missing.count
    var exported: [SessionSummary] = []
    var skipped: [(path: String, reason: String)] = []
    for problem in missing {
      skipped.append((problem.path, Failures.message(problem)))
      Diagnostics.line("listtape: warning: skipped \(problem.path): \(Failures.message(problem))")
    }
    do throws(CLIError) {
      let export: FleetExport
      do {
        export = try FleetExport(directory: staging, options: options, describe: Failures.message)
      } catch {
        throw CLIError.failure("\(error)", code: ExitCode.cannotCreate)
      }
      if let path = files.first, files.count == 1 {
        // One log named alone that cannot be read: its error, and nothing written.
        let timeline = try openTimeline(path)
        warnIfDamaged(timeline)
        let progress = Progress("exporting", events: timeline.eventCount)
        do {
          exported.append(try export.add(timeline, as: path, progress: progress.update))
        } catch {
          throw CLIError.failure("\(error)", code: ExitCode.io)
        }
        progress.finish()
      } else {
        // Several: one log per core, each warned about as it is opened and reported as it
        // is done (the order of the paths, as far as the workers keep it).
        let notes = Notes()
        let logsProgress = LogsProgress("exporting", total: files.count)
        do {
          try export.add(
            files, workers: ProcessInfo.processInfo.activeProcessorCount,
            open: { path throws(StoreError) in
              let timeline = try Timeline(path: path)
              notes.set(path, Failures.warnings(timeline))
              return timeline
            },
            report: { i, result in
              logsProgress.finish()
              switch result {
              case .failure(let error):
                skipped.append((files[i], Failures.message(error)))
                Diagnostics.line(
                  "listtape: warning: skipped \(files[i]): \(Failures.message(error))")
              case .success(let summary):
                for note in notes.take(files[i]) { Diagnostics.line("listtape: warning: \(note)") }
                exported.append(summary)
              }
              logsProgress.step()
            })
        } catch {
          throw CLIError.failure("\(error)", code: ExitCode.io)
        }
        problems += skipped.count - missing.count
      }
      for summary in exported {
        if let error = summary.undecodable {
          Diagnostics.line(
            "listtape: warning: exported events 1...\(summary.events) of \(summary.log) only: "
              + Failures.message(error))
        }
        // The damaged-log policy (docs/cli.md): a log that lost events in a salvage is
        // exported with a warning and counts as damaged, as `stats` counts it.
        if summary.damaged || summary.lostEvents > 0 { problems += 1 }
      }
      guard !exported.isEmpty else {
        throw CLIError.failure(
          "no log could be read; nothing written to \(output)", code: ExitCode.damaged)
      }
      do {
        try export.close()
      } catch {
        throw CLIError.failure("\(error)", code: ExitCode.io)
      }
      try PartialOutputs.shared.placing { () throws(CLIError) in
        try moveIntoPlace(staging, output, replacing: replacing)
        PartialOutputs.shared.forgetLocked(partial)
      }
    } catch {
      try? FileManager.default.removeItem(atPath: staging)
      throw error
    }
    report(exported, skipped: skipped, output: output, json: arguments.json, io)
    return problems > 0 ? ExitCode.damaged : ExitCode.success
  }

  /// The warnings of each log as the workers open them, until its report prints them.
  final class Notes: @unchecked Sendable {
    private let lock = NSLock()
    private var notes: [String: [String]] = [:]

    func set(_ path: String, _ list: [String]) {
      lock.lock()
      defer { lock.unlock() }
      notes[path] = list
    }

    func take(_ path: String) -> [String] {
      lock.lock()
      defer { lock.unlock() }
      return notes.removeValue(forKey: path) ?? []
    }
  }

  /// Refuses an existing OUT (73) unless `force` and it is a directory; returns whether
  /// OUT exists (and so has its tables replaced).
  static func checkOutput(_ output: String, force: Bool) throws(CLIError) -> Bool {
    var isDirectory: ObjCBool = false
    let exists = FileManager.default.fileExists(atPath: output, isDirectory: &isDirectory)
    let dangling =
      !exists && (try? FileManager.default.destinationOfSymbolicLink(atPath: output)) != nil
    guard exists || dangling else { return false }
    guard force else {
      throw .failure(
        "\(output) already exists; export writes a new directory (remove it, choose another "
          + "name, or pass --force to replace its tables)", code: ExitCode.cannotCreate)
    }
    guard exists && isDirectory.boolValue else {
      throw .failure(
        "\(output) exists and is not a directory; --force replaces the tables in a directory",
        code: ExitCode.cannotCreate)
    }
    return true
  }

  /// Where `makeStaging(for:)` makes its directory.
  static func stagingPath(for output: String) -> String {
    let url = URL(fileURLWithPath: output)
    let parent = url.deletingLastPathComponent().path
    return parent + "/." + url.lastPathComponent + ".partial-"
      + String(ProcessInfo.processInfo.processIdentifier)
  }

  /// A fresh directory beside OUT (the same file system, so the tables move in by rename).
  static func makeStaging(for output: String) throws(CLIError) -> String {
    let staging = stagingPath(for: output)
    do {
      try? FileManager.default.removeItem(atPath: staging)
      try FileManager.default.createDirectory(atPath: staging, withIntermediateDirectories: false)
    } catch {
      throw .failure(
        "cannot create \(output): \((error as NSError).localizedDescription)",
        code: ExitCode.cannotCreate)
    }
    return staging
  }

  /// Renames the staging directory to OUT, or its tables into an existing OUT.
  static func moveIntoPlace(_ staging: String, _ output: String, replacing: Bool)
    throws(CLIError)
  {
    func fail(_ what: String) -> CLIError {
      .failure("cannot move the tables into \(output): \(what)", code: ExitCode.io)
    }
    if replacing {
      for name in [FleetExport.eventsFile, FleetExport.sessionsFile] {
        guard rename(staging + "/" + name, output + "/" + name) == 0 else {
          throw fail(String(cString: strerror(errno)))
        }
      }
      try? FileManager.default.removeItem(atPath: staging)
      return
    }
    guard rename(staging, output) == 0 else {
      let code = errno
      if code == EEXIST || code == ENOTEMPTY {
        throw .failure(
          "\(output) appeared while exporting; not replaced", code: ExitCode.cannotCreate)
      }
      throw fail(String(cString: strerror(code)))
    }
  }

  static func report(
    _ exported: [SessionSummary], skipped: [(path: String, reason: String)], output: String,
    json: Bool, _ io: IO
  ) {
    let events = exported.reduce(0) { $0 + $1.events }
    let sizes = [FleetExport.eventsFile, FleetExport.sessionsFile].map { name in
      ((try? FileManager.default.attributesOfItem(atPath: output + "/" + name))?[.size]
        as? NSNumber)?.intValue ?? 0
    }
    if json {
      io.out.bytes(
        JSONWriter.line { w in
          w.field("output", output)
          w.field("logs", exported.count)
          w.field("events", events)
          w.field("eventsBytes", sizes[0])
          w.field("sessionsBytes", sizes[1])
          w.field("exact", exported.allSatisfy { $0.inexactRows == 0 })
          w.key("damagedLogs")
          w.beginArray()
          for s in exported where s.damaged || s.lostEvents > 0 { w.string(s.log) }
          w.endArray()
          w.key("skippedLogs")
          w.beginArray()
          for s in skipped {
            w.beginObject()
            w.field("log", s.path)
            w.field("problem", s.reason)
            w.endObject()
          }
          w.endArray()
        })
      return
    }
    var line =
      "listtape: exported \(Render.plural(events, "event")) of \(Render.plural(exported.count, "log")) "
      + "to \(output) (\(FleetExport.eventsFile) \(Render.count(sizes[0])) bytes, "
      + "\(FleetExport.sessionsFile) \(Render.count(sizes[1])) bytes)"
    let damaged = exported.filter { $0.damaged || $0.lostEvents > 0 }.count
    if damaged > 0 || !skipped.isEmpty {
      line += "; \(damaged) damaged, \(skipped.count) skipped"
    }
    Diagnostics.line(line)
  }
}
