import ListTapeJSON
import ListTapeModel

/// Why the page cannot read its log on: a frame that does not decode, a record that does
/// not fold. The page shows the words, never a state past them.
struct ViewError: Error {
  var message: String
}

/// What the first fold of the log finds for the timeline: `[n, "op: fault"]` and `[n,
/// "label, …"]`, in order.
struct Findings {
  var faults = JSONWriter()
  var marks = JSONWriter()
}

/// A fold standing in the page's log, as `Timeline.fold` reads a log: the state after event
/// `seq`, the decoder, the records of the frame read last and the next one to fold, and
/// the next frame to read.
struct Cursor {
  var state: ListState
  var decoder: EventDecoder
  var seq: Int
  var ops = FoldOps()
  var next = 0
  var frame: Int
  /// The fault of the last event folded (nil when it applied).
  var lastFault: ListFault?
  /// With findings, the fold notes every fault and mark (the first fold only).
  var findings: Findings?
  /// The dictionaries of the segments the first fold left (a restart), with their aliases,
  /// for the seek points taken in them.
  var retired: [(segment: UInt64, ids: IdSpace, aliases: DefinitionAliases)] = []

  init(state: ListState, decoder: EventDecoder, seq: Int, frame: Int) {
    self.state = state
    self.decoder = decoder
    self.seq = seq
    self.frame = frame
  }

  /// Where `advance` stopped.
  enum Stop {
    /// Every event through the number asked for is folded.
    case reached
    /// The next frame is an events frame and a seek point is due before it (`seq` is the
    /// event before that frame).
    case pointDue
  }

  /// Folds on until the next record is an event numbered after `n`: every event through
  /// `n`, and the frames after them that hold no event (a dictionary restart, the
  /// checkpoint that restores a salvaged log's state at `n`). Stops early, with
  /// `.pointDue`, before an events frame that comes after event `pointFrom`.
  mutating func advance(
    through n: Int, in log: PageLog, anchors: Set<Int>, pointFrom: Int = .max
  ) throws(ViewError) -> Stop {
    while true {
      if next < ops.count {
        let i = next
        if ops.isEvent(i) && ops.seqs[i] > n { break }
        next += 1
        _ = try fold(i)
        continue
      }
      guard frame < log.frames.count else { break }
      let h = log.frames[frame].header
      let firstSeq = Int(h.firstSeq)
      if h.type == Format.typeEvents || h.type == Format.typeCheckpoint {
        if firstSeq > n { break }
      }
      if h.type == Format.typeEvents && firstSeq - 1 >= pointFrom {
        seq = firstSeq - 1
        return .pointDue
      }
      try read(frame, in: log, anchors: anchors)
      frame += 1
    }
    seq = max(seq, min(n, log.lastSeq))
    return .reached
  }

  /// Folds record `i` (`ListState.apply`, the CLI's reducer); returns the fault of an event
  /// that faults.
  mutating func fold(_ i: Int) throws(ViewError) -> ListFault? {
    let s = ops.seqs[i]
    let fault: ListFault?
    do throws(CodecError) {
      fault = try state.apply(ops, i)
    } catch {
      throw ViewError(message: "event \(s) does not decode: \(error)")
    }
    guard ops.isEvent(i) else { return nil }
    seq = s
    lastFault = fault
    if findings != nil { note(i, fault) }
    return fault
  }

  /// Notes event record `i`'s fault and marks in `findings`.
  mutating func note(_ i: Int, _ fault: ListFault?) {
    let s = ops.seqs[i]
    if let fault {
      findings?.faults.beginArray()
      findings?.faults.int(s)
      findings?.faults.string("\(ops.event(i, state.ids).op): \(fault)")
      findings?.faults.endArray()
    }
    let name = ops.fields(i).name
    guard name == Self.markIndex || name == Self.batchIndex else { return }
    let labels = ops.event(i, state.ids).operation.markLabels
    guard !labels.isEmpty else { return }
    findings?.marks.beginArray()
    findings?.marks.int(s)
    findings?.marks.string(labels.joined(separator: ", "))
    findings?.marks.endArray()
  }

  static let markIndex = ListOperation.allNames.firstIndex(of: "mark") ?? -1
  static let batchIndex = ListOperation.allNames.firstIndex(of: "batch") ?? -1

  /// Reads frame `f` into `ops` as `LogEvents` reads a log's frames, or, at a salvaged
  /// log's recovery point, takes the log's checkpoint as the state (`Timeline.fold`).
  mutating func read(_ f: Int, in log: PageLog, anchors: Set<Int>) throws(ViewError) {
    ops.removeAll()
    next = 0
    let h = log.frames[f].header
    let firstSeq = Int(h.firstSeq)
    let wanted =
      h.type == Format.typeEvents || h.type == Format.typeDictionary
      || (h.type == Format.typeCheckpoint && anchors.contains(firstSeq))
    guard wanted else { return }
    guard let payload = log.payload(f) else {
      throw ViewError(message: "frame at byte \(log.frames[f].offset) was not inflated")
    }
    do throws(CodecError) {
      switch h.type {
      case Format.typeDictionary:
        if findings != nil {
          retired.append((decoder.segment, decoder.dictionary, decoder.aliases))
        }
        try decoder.restart(payload, seq: firstSeq, afterGaps: log.hasGaps, into: &ops)
      case Format.typeEvents:
        // A frame past a dictionary frame a salvage lost starts its segment without one:
        // the segment being left is retired as at a restart.
        if findings != nil, log.hasGaps,
          try EventDecoder.frameSegment(payload).segment > decoder.segment
        {
          retired.append((decoder.segment, decoder.dictionary, decoder.aliases))
        }
        _ = try decoder.decodeFrame(
          payload, firstSeq: firstSeq, count: Int(h.eventCount), from: 1, through: .max,
          acrossGaps: log.hasGaps, into: &ops)
      default:
        state = try decoder.decodeCheckpoint(payload)
      }
    } catch {
      throw ViewError(message: "frame at byte \(log.frames[f].offset) does not decode: \(error)")
    }
  }
}
