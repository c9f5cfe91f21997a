import Foundation
import ListTapeLog
import ListTapeModel
import ListTapeRead
import ListTapeSamples
import Testing

@testable import ListTapeStore

/// Layout 3 sites and the index: each seek point stores the site model its frames go on
/// with, so a seek from it reads no earlier frame for the model.
@Suite struct SiteIndexTests {
  @Test func theIndexStoresEachPointsSiteModelAndADamagedOneIsPassedOver() throws {
    var source: [Event] = []
    SampleSession.generate(
      events: 30_000, seed: 3, maxItems: 3_000, opening: .outline(items: 2_000, shape: .uuid),
      sites: .init(count: 50)
    ) { source.append($0) }
    let path = temporaryLogPath()
    defer {
      try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent)
    }
    let recorder = try Recorder.open(path: path, options: Recorder.options(.never))
    for e in source { _ = try recorder.record(e) }
    try recorder.close()
    let timeline = try Timeline(path: path)
    timeline.indexSpacing = 4_000
    timeline.spacesPointsByItems = false
    try timeline.buildIndex()
    let indexPath = LogIndex.path(forLog: path)
    let index = try LogIndex(bytes: [UInt8](Data(contentsOf: URL(fileURLWithPath: indexPath))))
    #expect(index.seekPoints.count >= 5)
    #expect(index.siteModelRanges.map(\.seq) == index.seekPoints.map(\.seq))
    func check(_ label: String) throws {
      let t = try Timeline(path: path)
      for n in [4_500, 13_001, 29_000] {
        var got: [Event] = []
        try t.forEachEvent(from: n, through: n + 3) { _, e in
          got.append(e)
          return true
        }
        #expect(got == Array(source[(n - 1)..<(n + 3)]), "\(label): from \(n)")
      }
    }
    try check("stored models")
    // Every stored model damaged: each fails its check, and the seek reads the frames
    // before its point for the model instead.
    for m in index.siteModelRanges { try flipByte(indexPath, at: Int(m.offset) + m.length / 2) }
    try check("damaged models")
    // The index itself still reads (only the models' own checks fail).
    let damaged = try LogIndex(bytes: [UInt8](Data(contentsOf: URL(fileURLWithPath: indexPath))))
    #expect(damaged.seekPoints.count == index.seekPoints.count)
  }
}
