// A stand-in for the part of UIKit that the Swift snippets in README.md and docs/ use, with
// Apple's signatures, so that DocSnippetTests can compile those snippets on Linux as they
// stand (`import UIKit` included). It checks the ListTape calls in them; the UIKit calls are
// only as right as these declarations, which are written from Apple's documentation. Not
// part of any target.
@_exported import Foundation

public struct UIBackgroundTaskIdentifier: RawRepresentable, Hashable, Sendable {
  public var rawValue: Int
  public init(rawValue: Int) { self.rawValue = rawValue }
  public static let invalid = UIBackgroundTaskIdentifier(rawValue: 0)
}

@MainActor open class UIApplication {
  public static let shared = UIApplication()
  open func beginBackgroundTask(
    withName taskName: String?, expirationHandler handler: (@MainActor @Sendable () -> Void)? = nil
  ) -> UIBackgroundTaskIdentifier { .invalid }
  open func endBackgroundTask(_ identifier: UIBackgroundTaskIdentifier) {}
}

@MainActor open class UIResponder {}
@MainActor open class UIView: UIResponder {}
@MainActor open class UIScene: UIResponder {}
@MainActor open class UIViewController: UIResponder {}
@MainActor open class UICollectionViewLayout {}

@MainActor open class UICollectionView: UIView {
  public struct ScrollPosition: OptionSet, Sendable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }
  }
  open func selectItem(at indexPath: IndexPath?, animated: Bool, scrollPosition: ScrollPosition) {}
}

@MainActor open class UICollectionViewController: UIViewController {
  open var collectionView: UICollectionView! { nil }
  open func collectionView(_ collectionView: UICollectionView, didSelectItemAt indexPath: IndexPath)
  {}
  open func collectionView(
    _ collectionView: UICollectionView, didDeselectItemAt indexPath: IndexPath
  ) {}
}

public struct NSDiffableDataSourceSnapshot<SectionIdentifierType, ItemIdentifierType>
where SectionIdentifierType: Hashable & Sendable, ItemIdentifierType: Hashable & Sendable {
  public init() {}
  public mutating func appendSections(_ identifiers: [SectionIdentifierType]) {}
  public mutating func appendItems(
    _ identifiers: [ItemIdentifierType], toSection sectionIdentifier: SectionIdentifierType? = nil
  ) {}
}

public struct NSDiffableDataSourceSectionSnapshot<ItemIdentifierType>
where ItemIdentifierType: Hashable & Sendable {
  public init() {}
  public mutating func append(
    _ items: [ItemIdentifierType], to parent: ItemIdentifierType? = nil
  ) {}
  public mutating func expand(_ items: [ItemIdentifierType]) {}
  public mutating func collapse(_ items: [ItemIdentifierType]) {}
}

@MainActor open class UICollectionViewDiffableDataSource<SectionIdentifierType, ItemIdentifierType>
where SectionIdentifierType: Hashable & Sendable, ItemIdentifierType: Hashable & Sendable {
  public struct SectionSnapshotHandlers<Item> {
    public var willExpandItem: ((Item) -> Void)?
    public var willCollapseItem: ((Item) -> Void)?
  }
  public var sectionSnapshotHandlers = SectionSnapshotHandlers<ItemIdentifierType>()
  open func apply(
    _ snapshot: NSDiffableDataSourceSnapshot<SectionIdentifierType, ItemIdentifierType>,
    animatingDifferences: Bool = true, completion: (() -> Void)? = nil
  ) {}
  open func apply(
    _ snapshot: NSDiffableDataSourceSectionSnapshot<ItemIdentifierType>,
    to section: SectionIdentifierType, animatingDifferences: Bool = true,
    completion: (() -> Void)? = nil
  ) {}
  open func itemIdentifier(for indexPath: IndexPath) -> ItemIdentifierType? { nil }
  open func indexPath(for itemIdentifier: ItemIdentifierType) -> IndexPath? { nil }
}

@MainActor open class UIContextualAction {
  public enum Style: Int, Sendable { case normal, destructive }
  public typealias Handler = (UIContextualAction, UIView, @escaping (Bool) -> Void) -> Void
  public init(style: Style, title: String?, handler: @escaping Handler) {}
}

@MainActor open class UISwipeActionsConfiguration {
  public init(actions: [UIContextualAction]) {}
}

public struct UICollectionLayoutListConfiguration {
  public enum Appearance: Sendable { case plain, grouped, insetGrouped, sidebar, sidebarPlain }
  public typealias SwipeActionsConfigurationProvider = (IndexPath) -> UISwipeActionsConfiguration?
  public var trailingSwipeActionsConfigurationProvider: SwipeActionsConfigurationProvider?
  public init(appearance: Appearance) {}
}

@MainActor open class UICollectionViewCompositionalLayout: UICollectionViewLayout {
  public static func list(using configuration: UICollectionLayoutListConfiguration)
    -> UICollectionViewCompositionalLayout
  { UICollectionViewCompositionalLayout() }
}
