extension ListState {
  /// The deepest level any item is at (0 when every item is a root), nil without items:
  /// the greatest height among each section's roots, which their blocks already keep.
  /// - Complexity: O(sections).
  package var deepestLevel: Int? {
    guard numberOfAllItems > 0 else { return nil }
    var deepest: UInt8 = 0
    for section in forest.sections where section.live && section.roots >= 0 {
      deepest = max(deepest, forest.blocks[Int(section.roots)].height)
    }
    return Int(deepest)
  }
}
