import ListTapeRead
import ListTapeStore

/// The event number `point` names in `timeline`; the last event when nil. A point outside
/// the log, or a mark it lacks, is a usage error of `command`'s `option` that names the log
/// (protocol section 4 keeps exit 1, not found, for bisect and find).
func resolve<C: Command>(
  _ point: Point?, in timeline: Timeline, for command: C.Type, option: String = "--at"
) throws(CLIError) -> Int {
  let count = timeline.eventCount
  guard let point else { return count }
  switch point {
  case .event(let n):
    guard n <= count else {
      throw command.usageError(
        "\(option) \(n) is out of range: \(timeline.path) has \(Render.plural(count, "event")) "
          + "(0...\(count))")
    }
    return n
  case .mark(let label):
    var labels: [String] = []
    let found = try replaying { () throws(StoreError) in
      try timeline.firstEvent(markedWith: label, labels: &labels, limit: 11)
    }
    guard let found else {
      var message = "\(option) mark:\(label): no mark \"\(label)\" in \(timeline.path)"
      if labels.isEmpty {
        message += " (it has no marks)"
      } else {
        let shown = labels.prefix(10).map { "\"\($0)\"" }.joined(separator: ", ")
        message += "; its marks: \(shown)\(labels.count > 10 ? ", …" : "")"
      }
      throw command.usageError(message)
    }
    return found
  case .time(let ms):
    return try replaying { () throws(StoreError) in try timeline.lastEvent(atOrBefore: ms) }
  }
}
