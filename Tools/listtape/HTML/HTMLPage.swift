import Foundation

/// The viewer page: static markup, inline CSS, the data blocks (the window's numbers as
/// JSON, the log's bytes and the reader module as base64) and one inline script that
/// inflates the log's frames with the browser's `DecompressionStream`, has the module check,
/// decode, fold and diff them, and draws everything with `textContent` (never HTML built
/// from data).
/// A strict Content-Security-Policy allows only that script (by its SHA-256), compiling the
/// embedded module, and inline styles, so the page can make no request at all.
enum HTMLPage {
  /// Writes the whole page around the report's parts (already escaped for `<script>`)
  /// through `emit`, the log's base64 a piece at a time (memory stays a piece, not the
  /// page: a 10M-event log's page is over 120 MB). Returns the page's size in bytes.
  static func write(
    _ parts: HTMLReport.Parts, _ emit: ([UInt8]) throws(CLIError) -> Void
  ) throws(CLIError) -> Int {
    var written = 0
    func put(_ bytes: [UInt8]) throws(CLIError) {
      written += bytes.count
      try emit(bytes)
    }
    var out = Array(
      """
      <!DOCTYPE html>
      <html lang="en">
      <head>
      <meta charset="utf-8">
      <meta http-equiv="Content-Security-Policy" content="\(policy)">
      <meta name="viewport" content="width=device-width, initial-scale=1">
      <meta name="generator" content="listtape \(CLI.version)">
      <title>ListTape viewer</title>
      <style>\(style)</style>
      </head>
      <body>
      \(body)
      <script type="application/json" id="listtape-data">
      """.utf8)
    out += parts.data
    out += Array("</script>\n<script type=\"application/octet-stream\" id=\"listtape-log\">".utf8)
    try put(out)
    try parts.log.forEachBase64Piece { piece throws(CLIError) in try put(piece) }
    out = Array("</script>\n<script type=\"application/wasm\" id=\"listtape-wasm\">\n".utf8)
    out += Array(ViewerModule.base64.utf8)
    out += Array("\n</script>\n<script>".utf8)
    out += Array(script.utf8)
    out += Array("</script>\n</body>\n</html>\n".utf8)
    try put(out)
    return written
  }

  /// Only the inline script (by hash) runs, and it may compile WebAssembly; nothing loads.
  static let policy =
    "default-src 'none'; script-src 'sha256-"
    + Data(SHA256.digest(Array(script.utf8))).base64EncodedString()
    + "' 'wasm-unsafe-eval'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; "
    + "form-action 'none'"

  static let body = """
    <header>
      <h1>ListTape <span id="name"></span></h1>
      <div id="summary" class="dim"></div>
    </header>
    <nav id="controls">
      <button id="first" title="Event 0 of the window (Home)">|◀</button>
      <button id="prev" title="Previous event (←)">◀</button>
      <button id="play" title="Play / pause (space)">▶ play</button>
      <button id="next" title="Next event (→)">▶</button>
      <button id="last" title="Last event (End)">▶|</button>
      <button id="prevmark" title="Previous mark">◆◀</button>
      <button id="nextmark" title="Next mark">▶◆</button>
      <button id="nextfault" title="Next fault">▶✗</button>
      <label>event <input id="num" type="number" min="0" step="1"></label>
      <label><input id="hidden" type="checkbox"> hidden rows</label>
    </nav>
    <div id="timeline">
      <input id="slider" type="range" min="0" step="1" aria-label="event">
      <div id="bar"></div>
    </div>
    <main>
      <section id="left">
        <div id="eventhead"></div>
        <div id="fault"></div>
        <div id="listsummary" class="dim"></div>
        <div id="list"></div>
      </section>
      <section id="right">
        <h2>Diff from the previous event</h2>
        <div id="diff"></div>
        <h2>Events</h2>
        <div id="events"></div>
      </section>
    </main>
    <footer class="dim">← → step · Home End · space play · #event=N in the address selects N · <output id="selftest"></output> <output id="netcheck"></output></footer>
    <pre id="check"></pre>
    """

  static let style = """
    :root { color-scheme: light dark; --fg: #1d1d1f; --bg: #fff; --dim: #6e6e73; --line: #d2d2d7;
      --sel: #d4e8ff; --mark: #b8860b; --fault: #d70015; --add: #1a7f37; --del: #cf222e; --acc: #0066cc; }
    @media (prefers-color-scheme: dark) { :root { --fg: #f5f5f7; --bg: #1c1c1e; --dim: #98989d;
      --line: #3a3a3c; --sel: #0a3a6b; --mark: #ffd60a; --fault: #ff453a; --add: #32d74b;
      --del: #ff453a; --acc: #0a84ff; } }
    * { box-sizing: border-box; }
    body { margin: 0; padding: 12px 16px; font: 14px/1.45 system-ui, -apple-system, "DejaVu Sans",
      sans-serif; color: var(--fg); background: var(--bg); }
    .mono, #list, #diff, #events, #eventhead, #fault { font-family: ui-monospace, "SF Mono",
      "DejaVu Sans Mono", Menlo, monospace; font-size: 13px; }
    h1 { font-size: 18px; margin: 0 0 2px; } h1 span { font-weight: 400; color: var(--dim); }
    h2 { font-size: 13px; text-transform: uppercase; letter-spacing: .04em; color: var(--dim);
      margin: 12px 0 4px; }
    .dim { color: var(--dim); }
    nav { display: flex; flex-wrap: wrap; gap: 6px; align-items: center; margin: 10px 0 6px; }
    button { font: inherit; padding: 2px 10px; border: 1px solid var(--line); border-radius: 6px;
      background: transparent; color: var(--fg); cursor: pointer; }
    button:hover { border-color: var(--acc); }
    #num { width: 8em; font: inherit; }
    #timeline { position: relative; margin-bottom: 12px; }
    #slider { width: 100%; margin: 0; }
    #bar { position: relative; height: 14px; border-radius: 3px; background: var(--line); }
    .tick { position: absolute; top: 0; width: 3px; height: 14px; cursor: pointer; }
    .tick.mark { background: var(--mark); } .tick.fault { background: var(--fault); }
    .tick.here { background: var(--acc); width: 2px; height: 18px; top: -2px; pointer-events: none; }
    main { display: grid; grid-template-columns: minmax(0, 3fr) minmax(0, 2fr); gap: 20px; }
    #eventhead { font-weight: 600; } #fault { color: var(--fault); min-height: 1.45em; }
    #eventhead .inexact { color: var(--mark); }
    .section { font-weight: 700; color: var(--acc); margin-top: 8px; }
    .section .dim { font-weight: 400; }
    .row { white-space: pre; padding: 0 4px; border-radius: 4px; }
    .row.selected { background: var(--sel); }
    .row.hidden { opacity: .45; }
    .tri { display: inline-block; width: 1.2em; color: var(--dim); }
    .title { color: var(--acc); margin-left: .8em; } .fields { color: var(--dim); margin-left: .8em; }
    .check { color: var(--add); margin-left: .5em; }
    .d-add { color: var(--add); } .d-del { color: var(--del); } .d-mod { color: var(--mark); }
    .d-sec { color: var(--acc); font-weight: 600; }
    .d-line { white-space: pre-wrap; }
    .ev { white-space: nowrap; overflow: hidden; text-overflow: ellipsis; cursor: pointer;
      padding: 0 4px; border-radius: 4px; }
    .ev:hover { background: var(--line); } .ev.current { background: var(--sel); }
    .ev .n { color: var(--dim); display: inline-block; min-width: 5ch; }
    .ev .op { color: var(--acc); } .ev.faulted .op { color: var(--fault); }
    .ev .label { color: var(--mark); }
    footer { margin-top: 16px; font-size: 12px; }
    """

  /// The viewer. Plain ES2017, no libraries. The log is read by the library's own code,
  /// compiled to WebAssembly (Tools/wasm): the module checks the page's copy of the log
  /// frame by frame, decodes and folds it once (keeping seek points), then makes any state
  /// from the seek point before it, words each event's diff as `listtape diff` does and
  /// lists events as `listtape events` does. The script inflates frames (the browser's
  /// `DecompressionStream`: zlib streams, "deflate" there), draws and navigates.
  static let script = #"""
    (async function () {
    'use strict';
    function $(id) { return document.getElementById(id); }
    function el(tag, cls, text) {
      var e = document.createElement(tag);
      if (cls) e.className = cls;
      if (text !== undefined && text !== null) e.textContent = String(text);
      return e;
    }
    /** The text of a data block, which is then emptied (the page keeps one copy). */
    function take(id) { var e = $(id), t = e.textContent; e.textContent = ''; return t; }
    /** A log the page cannot read: say why, draw no state. */
    function fail(message) {
      $('eventhead').textContent = 'This page cannot show the log: ' + message;
      $('fault').textContent = '✗ ' + message;
      $('selftest').textContent = 'error: ' + message;
      document.body.dataset.error = message;
      throw new Error(message);
    }
    var D = JSON.parse(take('listtape-data'));
    var FROM = D.from, TO = D.to, FIRST = D.from - 1;
    // A salvaged log: the ranges of states that are not the recorded ones (docs/cli.md,
    // "Damaged logs"); the fold restores the recorded state at the recovery point after one.
    var inexact = D.inexact || [];
    function isInexact(n) { return inexact.some(function (r) { return r[0] <= n && n <= r[1]; }); }
    var started = performance.now(), phases = {};
    function phase(name) { phases[name] = Math.round(performance.now() - started); }

    // ---- The reader: the library's frame checks, decoder, reducer and differ, in WebAssembly. ----
    function base64Bytes(text) {
      var s = atob(text.replace(/\s+/g, '')), b = new Uint8Array(s.length);
      for (var i = 0; i < s.length; i++) b[i] = s.charCodeAt(i);
      return b;
    }
    // Its WASI imports serve only its command-line check (`wasmkit run`); the page never
    // calls that entry point.
    function noWASI() { return 52; }
    var W = new WebAssembly.Instance(new WebAssembly.Module(base64Bytes(take('listtape-wasm'))),
      { wasi_snapshot_preview1: { fd_read: noWASI, fd_write: noWASI } }).exports;
    var seed = new Uint32Array(2);
    crypto.getRandomValues(seed);
    W.lt_seed(seed[0], seed[1]);
    var utf8 = new TextDecoder();
    function put(bytes) {
      var p = W.lt_alloc(bytes.length);
      new Uint8Array(W.memory.buffer, p, bytes.length).set(bytes);
      return p;
    }
    function resultBytes() { return new Uint8Array(W.memory.buffer, W.lt_result(), W.lt_result_length()); }
    function result() { return utf8.decode(resultBytes()); }

    var log = base64Bytes(take('listtape-log'));
    phase('decoded');
    if (log.length !== D.bytes) fail('the page holds ' + log.length + ' bytes of log, not ' + D.bytes);
    var frames = W.lt_open(put(log), log.length);
    if (frames < 0) fail(result());
    phase('checked');
    // Each frame is one zlib stream (RFC 1950: what DecompressionStream calls "deflate").
    function inflate(bytes) {
      return new Response(new Blob([bytes]).stream().pipeThrough(new DecompressionStream('deflate'))).arrayBuffer();
    }
    /** Inflates the frames the module wants in `first...` (and the META frames before). */
    async function inflateFrames(first, through) {
      var jobs = [];
      for (var f = 0; f <= through; f++) {
        if (!W.lt_frame_inflates(f) || (f < first && W.lt_frame_type(f) !== 3)) continue;
        var start = W.lt_frame_start(f);
        jobs.push({ frame: f, bytes: inflate(log.subarray(start, start + W.lt_frame_length(f))) });
      }
      var inflated;
      try {
        inflated = await Promise.all(jobs.map(function (j) { return j.bytes; }));
      } catch (err) {
        fail('a frame of the log does not inflate (' + err + ')');
      }
      jobs.forEach(function (j, k) {
        var bytes = new Uint8Array(inflated[k]);
        if (W.lt_inflated(j.frame, put(bytes), bytes.length) < 0) fail(result());
      });
    }
    // A salvaged log, or a check, inflates every frame first; else the frames the last
    // state needs come first, the rest after it is drawn.
    var wantsCheck = /check/.test(location.hash), wantsDiffs = /diffs/.test(location.hash);
    var at = /at=([\d,]+)/.exec(location.hash), wantsTiming = /timing/.test(location.hash);
    var early = /early=(\d+)/.exec(location.hash);
    var eager = (D.anchors || []).length || D.inexact.length || wantsCheck || wantsDiffs || at;
    var firstFrame = eager ? 0 : W.lt_first_frame(TO);
    await inflateFrames(firstFrame, frames - 1);
    phase('inflated');
    (D.anchors || []).forEach(function (n) { W.lt_anchor(n); });
    if (W.lt_prepare(TO, D.spacing) < 0) fail(result());
    // The first fold of the window (faults, marks, seek points) runs in slices after the
    // first paint, which starts from the log's last checkpoint; a salvaged log's, and a
    // check's, runs first.
    var faultList = [], markList = [], faults = new Map(), marks = new Map();
    var markNumbers = [], faultNumbers = [], passDone = false;
    function pass(events) {
      var r = W.lt_pass(events);
      if (r < 0) fail(result());
      if (r === 1 && !passDone) {
        passDone = true;
        phase('passed');
        W.lt_faults();
        faultList = JSON.parse(result());
        W.lt_marks();
        markList = JSON.parse(result());
        faults = new Map(faultList);
        marks = new Map(markList);
        markNumbers = markList.map(function (m) { return m[0]; });
        faultNumbers = faultList.map(function (f) { return f[0]; });
      }
      return passDone;
    }
    if (eager) {
      while (!pass(1 << 20)) { /* to the end */ }
    }

    /** Events lo...hi as [n, op, words, time, labels] ([n] when the log lost it). */
    function events(lo, hi) { if (W.lt_events(lo, hi) < 0) fail(result()); return JSON.parse(result()); }
    function seek(n) { if (W.lt_seek(n) < 0) fail(result()); }
    // The diff from the previous event: the module's, in the words of `listtape diff`.
    // Its lines are [kind, text]; the kinds are DiffLine.Kind's raw values.
    var DIFF_CLASSES = ['d-add', 'd-del', 'd-mod', 'd-mod', 'd-sec', '', 'dim', 'dim'];
    /** Folds event n onto the state after n - 1: 0 applied, 1 fault (the words in
     *  result()), 4 lost; diffLines() then says what it changed. */
    function stepDiffing(n) {
      var o = W.lt_step(n, 1);
      if (o === 5 || o === 3) fail(result());
      return o;
    }
    function diffLines() { W.lt_diff(2); return JSON.parse(result()); }

    // ---- Rendering ----
    var position = FIRST, playing = null, MAX_ROWS = 500;
    // A time beyond a Date's range (±8.64e15 ms) in milliseconds, as a number: toISOString
    // throws on it, and the event's header would stop there.
    function time(t) {
      if (typeof t !== 'number') return '';
      var d = new Date(t);
      return isNaN(d.getTime()) ? t + ' ms' : d.toISOString();
    }
    function clamp(n) { return Math.max(FIRST, Math.min(TO, n)); }
    function plural(n, word) { return n + ' ' + word + (n === 1 ? '' : 's'); }

    // The list's lines as drawn last, by key (a section's header or a row's values): a
    // step redraws only the lines whose values changed, not the up to 500 rows.
    var drawnKeys = [];
    function renderList() {
      var showHidden = $('hidden').checked;
      W.lt_rows(MAX_ROWS, showHidden ? 1 : 0);
      var d = JSON.parse(result()), lines = [], drawn = 0;
      var multi = d[0], items = d[1], visible = d[2], selected = d[3], sections = d[4];
      function sectionLine(s) {
        var h = el('div', 'section', s[0]);
        h.appendChild(el('span', 'dim', '  ' + plural(s[1], 'item') + ', ' + s[2] + ' visible'));
        return h;
      }
      function rowLine(r) {
        var flags = r[2], isVisible = (flags & 4) !== 0, isSelected = (flags & 2) !== 0;
        var title = r.length > 3 ? r[3] : null;
        var row = el('div', 'row' + (isSelected ? ' selected' : '') + (isVisible ? '' : ' hidden'));
        row.dataset.id = r[1];
        row.style.paddingLeft = (4 + r[0] * 20) + 'px';
        row.appendChild(el('span', 'tri', (flags & 8) ? ((flags & 1) ? '▾' : '▸') : ''));
        row.appendChild(el('span', 'id', r[1]));
        if (title !== null && title !== r[1]) row.appendChild(el('span', 'title', '"' + title + '"'));
        if (r.length > 4) row.appendChild(el('span', 'fields', '[' + r[4] + ']'));
        if (isSelected) row.appendChild(el('span', 'check', '✓'));
        if (!isVisible) row.appendChild(el('span', 'dim', '  (hidden)'));
        return row;
      }
      d[5].forEach(function (s) {
        lines.push(['s' + JSON.stringify([s[0], s[1], s[2]]), sectionLine, s]);
        s[3].forEach(function (r) {
          drawn++;
          lines.push(['r' + JSON.stringify(r), rowLine, r]);
        });
      });
      var shown = showHidden ? items : visible;
      function dimLine(text) { return el('div', 'dim', text); }
      if (shown > drawn) lines.push(['m' + (shown - drawn), dimLine, '… ' + (shown - drawn) + ' more rows not drawn']);
      if (!sections) lines.push(['n', dimLine, '(no sections)']);
      var list = $('list'), kids = list.children;
      for (var i = 0; i < lines.length; i++) {
        if (i < kids.length && drawnKeys[i] === lines[i][0]) continue;
        var node = lines[i][1](lines[i][2]);
        if (i < kids.length) list.replaceChild(node, kids[i]); else list.appendChild(node);
        drawnKeys[i] = lines[i][0];
      }
      while (kids.length > lines.length) list.removeChild(list.lastChild);
      drawnKeys.length = lines.length;
      $('listsummary').textContent = plural(sections, 'section') + ' · ' + plural(items, 'item') +
        ' · ' + visible + ' visible · ' + selected + ' selected · ' +
        (multi ? 'multiple' : 'single') + ' selection';
    }

    var LOST = '(lost in a salvage, or unreadable after lost events)';
    function renderEvents(listed) {
      var frag = document.createDocumentFragment();
      listed.forEach(function (e) {
        var n = e[0], row = el('div', 'ev' + (n === position ? ' current' : '') + (faults.has(n) ? ' faulted' : ''));
        row.dataset.n = String(n);
        row.appendChild(el('span', 'n', '#' + n));
        row.appendChild(el('span', 'op', e.length > 1 ? e[1] : '(lost)'));
        row.appendChild(el('span', 'desc', '  ' + (e.length > 1 ? e[2] : LOST)));
        if (marks.has(n)) row.appendChild(el('span', 'label', '  ◆ ' + marks.get(n)));
        if (faults.has(n)) row.appendChild(el('span', 'fault', '  ✗ fault'));
        row.title = faults.has(n) ? 'fault: ' + faults.get(n) : '';
        frag.appendChild(row);
      });
      $('events').replaceChildren(frag);
    }

    var addressTimer = null;
    function render() {
      var n = position, lines = null, fault = '', outcome = 0;
      if (n >= FROM) {
        outcome = stepDiffing(n);
        if (outcome === 1) fault = result();
        lines = diffLines();
      } else {
        seek(n);
      }
      $('slider').value = String(n);
      $('num').value = String(n);
      var lo = Math.max(FROM, position - 12), hi = Math.min(TO, lo + 24);
      lo = Math.max(FROM, Math.min(lo, hi - 24));
      var listed = events(lo, hi), e = null;
      listed.forEach(function (x) { if (x[0] === n) e = x; });
      var head = $('eventhead');
      head.replaceChildren();
      head.appendChild(el('span', '', 'event ' + n + ' of ' + D.total));
      if (isInexact(n)) head.appendChild(el('span', 'inexact', '  (not the recorded state)'));
      if (e && e.length > 1) {
        head.appendChild(el('span', 'op', '  ' + e[1]));
        head.appendChild(el('span', 'dim', '  ' + time(e[3])));
        if (marks.has(n)) head.appendChild(el('span', 'label', '  “' + marks.get(n) + '”'));
        head.appendChild(el('div', 'desc dim', e[2]));
      } else if (e) {
        head.appendChild(el('span', 'op', '  (lost)'));
        head.appendChild(el('div', 'desc dim', LOST));
      } else {
        head.appendChild(el('span', 'dim', n === 0 ? '  (the empty list before the first event)' : '  (the state before the window)'));
      }
      $('fault').textContent = fault ? '✗ fault: event ' + n + ': ' + fault + ' (the state is unchanged)' : '';
      renderList();
      var d = $('diff');
      d.replaceChildren();
      if (!lines) d.appendChild(el('div', 'dim', '(no earlier event in this window)'));
      else lines.forEach(function (l) { d.appendChild(el('div', 'd-line ' + DIFF_CLASSES[l[0]], l[1])); });
      renderEvents(listed);
      $('here').style.left = pct(n) + '%';
      // The address follows once the moves stop: Chromium takes up to 7 ms a call, more
      // than the rest of a step.
      clearTimeout(addressTimer);
      addressTimer = setTimeout(function () {
        try { history.replaceState(null, '', '#event=' + position); } catch (err) { /* file: URLs may refuse */ }
      }, 150);
    }

    // The frames before `firstFrame` are inflated after the first paint: a move meanwhile
    // waits for them (drawn once they are in) instead of reading a frame not yet inflated.
    var allInflated = firstFrame === 0, waiting = false;
    function go(n) {
      position = clamp(n);
      if (allInflated) { render(); return; }
      waiting = true;
      document.body.dataset.waited = '1';
      $('slider').value = String(position);
      $('eventhead').textContent = 'event ' + position + ' of ' + D.total + ' · reading the log…';
    }
    function pct(n) { return TO > FIRST ? (n - FIRST) * 100 / (TO - FIRST) : 0; }

    function buildBar() {
      var bar = $('bar'), buckets = new Map(), width = 1000;
      function add(n, kind, text) {
        if (n < FROM || n > TO) return;
        var b = Math.round(pct(n) * width / 100), cell = buckets.get(b);
        if (!cell || (kind === 'fault' && cell.kind !== 'fault')) buckets.set(b, { n: n, kind: kind, text: text });
      }
      markList.forEach(function (m) { add(m[0], 'mark', 'event ' + m[0] + ': mark “' + m[1] + '”'); });
      faultList.forEach(function (f) { add(f[0], 'fault', 'event ' + f[0] + ': fault: ' + f[1]); });
      buckets.forEach(function (cell, b) {
        var t = el('div', 'tick ' + cell.kind);
        t.style.left = 'calc(' + (b / 10) + '% - 1px)';
        t.title = cell.text;
        t.addEventListener('click', function () { go(cell.n); });
        bar.appendChild(t);
      });
    }

    function nextIn(list, n) {
      var lo = 0, hi = list.length;
      while (lo < hi) { var mid = (lo + hi) >> 1; if (list[mid] <= n) lo = mid + 1; else hi = mid; }
      return lo < list.length && list[lo] <= TO ? list[lo] : null;
    }
    function prevIn(list, n) {
      var lo = 0, hi = list.length;
      while (lo < hi) { var mid = (lo + hi) >> 1; if (list[mid] < n) lo = mid + 1; else hi = mid; }
      return lo > 0 && list[lo - 1] >= FROM ? list[lo - 1] : null;
    }
    function togglePlay() {
      if (playing) { clearInterval(playing); playing = null; $('play').textContent = '▶ play'; return; }
      if (position >= TO) go(FIRST);
      $('play').textContent = '❚❚ pause';
      playing = setInterval(function () { if (position >= TO) togglePlay(); else go(position + 1); }, 250);
    }

    // A check for tests (#check in the address): folds the whole window again from the
    // seek point before it, one event at a time, and writes one line per event (`ok` or
    // `fault: …`, then the FNV-1a 32 of the state JSON) to #check; the faults must be the
    // ones the first fold found.
    function check() {
      if (W.lt_check(FROM, TO) < 0) fail(result());
      var lines = result().split('\n'), bad = [];
      lines.pop();
      lines.forEach(function (line, k) {
        var n = FROM + k, m = /^fault: (.*) [0-9a-f]{8}$/.exec(line);
        if ((m !== null) !== faults.has(n) || (m && m[1] !== faults.get(n))) bad.push('fault at event ' + n);
      });
      $('check').textContent = lines.join('\n');
      $('selftest').textContent = bad.length ? 'check: mismatch: ' + bad.slice(0, 5).join(', ')
        : 'check: ok, ' + lines.length + ' events, ' + W.lt_points() + ' seek points';
    }

    // A check for tests (#diffs in the address): every event's diff from the one before, as
    // the page draws it: `@ N`, then its lines, for each event of the window.
    function diffCheck() {
      var out = [];
      for (var n = FROM; n <= TO; n++) {
        stepDiffing(n);
        out.push('@ ' + n);
        diffLines().forEach(function (l) { out.push(l[1]); });
      }
      $('check').textContent = out.join('\n');
      $('selftest').textContent = 'diffs: ' + (TO - FROM + 1) + ' events';
    }

    // For tests (#at=N,M,… in the address): at each event, the FNV-1a 32 of the state JSON,
    // the event as the events list has it, and the diff from the event before, as the page
    // draws them: `@ N hash`, `= op  words`, then the diff's lines.
    function atCheck(list) {
      var out = [];
      list.forEach(function (n) {
        go(n);
        W.lt_state(n);
        var bytes = resultBytes(), h = 0x811c9dc5;
        for (var i = 0; i < bytes.length; i++) h = Math.imul(h ^ bytes[i], 0x01000193) >>> 0;
        out.push('@ ' + n + ' ' + ('0000000' + h.toString(16)).slice(-8));
        var e = events(n, n)[0];
        out.push('= ' + (e && e.length > 1 ? e[1] + '  ' + e[2] : '(lost)'));
        $('diff').querySelectorAll('.d-line').forEach(function (l) { out.push(l.textContent); });
      });
      $('check').textContent = out.join('\n');
    }

    // For docs/performance.md (#timing in the address): what the page took to open, and
    // the time to draw after jumps to spread-out events, steps forward and steps back.
    function timing() {
      function ms(body) { var t = performance.now(); body(); return +(performance.now() - t).toFixed(1); }
      var jumps = [], steps = [], back = [], span = TO - FIRST;
      for (var k = 1; k <= 20; k++) {
        var n = FIRST + Math.floor(span * ((k * 0.618034) % 1));
        jumps.push(ms(function () { go(n); }));
      }
      var restores = W.lt_restores();
      for (k = 0; k < 20; k++) steps.push(ms(function () { go(position + 1); }));
      for (k = 0; k < 20; k++) back.push(ms(function () { go(position - 1); }));
      // Steps forward, then back over them, never start over from a seek point.
      var stepRestores = W.lt_restores() - restores;
      var heap = performance.memory ? performance.memory.usedJSHeapSize : 0;
      var report = JSON.stringify({ phases: phases, firstRender: +document.body.dataset.firstRender,
        jumps: jumps, steps: steps, back: back, wasmBytes: W.memory.buffer.byteLength, jsHeap: heap,
        points: W.lt_points(), pointBytes: W.lt_point_bytes(), tables: W.lt_tables(),
        stepRestores: stepRestores });
      $('check').textContent = report;
      // Read by a test through the DevTools list of pages, which carries titles.
      document.title = 'listtape-timing ' + report;
    }

    $('name').textContent = D.name + ' · events ' + FROM + '…' + TO + ' of ' + D.total;
    document.title = 'ListTape · ' + D.name;
    function summarize() {
      $('summary').textContent = plural(TO - FROM + 1, 'event') + (passDone ? ' · ' +
        plural(markList.length, 'mark') + ' · ' + plural(faultList.length, 'fault') : ' · reading…');
    }
    var slider = $('slider');
    slider.min = String(FIRST); slider.max = String(TO);
    slider.addEventListener('input', function () { go(Number(slider.value)); });
    $('num').min = String(FIRST); $('num').max = String(TO);
    $('num').addEventListener('change', function () { var v = parseInt($('num').value, 10); if (!isNaN(v)) go(v); });
    $('first').addEventListener('click', function () { go(FIRST); });
    $('last').addEventListener('click', function () { go(TO); });
    $('prev').addEventListener('click', function () { go(position - 1); });
    $('next').addEventListener('click', function () { go(position + 1); });
    $('play').addEventListener('click', togglePlay);
    $('nextmark').addEventListener('click', function () { var m = nextIn(markNumbers, position); if (m !== null) go(m); });
    $('prevmark').addEventListener('click', function () { var m = prevIn(markNumbers, position); if (m !== null) go(m); });
    $('nextfault').addEventListener('click', function () { var m = nextIn(faultNumbers, position); if (m !== null) go(m); });
    $('hidden').addEventListener('change', render);
    $('events').addEventListener('click', function (ev) {
      var t = ev.target.closest('.ev');
      if (t) go(Number(t.dataset.n));
    });
    document.addEventListener('keydown', function (ev) {
      if (ev.target && ev.target.tagName === 'INPUT' && ev.target.type === 'number') return;
      if (ev.key === 'ArrowRight') { go(position + 1); ev.preventDefault(); }
      else if (ev.key === 'ArrowLeft') { go(position - 1); ev.preventDefault(); }
      else if (ev.key === 'Home') go(FIRST);
      else if (ev.key === 'End') go(TO);
      else if (ev.key === ' ') { togglePlay(); ev.preventDefault(); }
    });
    function fromHash() {
      var m = /event=(\d+)/.exec(location.hash);
      return m ? Number(m[1]) : TO;
    }
    var here = el('div', 'tick here');
    here.id = 'here';
    $('bar').appendChild(here);
    position = clamp(fromHash());
    summarize();
    render();
    // Navigation start to the first state drawn, for docs/performance.md.
    document.body.dataset.firstRender = performance.now().toFixed(0);
    phase('drawn');
    window.addEventListener('hashchange', function () { var n = clamp(fromHash()); if (n !== position) go(n); });
    function finish() {
      buildBar();
      summarize();
      render();
      if (wantsCheck) check();
      if (wantsDiffs) diffCheck();
      if (at) atCheck(at[1].split(',').map(Number));
      if (early) atCheck([position]);
      if (wantsTiming) timing();
      var loads = performance.getEntriesByType('resource').length;
      $('netcheck').textContent = 'resources loaded: ' + loads;
      document.body.dataset.ready = '1';
    }
    // The frames before, then the rest of the first fold a slice at a time, so the page
    // answers meanwhile.
    // For tests (#early=N in the address): a move before the frames above are inflated.
    if (early) go(Number(early[1]));
    if (firstFrame > 0) await inflateFrames(0, firstFrame - 1);
    allInflated = true;
    if (waiting) { waiting = false; render(); }
    log = null;
    (function slice() {
      if (pass(32768)) finish(); else setTimeout(slice, 0);
    })();
    })();
    """#
}
