import Testing

@testable import ListTapeModel

/// The four tutorials ListTape grew from, replayed as JSON Lines sessions.
@Suite struct SeedSessionTests {
  /// SF Symbols grouped under expandable category headers, expanded by default, one section.
  @Test func symbolsUnderExpandableCategories() throws {
    var s = try folded(
      """
      {"op":"appendSections","sections":["main"],"t":1700000000000}
      {"op":"appendItems","section":"main","items":[{"id":"Communication","expanded":true,"children":["mic","message","phone"]},{"id":"Weather","expanded":true,"children":["sun.max","cloud.rain","snowflake"]},{"id":"Objects","expanded":true,"children":["pencil","trash","folder"]}],"t":1700000000005}
      """)
    #expect(s.numberOfItems(inSection: "main") == 12)
    #expect(s.indexPath(for: "sun.max")?.item == 5)
    try s.run(#"{"op":"collapse","items":["Weather"],"t":1700000001000}"#)
    #expect(
      s.itemIdentifiers(inSection: "main")
        == [
          "Communication", "mic", "message", "phone", "Weather", "Objects", "pencil", "trash",
          "folder",
        ])
    #expect(s.indexPath(for: "pencil")?.item == 6)
    #expect(!s.isVisible("snowflake"))
    try s.run(#"{"op":"select","items":["trash"]}"#)
    try s.run(#"{"op":"expand","items":["Weather"]}"#)
    #expect(s.indexPath(for: "trash")?.item == 10)
    #expect(s.selectedItems == ["trash"])
    try s.run(#"{"op":"collapse","items":["Objects"]}"#)
    #expect(s.selectedItems == [])
    #expect(
      s.json(event: 6)
        == #"{"event":6,"sections":[{"id":"main","items":[{"id":"Communication","parent":null,"level":0,"expanded":true},{"id":"mic","parent":"Communication","level":1,"expanded":false},{"id":"message","parent":"Communication","level":1,"expanded":false},{"id":"phone","parent":"Communication","level":1,"expanded":false},{"id":"Weather","parent":null,"level":0,"expanded":true},{"id":"sun.max","parent":"Weather","level":1,"expanded":false},{"id":"cloud.rain","parent":"Weather","level":1,"expanded":false},{"id":"snowflake","parent":"Weather","level":1,"expanded":false},{"id":"Objects","parent":null,"level":0,"expanded":false},{"id":"pencil","parent":"Objects","level":1,"expanded":false},{"id":"trash","parent":"Objects","level":1,"expanded":false},{"id":"folder","parent":"Objects","level":1,"expanded":false}],"visible":["Communication","mic","message","phone","Weather","sun.max","cloud.rain","snowflake","Objects"]}],"selected":[]}"#
    )
  }

  /// A collapsible "Programming Languages" header: tap toggles, children come and go.
  @Test func collapsibleProgrammingLanguagesSection() throws {
    var s = try folded(
      """
      {"op":"appendSections","sections":["languages"]}
      {"op":"appendItems","items":[{"id":"Programming Languages","title":"Programming Languages","children":["Swift","Kotlin","Python","Rust"]}]}
      """)
    #expect(s.itemIdentifiers == ["Programming Languages"])
    try s.run(#"{"op":"expand","items":["Programming Languages"]}"#)
    #expect(s.itemIdentifiers == ["Programming Languages", "Swift", "Kotlin", "Python", "Rust"])
    try s.run(#"{"op":"select","items":["Python"]}"#)
    try s.run(#"{"op":"appendItems","parent":"Programming Languages","items":["Go"]}"#)
    #expect(s.numberOfItems(inSection: "languages") == 6)
    #expect(s.selectedItems == ["Python"])
    try s.run(#"{"op":"collapse","items":["Programming Languages"]}"#)
    #expect(s.itemIdentifiers == ["Programming Languages"])
    #expect(s.selectedItems == [])
    try s.run(#"{"op":"expand","items":["Programming Languages"]}"#)
    #expect(s.selectedItems == [])
    #expect(s.level(of: "Go") == 1)
    #expect(s.parent(of: "Rust") == "Programming Languages")
  }

  /// The expandable form: picking an option collapses its parent and sets the parent's
  /// title, all in one batch.
  @Test func expandableFormWithPickedOptions() throws {
    var s = try folded(
      """
      {"op":"appendSections","sections":["Personal","Preferences","Work Experience"]}
      {"op":"appendItems","section":"Personal","items":[{"id":"fullName","title":"Full name"},{"id":"dateOfBirth","title":"Date of birth","children":["datePicker"]},{"id":"maritalStatus","title":"Marital status","children":[{"id":"single","title":"Single"},{"id":"married","title":"Married"}]}]}
      {"op":"appendItems","section":"Preferences","items":[{"id":"favoriteSport","title":"Favorite sport","children":[{"id":"football","title":"Football"},{"id":"basketball","title":"Basketball"},{"id":"tennis","title":"Tennis"}]},{"id":"favoriteColor","title":"Favorite color","children":[{"id":"red","title":"Red"},{"id":"green","title":"Green"}]}]}
      {"op":"appendItems","section":"Work Experience","items":[{"id":"level","title":"Experience level","fields":{"value":"0"}}]}
      """)
    #expect(s.numberOfItems == 6)
    try s.run(#"{"op":"expand","items":["maritalStatus"]}"#)
    #expect(
      s.itemIdentifiers(inSection: "Personal") == [
        "fullName", "dateOfBirth", "maritalStatus", "single", "married",
      ])
    try s.run(
      #"{"op":"batch","events":[{"op":"select","items":["married"]},{"op":"collapse","items":["maritalStatus"]},{"op":"update","item":"maritalStatus","title":"Married"}]}"#
    )
    #expect(
      s.itemIdentifiers(inSection: "Personal") == ["fullName", "dateOfBirth", "maritalStatus"])
    #expect(s.title(of: "maritalStatus") == "Married")
    #expect(s.selectedItems == [])
    try s.run(#"{"op":"expand","items":["favoriteSport"]}"#)
    try s.run(
      #"{"op":"batch","events":[{"op":"collapse","items":["favoriteSport"]},{"op":"update","item":"favoriteSport","title":"Tennis","fields":{"choice":"tennis"}}]}"#
    )
    try s.run(#"{"op":"update","item":"fullName","title":"Ada Lovelace"}"#)
    try s.run(#"{"op":"update","item":"level","fields":{"value":"7"}}"#)
    // Picking an option of a collapsed question is a fault: it is not on screen.
    try expectFault(
      &s,
      #"{"op":"batch","events":[{"op":"select","items":["red"]},{"op":"collapse","items":["favoriteColor"]}]}"#,
      .inBatch(index: 0, op: "select", fault: .hiddenItem("red")))
    #expect(
      s.outline("Preferences")
        == "favoriteSport .football .basketball .tennis favoriteColor .red .green")
    #expect(
      s.json(event: 10)
        == #"{"event":10,"sections":[{"id":"Personal","items":[{"id":"fullName","parent":null,"level":0,"expanded":false,"title":"Ada Lovelace"},{"id":"dateOfBirth","parent":null,"level":0,"expanded":false,"title":"Date of birth"},{"id":"datePicker","parent":"dateOfBirth","level":1,"expanded":false},{"id":"maritalStatus","parent":null,"level":0,"expanded":false,"title":"Married"},{"id":"single","parent":"maritalStatus","level":1,"expanded":false,"title":"Single"},{"id":"married","parent":"maritalStatus","level":1,"expanded":false,"title":"Married"}],"visible":["fullName","dateOfBirth","maritalStatus"]},{"id":"Preferences","items":[{"id":"favoriteSport","parent":null,"level":0,"expanded":false,"title":"Tennis","fields":{"choice":"tennis"}},{"id":"football","parent":"favoriteSport","level":1,"expanded":false,"title":"Football"},{"id":"basketball","parent":"favoriteSport","level":1,"expanded":false,"title":"Basketball"},{"id":"tennis","parent":"favoriteSport","level":1,"expanded":false,"title":"Tennis"},{"id":"favoriteColor","parent":null,"level":0,"expanded":false,"title":"Favorite color"},{"id":"red","parent":"favoriteColor","level":1,"expanded":false,"title":"Red"},{"id":"green","parent":"favoriteColor","level":1,"expanded":false,"title":"Green"}],"visible":["favoriteSport","favoriteColor"]},{"id":"Work Experience","items":[{"id":"level","parent":null,"level":0,"expanded":false,"title":"Experience level","fields":{"value":"7"}}],"visible":["level"]}],"selected":[]}"#
    )
  }

  /// Contacts in two sections, favorites and all, with multiple selection and swipe-to-delete.
  @Test func contactsWithFavoritesMultipleSelectionAndSwipeToDelete() throws {
    var s = try folded(
      """
      {"op":"configure","multipleSelection":true}
      {"op":"appendSections","sections":["favorites","all"]}
      {"op":"appendItems","section":"favorites","items":[{"id":"fav-ada","title":"Ada"},{"id":"fav-grace","title":"Grace"}]}
      {"op":"appendItems","section":"all","items":[{"id":"ada","title":"Ada","fields":{"phone":"555-0100"}},{"id":"alan","title":"Alan"},{"id":"grace","title":"Grace"},{"id":"linus","title":"Linus"}]}
      {"op":"select","items":["fav-grace","alan","linus"]}
      """)
    #expect(s.selectedItems == ["fav-grace", "alan", "linus"])
    #expect(s.indexOfItem("alan") == 3)
    // Swipe to delete a selected contact: gone from the list and from the selection.
    try s.run(#"{"op":"deleteItems","items":["linus"]}"#)
    #expect(s.selectedItems == ["fav-grace", "alan"])
    // Un-favorite Grace: delete from favorites, reconfigure her row in "all".
    try s.run(
      #"{"op":"batch","events":[{"op":"deleteItems","items":["fav-grace"]},{"op":"reconfigureItems","items":["grace"]}]}"#
    )
    #expect(s.itemIdentifiers(inSection: "favorites") == ["fav-ada"])
    // Favorite Alan: he appears in favorites, still selected in "all".
    try s.run(
      #"{"op":"appendItems","section":"favorites","items":[{"id":"fav-alan","title":"Alan"}]}"#)
    try s.run(#"{"op":"select","items":["fav-alan"]}"#)
    #expect(s.selectedItems == ["fav-alan", "alan"])
    // The same id cannot be in both sections.
    try expectFault(
      &s, #"{"op":"appendItems","section":"favorites","items":["ada"]}"#, .duplicateItem("ada"))
    try s.run(#"{"op":"update","item":"ada","fields":{"email":"ada@example.com"}}"#)
    #expect(s.fields(of: "ada") == ["phone": "555-0100", "email": "ada@example.com"])
    try s.run(#"{"op":"deselect"}"#)
    #expect(s.selectedItems == [])
    #expect(
      s.json(event: 12)
        == #"{"event":12,"sections":[{"id":"favorites","items":[{"id":"fav-ada","parent":null,"level":0,"expanded":false,"title":"Ada"},{"id":"fav-alan","parent":null,"level":0,"expanded":false,"title":"Alan"}],"visible":["fav-ada","fav-alan"]},{"id":"all","items":[{"id":"ada","parent":null,"level":0,"expanded":false,"title":"Ada","fields":{"email":"ada@example.com","phone":"555-0100"}},{"id":"alan","parent":null,"level":0,"expanded":false,"title":"Alan"},{"id":"grace","parent":null,"level":0,"expanded":false,"title":"Grace"}],"visible":["ada","alan","grace"]}],"selected":[]}"#
    )
  }
}
