@testable import ListTapeModel

/// The model's own invariant checker (`ListState.invariantViolations`), as the property
/// tests call it.
func invariantViolations(_ state: ListState) -> [String] {
  state.invariantViolations()
}
