import ListTapeModel

/// The kind of a `ListFault`, without the ids it names: what `stats` counts faults by.
/// The raw value is the case's name (`missingItem`), as JSON output keys faults.
package enum FaultKind: String, CaseIterable, Sendable {
  /// An inserted item id is already in the list.
  case duplicateItem
  /// An item id appears more than once among the items an event inserts.
  case repeatedItem
  /// An inserted section id is already in the list.
  case duplicateSection
  /// A section id appears more than once among the sections an event inserts.
  case repeatedSection
  /// A section the event names is not in the list.
  case missingSection
  /// An item the event names is not in the list.
  case missingItem
  /// A parent the event names is not in the list.
  case missingParent
  /// An anchor the event names is not in the list.
  case missingAnchor
  /// Items appended without a section while the list has none.
  case noSections
  /// Selecting an item whose ancestors are not all expanded.
  case hiddenItem
  /// More than one item selected in single-selection mode.
  case tooManySelected
  /// A move whose anchor is the moved item or section itself.
  case moveNextToItself
  /// A move whose anchor lies inside the moved item's subtree.
  case moveIntoOwnSubtree
  /// `appendItems` with a parent that lies in another section than the one named.
  case parentNotInSection
  /// An insertion or move that would put an item below level 255.
  case tooDeep

  /// Counts, most frequent first, ties by name.
  static func ranked(_ counts: [FaultKind: Int]) -> [(kind: FaultKind, count: Int)] {
    counts.map { (kind: $0.key, count: $0.value) }.sorted {
      $0.count != $1.count ? $0.count > $1.count : $0.kind.rawValue < $1.kind.rawValue
    }
  }
}

extension ListFault {
  /// The kind of fault, without the ids; a batch's fault is the kind of the event inside it
  /// that faulted.
  package var kind: FaultKind {
    switch self {
    case .duplicateItem: return .duplicateItem
    case .repeatedItem: return .repeatedItem
    case .duplicateSection: return .duplicateSection
    case .repeatedSection: return .repeatedSection
    case .missingSection: return .missingSection
    case .missingItem: return .missingItem
    case .missingParent: return .missingParent
    case .missingAnchor: return .missingAnchor
    case .noSections: return .noSections
    case .hiddenItem: return .hiddenItem
    case .tooManySelected: return .tooManySelected
    case .moveNextToItself: return .moveNextToItself
    case .moveIntoOwnSubtree: return .moveIntoOwnSubtree
    case .parentNotInSection: return .parentNotInSection
    case .tooDeep: return .tooDeep
    case .inBatch(_, _, let fault): return fault.kind
    }
  }
}
