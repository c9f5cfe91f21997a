import ListTapeInvestigate
import ListTapeModel
import ListTapeStore

/// One of the seed apps the demo recreates: its list and how a row reacts to Return.
struct Scenario {
  let name: String
  let summary: String
  let multipleSelection: Bool
  /// Whether Return on a leaf picks it as its parent's value (the form) instead of
  /// selecting it.
  let picksOptions: Bool
  let sections: [(id: String, items: [OutlineNode])]

  static let all = [symbols, languages, form, contacts]

  /// Builds the list in a fresh store: selection mode, sections, items, then a mark.
  func load(into store: StoreCore) {
    if multipleSelection { store.send(.configure(multipleSelection: true)) }
    store.send(.appendSections(sections.map(\.id)))
    for section in sections {
      store.send(.appendItems(section.items, section: section.id, parent: nil))
    }
    store.send(.mark("demo \(name) loaded"))
  }

  /// SF Symbols under category headers in one section, expanded by default (seed 000).
  static let symbols: Scenario = {
    func header(_ id: String, _ title: String, _ names: [String]) -> OutlineNode {
      OutlineNode(
        id, title: title, expanded: true, children: names.map { OutlineNode($0, title: $0) })
    }
    return Scenario(
      name: "symbols", summary: "SF Symbols grouped under expandable category headers",
      multipleSelection: false, picksOptions: false,
      sections: [
        (
          "main",
          [
            header(
              "header.communication", "Communication",
              ["mic", "mic.fill", "message", "message.fill"]),
            header(
              "header.weather", "Weather", ["sun.min", "sun.min.fill", "sunset", "sunset.fill"]),
            header(
              "header.objects-tools", "Objects & Tools",
              ["pencil", "pencil.circle", "highlighter", "pencil.and.outline"]),
          ]
        )
      ])
  }()

  /// A collapsible "Programming Languages" parent (seed 001).
  static let languages = Scenario(
    name: "languages", summary: "a collapsible \"Programming Languages\" section",
    multipleSelection: false, picksOptions: false,
    sections: [
      (
        "languages",
        [
          OutlineNode(
            "Programming Languages", title: "Programming Languages",
            children: ["Swift", "C++", "C#"])
        ]
      )
    ])

  /// The expandable form (seed 002): picking an option collapses its parent and makes the
  /// option the parent's title. The seed's text fields, date picker, switch and slider
  /// become lists of values to pick, which a terminal can show.
  static let form: Scenario = {
    func field(_ id: String, _ title: String, _ options: [(String, String)]) -> OutlineNode {
      OutlineNode(
        id, title: title, children: options.map { OutlineNode($0.0, title: $0.1) })
    }
    return Scenario(
      name: "form", summary: "the expandable form: picking an option sets its parent's title",
      multipleSelection: false, picksOptions: true,
      sections: [
        (
          "personal",
          [
            field(
              "fullName", "Full name",
              [("name.jane", "Jane Appleseed"), ("name.john", "John Appleseed")]),
            field(
              "dateOfBirth", "Date of birth",
              [
                ("dob.1985", "Jan 3, 1985"), ("dob.1990", "May 17, 1990"),
                ("dob.2001", "Oct 9, 2001"),
              ]
            ),
            field(
              "maritalStatus", "Marital status",
              [("marital.single", "Single"), ("marital.married", "Married")]),
          ]
        ),
        (
          "preferences",
          [
            field(
              "favoriteSport", "Favorite sport",
              [
                ("sport.football", "Football"), ("sport.basketball", "Basketball"),
                ("sport.baseball", "Baseball"), ("sport.volleyball", "Volleyball"),
              ]),
            field(
              "favoriteColor", "Favorite color",
              [("color.red", "Red"), ("color.green", "Green"), ("color.blue", "Blue")]),
          ]
        ),
        (
          "work",
          [
            field(
              "level", "Level",
              [
                ("level.0", "0"), ("level.3", "3"), ("level.5", "5"), ("level.7", "7"),
                ("level.10", "10"),
              ]
            )
          ]
        ),
      ])
  }()

  /// Contacts in two sections, multiple selection, swipe to delete (seed 003).
  static let contacts: Scenario = {
    func contact(_ n: Int, _ name: String) -> OutlineNode {
      let email = name.lowercased().split(separator: " ").joined(separator: ".") + "@example.com"
      let id = "contact-" + String(repeating: "0", count: n < 10 ? 2 : 1) + String(n)
      return OutlineNode(id, title: name, fields: ["email": email])
    }
    return Scenario(
      name: "contacts", summary: "contacts in favorites and all, multiple selection",
      multipleSelection: true, picksOptions: false,
      sections: [
        (
          "favorites",
          [contact(3, "Chloe Evans"), contact(8, "Hugo Jones"), contact(16, "Priya Fischer")]
        ),
        (
          "all",
          [
            contact(1, "Ava Adams"), contact(2, "Ben Hughes"), contact(4, "Daniel Brown"),
            contact(5, "Emma Ito"), contact(6, "Felix Fischer"), contact(7, "Grace Chen"),
            contact(9, "Isla Garcia"), contact(10, "Jack Diaz"), contact(11, "Kai Adams"),
            contact(12, "Lily Hughes"), contact(13, "Mason Evans"), contact(14, "Nora Brown"),
          ]
        ),
      ])
  }()
}

extension Scenario: ArgumentValue {
  static let choices = all.map(\.name)

  static func parse(_ word: String) throws(InvalidValue) -> Scenario {
    guard let scenario = all.first(where: { $0.name == word }) else {
      throw InvalidValue(expected: "one of: " + choices.joined(separator: ", "))
    }
    return scenario
  }

  var helpText: String { name }
}
