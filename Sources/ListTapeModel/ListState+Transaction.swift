/// Several edits that stand or fall together, for callers that edit a state step by step
/// (the store's `perform`) and decide only at the end whether to keep the steps.
extension ListState {
  /// Runs `body` on the state and keeps its edits when it returns true, or undoes every one
  /// of them when it returns false, exactly as a faulting `batch` is undone (the journal of
  /// `apply(_:)`), so no copy of the list is made either way.
  /// - Complexity: O(1) plus the edits; undoing costs what the edits wrote.
  package mutating func transaction(_ body: (inout ListState) -> Bool) {
    guard !forest.inBatch else {
      // Inside a batch the outer journal undoes everything; nothing more to do here.
      _ = body(&self)
      return
    }
    let mode = allowsMultipleSelection
    forest.begin()
    if body(&self) {
      forest.commit()
    } else {
      forest.rollback()
      allowsMultipleSelection = mode
    }
  }
}
