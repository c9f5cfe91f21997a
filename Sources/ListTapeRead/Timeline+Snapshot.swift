import ListTapeModel
import ListTapeStore

/// Reading a recorded list back as an app wrote it.
extension Timeline {
  /// The sections and outlines after events 1...n (0 is the empty list), as the log spells
  /// them. - Complexity: one checkpoint decode plus a fold of at most one interval.
  public func snapshot(at n: Int) throws(StoreError) -> ListSnapshot<String, String> {
    ListSnapshot(try state(at: n), sections: .standard, items: .standard)
  }

  /// The sections and outlines after events 1...n, keyed by the app's identifier types;
  /// an identifier the codecs cannot read throws `StoreError.undecodableIdentifier`.
  public func snapshot<Section, Item>(
    at n: Int, sections: IdentifierCodec<Section>, items: IdentifierCodec<Item>
  ) throws(StoreError) -> ListSnapshot<Section, Item> {
    let state = try state(at: n)
    if let bad = ListStore<Section, Item>.undecodable(state, sections, items) {
      throw .undecodableIdentifier(bad, path: path)
    }
    return ListSnapshot(state, sections: sections, items: items)
  }
}
