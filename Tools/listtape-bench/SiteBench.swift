import Foundation
import ListTapeSamples
import ListTapeStore

/// Issue 30's size figure: the bench's session recorded without sites and with a site on
/// every event drawn from 300, as `listtape record` writes it (frames of 4,096 events).
enum SiteBench {
  static func run(quick: Bool) {
    let events = quick ? 100_000 : 1_000_000
    let outline = quick ? 10_000 : 100_000
    print("## Sites (issue 30): log size with a site on every event, \(events) events\n")
    print("| shape | sites | log bytes | ÷ without sites | required |")
    print("|---|---|---:|---:|---|")
    do {
      for shape in IdShape.allCases {
        let plain = try size(events: events, outline: outline, shape: shape, sites: nil)
        print("| \(shape.rawValue) | none | \(plain.formatted()) | 1 | |")
        for model in SampleSession.Sites.Model.allCases {
          let sites = SampleSession.Sites(count: 300, model: model)
          let n = try size(events: events, outline: outline, shape: shape, sites: sites)
          let ratio = Double(n) / Double(plain)
          let required =
            model == .screens ? "≤ 1.02 — \(FormatBench.met(ratio <= 1.02))" : "reported"
          print(
            "| \(shape.rawValue) | 300, \(model.rawValue) | \(n.formatted()) | \(fmt(ratio)) "
              + "| \(required) |")
        }
      }
    } catch {
      print("sites: \(error)")
    }
    print("")
  }

  /// The size of the session's log: `listtape generate --events N --seed 14 --outline M
  /// --shape S [--sites 300 --site-model X] | listtape record`, recorded in process with
  /// frames cut at 4,096 events (as a fast `record` cuts them; no timer decides).
  static func size(events: Int, outline: Int, shape: IdShape, sites: SampleSession.Sites?)
    throws -> Int
  {
    let path = NSTemporaryDirectory() + "listtape-bench-sites-\(getpid()).ltape"
    try? FileManager.default.removeItem(atPath: path)
    defer {
      try? FileManager.default.removeItem(atPath: path)
      try? FileManager.default.removeItem(atPath: path + ".idx")
    }
    var options = Recorder.options(.never)
    options.batchDelay = 3_600
    let recorder = try Recorder.open(path: path, options: options)
    try SampleSession.generate(
      events: events, seed: 14, maxItems: outline * 11 / 10,
      opening: .outline(items: outline, shape: shape), sites: sites
    ) { _ = try recorder.record($0, stampingTime: false) }
    try recorder.close()
    let attributes = try FileManager.default.attributesOfItem(atPath: path)
    return (attributes[.size] as? Int) ?? 0
  }
}
