import ListTapeModel

/// The fewest items that must move to turn one order into another: shared by the snapshot
/// differ, which emits those moves, and the state diff, which reports them.
package enum Reordering {
  /// Items of `new` (a permutation of `old`) outside a longest increasing subsequence of
  /// their old positions: the fewest that must move to turn `old` into `new`.
  /// - Complexity: O(n log n).
  package static func moved(from old: [String], to new: [String]) -> [String] {
    var position: [IdentifierKey: Int] = [:]
    for (i, id) in old.enumerated() { position[IdentifierKey(id)] = i }
    let seq = new.compactMap { position[IdentifierKey($0)] }
    guard seq.count == new.count, !seq.isEmpty else { return [] }
    // Patience sorting with back-pointers.
    var tails: [Int] = []
    var tailIndex: [Int] = []
    var previous = [Int](repeating: -1, count: seq.count)
    for (i, v) in seq.enumerated() {
      var lo = 0
      var hi = tails.count
      while lo < hi {
        let mid = (lo + hi) / 2
        if tails[mid] < v { lo = mid + 1 } else { hi = mid }
      }
      previous[i] = lo > 0 ? tailIndex[lo - 1] : -1
      if lo == tails.count {
        tails.append(v)
        tailIndex.append(i)
      } else {
        tails[lo] = v
        tailIndex[lo] = i
      }
    }
    var keep = Set<Int>()
    var i = tailIndex.last ?? -1
    while i >= 0 {
      keep.insert(i)
      i = previous[i]
    }
    return new.enumerated().filter { !keep.contains($0.offset) }.map { $0.element }
  }
}
