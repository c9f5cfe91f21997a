import ListTapeModel
import ListTapeStore

/// Events found by what they hold rather than by number: the first mark with a label, the
/// last event at or before a time. The command line parses `mark:LABEL` and `time:ISO8601`
/// (a typed point) and asks these.
extension Timeline {
  /// The first event whose mark, or a mark nested in whose batch, has `label`; nil when
  /// none has. `labels` collects up to `limit` distinct labels met on the way (in log
  /// order), so a caller can say which marks exist when this one does not.
  /// - Complexity: a scan from the start up to the mark found, or of the whole log.
  package func firstEvent(
    markedWith label: String, labels: inout [String], limit: Int = 0
  ) throws(StoreError) -> Int? {
    var found: Int?
    var seen = Set<String>()
    try forEachEvent { n, e in
      let marks = e.operation.markLabels
      if marks.contains(label) {
        found = n
        return false
      }
      for m in marks where labels.count < limit && seen.insert(m).inserted { labels.append(m) }
      return true
    }
    return found
  }

  /// The last event stamped at or before `milliseconds` since the epoch, scanning in log
  /// order until an event stamped later; unstamped events count as at their place. 0 when
  /// the first event is already later.
  package func lastEvent(atOrBefore milliseconds: Int64) throws(StoreError) -> Int {
    var found = 0
    try forEachEvent { n, e in
      if let t = e.time, t > milliseconds { return false }
      found = n
      return true
    }
    return found
  }
}
