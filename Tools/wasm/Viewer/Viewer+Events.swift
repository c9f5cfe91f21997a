import ListTapeJSON
import ListTapeModel

/// A run of events as the page lists them, decoded together (nil: lost in a salvage).
struct EventBlock {
  static let size = 256
  var start: Int
  var events: [Event?]
}

/// Events as the page lists them, decoded from the log in blocks.
extension Viewer {
  /// Events `lo...hi` as the page lists them: `[[n, op, words, time, labels], …]` (time and
  /// labels null when absent), and `[n]` for a number the log lost.
  mutating func events(_ from: Int, _ through: Int) throws(ViewError) {
    let lo = max(from, 1)
    let hi = min(through, last)
    var w = JSONWriter(reservingCapacity: 4096)
    w.beginArray()
    var n = lo
    while n <= hi {
      let start = (n - 1) / EventBlock.size * EventBlock.size + 1
      let found = try block(from: start)
      while n <= hi && n < start + EventBlock.size {
        w.beginArray()
        w.int(n)
        if let event = found.events[n - start] {
          w.string(event.op)
          w.string(EventText.line(event))
          if let t = event.time { w.int(t) } else { w.null() }
          let labels = event.operation.markLabels
          if labels.isEmpty { w.null() } else { w.string(labels.joined(separator: ", ")) }
        }
        w.endArray()
        n += 1
      }
    }
    w.endArray()
    setResult(w.bytes)
  }

  /// The events of block `start...start + size - 1`, decoded from a decoder standing
  /// before the frame that holds `start`: the segment's whole dictionary once the pass has
  /// finished it, else a seek point's, or the log's own dictionary frame's, the frames in
  /// between read for their definitions. The last few blocks are kept.
  mutating func block(from start: Int) throws(ViewError) -> EventBlock {
    if let kept = blocks.first(where: { $0.start == start }) { return kept }
    let end = start + EventBlock.size - 1
    var first = 0
    for (f, frame) in log.frames.enumerated() where frame.header.type == Format.typeEvents {
      if Int(frame.header.firstSeq) > start { break }
      first = f
    }
    // From the seek point before, unless the log's own dictionary frame is nearer.
    let (restart, segment) = restart(before: first)
    var d: EventDecoder
    var f: Int
    if first < log.frames.count,
      let whole = wholeDecoder(
        segment: segment, before: Int(log.frames[first].header.firstSeq), frame: first)
    {
      // A segment the pass has finished: the block's first frame is decoded at once.
      d = whole
      f = first
    } else if let p = point(atOrBefore: start - 1, frame: first), log.hasGaps || p.frame > restart {
      d = try decoder(at: p)
      f = p.frame
    } else if log.hasGaps {
      d = EventDecoder(logID: log.logID)
      f = 0
    } else {
      d = try logDecoder(before: first)
      f = first
    }
    var events = [Event?](repeating: nil, count: EventBlock.size)
    do throws(CodecError) {
      while f < log.frames.count {
        let h = log.frames[f].header
        let firstSeq = Int(h.firstSeq)
        if h.type == Format.typeEvents && firstSeq > end { break }
        if h.type == Format.typeDictionary, let p = log.payload(f) {
          try d.restart(p, seq: firstSeq)
        } else if h.type == Format.typeEvents, let p = log.payload(f) {
          let count = Int(h.eventCount)
          if f < first && !log.hasGaps {
            _ = try d.skipFrame(p, firstSeq: firstSeq, count: count)
          } else {
            _ = try d.decodeFrame(
              p, firstSeq: firstSeq, count: count, from: start, acrossGaps: log.hasGaps
            ) { s, event in
              if s >= start && s <= end { events[s - start] = event }
              // No `Event` made past the block (a frame holds up to thousands more).
              return s < end
            }
          }
        }
        f += 1
      }
    } catch {
      throw ViewError(message: "events from \(start) do not decode: \(error)")
    }
    let block = EventBlock(start: start, events: events)
    if blocks.count >= 4 { blocks.removeFirst() }
    blocks.append(block)
    return block
  }
}
