/// What a key does in the demo.
enum DemoAction: Equatable {
  case up, down, left, right, home, end, pageUp, pageDown
  case activate, delete, quit
  case other
}

extension DemoAction {
  /// The demo's meaning of a key: arrows and vi keys move, Return/Space act, d/Backspace
  /// delete, q/Ctrl-C/Ctrl-D quit.
  init(_ key: Key) {
    switch key {
    case .up, .character("k"): self = .up
    case .down, .character("j"): self = .down
    case .left, .character("h"): self = .left
    case .right, .character("l"): self = .right
    case .home, .character("g"): self = .home
    case .end, .character("G"): self = .end
    case .pageUp: self = .pageUp
    case .pageDown: self = .pageDown
    case .enter, .character(" "): self = .activate
    case .backspace, .character("d"): self = .delete
    case .interrupt, .character("q"): self = .quit
    default: self = .other
    }
  }
}
