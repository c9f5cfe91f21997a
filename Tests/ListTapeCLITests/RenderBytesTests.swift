import ListTapeModel
import Testing

@testable import listtape

/// `show` writes rows from the state's bytes; scrub and the demo draw them from
/// `OutlineRow`s: both must print the same characters, colours included.
@Suite struct RenderBytesTests {
  static let session = """
    {"op":"appendSections","sections":["S","E"]}
    {"op":"appendItems","section":"S","items":[{"id":"p","title":"p","children":[{"id":"c1","title":"","fields":{"é":"1","e":"2","z":"3","a":"x=y, z","É":"4"}},{"id":"c2","title":"T \\"q\\"","children":["g",{"id":"h","title":"ü"}]}]},{"id":"ü","fields":{"b":"","a":"1"}}]}
    {"op":"expand","items":["p"]}
    {"op":"select","items":["c1"]}
    """

  @Test(arguments: [false, true])
  func bytesRenderTheRowsAsStringsDo(color: Bool) throws {
    var state = ListState()
    for line in Self.session.split(separator: "\n") {
      try state.apply(Event(jsonLine: String(line)))
    }
    let style = Style(enabled: color)
    for all in [false, true] {
      for section in state.sections {
        let expected = state.rows(in: section, visibleOnly: !all).map {
          Render.row($0, style: style)
        }
        var written: [String] = []
        state.forEachRowText(in: section, visibleOnly: !all) { row in
          var line: [UInt8] = []
          Render.row(row, style: style, into: &line)
          written.append(String(decoding: line, as: UTF8.self))
        }
        #expect(written == expected, "section \(state.id(of: section)), all: \(all)")
      }
    }
    // The cases above are all there: a hidden row, a selected one, fields out of order.
    let rows = state.rows(in: state.sections[0], visibleOnly: false)
    #expect(rows.contains { !$0.isVisible } && rows.contains { $0.isSelected })
  }
}
