/// What decoding a 2.0 event frame came to.
package enum FrameOutcome: Sendable, Equatable {
  /// Every event of the frame was handed over.
  case done
  /// The callback stopped at this event (the frame's definitions were still read).
  case stopped(at: Int)
  /// The frame needs entries this decoder lacks (events were lost before it, or the
  /// decoder stands in another segment): nothing was decoded.
  case gap
}

extension EventDecoder {
  /// Applies a 2.0 dictionary restart (a DICT frame) that comes before event `seq`.
  package mutating func restart(_ payload: UnsafeRawBufferPointer, seq: Int) throws(CodecError) {
    try DictionaryPayload.decode(payload, into: &dictionary)
    segment = UInt64(seq)
    expected = seq
  }

  /// Starts over with a dictionary loaded in bulk for segment `segment` (an index file's).
  package mutating func load(_ dictionary: IdDictionary, segment: UInt64, before seq: Int) {
    self.dictionary = dictionary
    self.segment = segment
    expected = seq
  }

  /// Decodes the events of a 2.0 event frame numbered `firstSeq...`, handing `body` those
  /// from `from` on until it returns false. The frame's definitions are read to its end
  /// either way, so the decoder can go on with the next frame.
  ///
  /// With `acrossGaps` (a salvaged log), a frame whose dictionary entries were partly lost
  /// is still decoded: its events that name a lost entry go to `lost` instead of `body`.
  package mutating func decodeFrame(
    _ payload: UnsafeRawBufferPointer, firstSeq: Int, count: Int, from: Int = 1,
    acrossGaps: Bool = false, lost: (Int) -> Void = { _ in },
    _ body: (Int, Event) -> Bool
  ) throws(CodecError) -> FrameOutcome {
    let head = try FrameHeaderFields(payload)
    if acrossGaps && head.segment > segment {
      // The restart that began this frame's segment was lost.
      dictionary.removeAll()
      segment = head.segment
    }
    if acrossGaps { dictionary.appendHoles(upTo: head.dictBase) }
    guard head.segment == segment, head.dictBase <= dictionary.count else { return .gap }
    dictionary.truncate(to: head.dictBase)
    var source = FrameSource(head.columns)
    swap(&source.dictionary, &dictionary)
    defer { swap(&source.dictionary, &dictionary) }
    var stoppedAt: Int?
    for i in 0..<count {
      let seq = firstSeq + i
      let e: Event
      source.touchedHole = false
      do throws(CodecError) { e = try EventWalk.decode(&source) } catch {
        var located = error
        located.event = seq
        throw located
      }
      if source.touchedHole {
        if seq >= from { lost(seq) }
        continue
      }
      if seq >= from && !body(seq, e) {
        stoppedAt = seq
        break
      }
    }
    if let stoppedAt {
      while source.definitions.remaining > 0 {
        source.dictionary.append(try source.definition())
      }
      expected = firstSeq + count
      return .stopped(at: stoppedAt)
    }
    if var problem = source.leftover {
      problem.event = firstSeq + count - 1
      throw problem
    }
    expected = firstSeq + count
    return .done
  }

  /// Reads only the definitions of a 2.0 event frame (rebuilding a dictionary without
  /// decoding events); `.gap` as for `decodeFrame`.
  package mutating func skipFrame(_ payload: UnsafeRawBufferPointer, firstSeq: Int, count: Int)
    throws(CodecError) -> FrameOutcome
  {
    let head = try FrameHeaderFields(payload)
    guard head.segment == segment, head.dictBase <= dictionary.count else { return .gap }
    dictionary.truncate(to: head.dictBase)
    var source = FrameSource(head.columns)
    swap(&source.dictionary, &dictionary)
    defer { swap(&source.dictionary, &dictionary) }
    while source.definitions.remaining > 0 {
      source.dictionary.append(try source.definition())
    }
    expected = firstSeq + count
    return .done
  }

  /// Decodes a 2.0 checkpoint (a compact state) with this decoder's dictionary, which must
  /// be that of the checkpoint's segment.
  package mutating func decodeCheckpoint(_ payload: UnsafeRawBufferPointer) throws(CodecError)
    -> ListState
  {
    let head = try ListState.compactHeader(payload)
    guard head.segment == segment else {
      throw CodecError(
        "checkpoint of the segment before event \(head.segment) read with the dictionary of "
          + "the segment before event \(segment)", offset: 0)
    }
    return try ListState(compact: payload, dictionary: &dictionary)
  }

  /// The current dictionary's entries from `start` on (an index builder copies them).
  package mutating func entries(from start: Int) throws(CodecError) -> [String] {
    try dictionary.entries(from: start)
  }

  /// The segment and dictionary size a 2.0 event frame was written with.
  package static func frameSegment(_ payload: UnsafeRawBufferPointer) throws(CodecError) -> (
    segment: UInt64, dictBase: Int
  ) {
    let head = try FrameHeaderFields(payload)
    return (head.segment, head.dictBase)
  }
}
