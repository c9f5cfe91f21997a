/// Counts as every command prints them. The HTML viewer's WebAssembly module compiles this
/// file too (Tools/wasm/build.sh), so its diff counts in the same words as `listtape diff`.
enum Counting {
  /// `1,234,567` for large counts, so figures read at a glance.
  static func count(_ n: Int) -> String {
    let digits = Array(String(n.magnitude))
    var out = ""
    for (i, d) in digits.enumerated() {
      if i > 0 && (digits.count - i) % 3 == 0 { out.append(",") }
      out.append(d)
    }
    return (n < 0 ? "-" : "") + out
  }

  /// `1 event`, `2 events`.
  static func plural(_ n: Int, _ word: String, _ plural: String? = nil) -> String {
    "\(count(n)) \(n == 1 ? word : plural ?? word + "s")"
  }
}
