/// Why an edit cannot apply to the current list: what would have crashed UIKit.
///
/// A fault leaves the state exactly as it was; the log still records the event.
public enum ListFault: Error, Equatable, Hashable, Sendable, CustomStringConvertible {
  /// An inserted item id is already in the list.
  case duplicateItem(String)
  /// An item id appears more than once among the items an event inserts.
  case repeatedItem(String)
  /// An inserted section id is already in the list.
  case duplicateSection(String)
  /// A section id appears more than once among the sections an event inserts.
  case repeatedSection(String)
  /// A section the edit names does not exist.
  case missingSection(String)
  /// An item the edit names does not exist.
  case missingItem(String)
  /// The parent the edit names does not exist.
  case missingParent(String)
  /// The anchor the edit names does not exist.
  case missingAnchor(String)
  /// Items appended without a section while the list has none.
  case noSections
  /// Selecting an item whose ancestors are not all expanded.
  case hiddenItem(String)
  /// More than one item selected in single-selection mode.
  case tooManySelected(Int)
  /// A move whose anchor is the moved item or section itself.
  case moveNextToItself(String)
  /// A move whose anchor lies inside the moved item's subtree.
  case moveIntoOwnSubtree(item: String, anchor: String)
  /// `appendItems` with a parent that lies in another section than the one named.
  case parentNotInSection(parent: String, section: String)
  /// An insertion or move that would leave an item below level 255 (protocol section 5):
  /// the first such inserted item, or the moved item, and the level reached.
  case tooDeep(item: String, level: Int)
  /// An event inside a batch faulted (0-based index, its op); the batch applied nothing.
  indirect case inBatch(index: Int, op: String, fault: ListFault)

  /// The reason in words, for people.
  public var description: String {
    switch self {
    case .duplicateItem(let id): return "item \"\(id)\" already exists"
    case .repeatedItem(let id): return "item \"\(id)\" appears more than once in the event"
    case .duplicateSection(let id): return "section \"\(id)\" already exists"
    case .repeatedSection(let id): return "section \"\(id)\" appears more than once in the event"
    case .missingSection(let id): return "no section \"\(id)\""
    case .missingItem(let id): return "no item \"\(id)\""
    case .missingParent(let id): return "no parent item \"\(id)\""
    case .missingAnchor(let id): return "no anchor \"\(id)\""
    case .noSections: return "no section to append to (the list has no sections)"
    case .hiddenItem(let id): return "item \"\(id)\" is not visible (an ancestor is collapsed)"
    case .tooManySelected(let n):
      return "\(n) items selected in single-selection mode (at most 1)"
    case .moveNextToItself(let id): return "cannot move \"\(id)\" next to itself"
    case .moveIntoOwnSubtree(let item, let anchor):
      return "cannot move \"\(item)\" into its own subtree (anchor \"\(anchor)\")"
    case .parentNotInSection(let parent, let section):
      return "parent \"\(parent)\" is not in section \"\(section)\""
    case .tooDeep(let item, let level):
      return "\"\(item)\" would put an item at level \(level) (levels go from 0 to 255)"
    case .inBatch(let index, let op, let fault):
      return "event \(index + 1) of the batch (\(op)): \(fault)"
    }
  }
}
