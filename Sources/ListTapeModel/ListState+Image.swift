extension ListState {
  /// The forest's arrays as they lie in memory (name and bytes), for the bench's measure of
  /// a state stored to load by one copy (`listtape-bench __image`).
  package func memoryImage() -> [(name: String, bytes: [UInt8])] {
    func raw<T>(_ a: [T]) -> [UInt8] { a.withUnsafeBytes { Array($0) } }
    let f = forest
    return [
      ("nodes", raw(f.nodes)), ("blocks", raw(f.blocks)), ("slots", raw(f.slots)),
      ("entryOf", raw(f.entryOf)), ("content", raw(f.content)), ("handleOf", raw(f.handleOf)),
      ("text", f.text), ("ids", f.ids.bytes), ("ends", raw(f.ids.ends)),
    ]
  }
}
