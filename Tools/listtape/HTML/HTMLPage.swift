import Foundation

/// The viewer page: static markup, inline CSS, the data blocks (the report's JSON, the
/// events as JSON Lines, the reducer and differ as base64 WebAssembly) and one inline script
/// that folds and diffs with that module and draws everything with `textContent` (never
/// HTML built from data).
/// A strict Content-Security-Policy allows only that script (by its SHA-256), compiling the
/// embedded module, and inline styles, so the page can make no request at all.
enum HTMLPage {
  /// The whole page around the report's parts (already escaped for `<script>`).
  static func render(_ parts: HTMLReport.Parts) -> [UInt8] {
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
    out += Array("</script>\n<script type=\"application/jsonl\" id=\"listtape-events\">".utf8)
    out += parts.events
    out += Array("</script>\n<script type=\"application/wasm\" id=\"listtape-wasm\">\n".utf8)
    out += Array(ViewerModule.base64.utf8)
    out += Array("\n</script>\n<script>".utf8)
    out += Array(script.utf8)
    out += Array("</script>\n</body>\n</html>\n".utf8)
    return out
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

  /// The viewer. Plain ES2017, no libraries. States and diffs come from the model and the
  /// differ themselves, compiled to WebAssembly (Tools/wasm): the module loads the
  /// checkpoint at or before an event, folds the events in between and words each event's
  /// diff as `listtape diff` does; the script only draws and navigates.
  static let script = #"""
    (function () {
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
    var D = JSON.parse(take('listtape-data'));
    var FROM = D.from, TO = D.to, FIRST = D.from - 1;
    var faults = new Map(D.faults), marks = new Map(D.marks);
    var markList = D.marks.map(function (m) { return m[0]; });
    // A salvaged log: the ranges of states that are not the recorded ones (docs/cli.md,
    // "Damaged logs"); a checkpoint right after one restores the recorded state.
    var inexact = D.inexact || [];
    function isInexact(n) { return inexact.some(function (r) { return r[0] <= n && n <= r[1]; }); }
    var faultList = D.faults.map(function (f) { return f[0]; });

    // ---- The reducer: ListTapeModel compiled to WebAssembly with Embedded Swift. ----
    function base64Bytes(text) {
      var s = atob(text), b = new Uint8Array(s.length);
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
    (function () {
      var bytes = new TextEncoder().encode(take('listtape-events'));
      var count = W.lt_events(put(bytes), bytes.length);
      if (count !== TO - FROM + 1) throw new Error('expected ' + (TO - FROM + 1) + ' events, found ' + count);
    })();
    function event(n) { W.lt_event(n - FROM); return JSON.parse(result()); }

    // ---- Seeking: the nearest checkpoint at or before n, then fold forward. ----
    var cps = D.checkpoints, curN = null;
    function checkpointIndex(n) {
      var lo = 0, hi = cps.length;
      while (lo < hi) { var mid = (lo + hi) >> 1; if (cps[mid][0] <= n) lo = mid + 1; else hi = mid; }
      return lo - 1;
    }
    function load(c) {
      var bytes = base64Bytes(c[1]), p = put(bytes), bad = W.lt_load(p, bytes.length);
      W.lt_free(p);
      if (bad) throw new Error('checkpoint ' + c[0] + ': ' + result());
      curN = c[0];
    }
    function seek(n) {
      var c = cps[checkpointIndex(n)];
      if (curN === null || curN > n || curN < c[0]) load(c);
      while (curN < n) { curN++; W.lt_apply(curN - FROM); }
    }
    /** Folds event curN + 1: 0 applied, 1 fault (the message in result()). */
    function step() { curN++; return W.lt_apply(curN - FROM); }
    // The state at curN: every item in display order with what a renderer needs (section
    // headers included), and the selection mode.
    function state() {
      W.lt_rows();
      var d = JSON.parse(result()), out = [];
      d[1].forEach(function (s) {
        var head = { header: true, section: s[0], count: s[1].length, visible: 0 }, path = [];
        out.push(head);
        s[1].forEach(function (r) {
          var level = r[0], flags = r[2];
          path.length = level;
          out.push({ section: s[0], id: r[1], level: level, parent: level ? path[level - 1] : null,
            group: level ? 'i:' + path[level - 1] : 's:' + s[0],
            expanded: (flags & 1) !== 0, selected: (flags & 2) !== 0, visible: (flags & 4) !== 0,
            hasChildren: (flags & 8) !== 0, title: r.length > 3 ? r[3] : null,
            fields: r.length > 4 ? r[4] : null });
          path[level] = r[1];
          if (flags & 4) head.visible++;
        });
      });
      return { rows: out, multi: d[0] };
    }

    // ---- The diff from the previous event: the module's, in the words of `listtape diff`. ----
    // Its lines are [kind, text]; the kinds are DiffLine.Kind's raw values.
    var DIFF_CLASSES = ['d-add', 'd-del', 'd-mod', 'd-mod', 'd-sec', '', 'dim', 'dim'];
    /** Folds event curN + 1 and returns its outcome (0 applied, 1 fault: the message in
     *  result()); diffLines() then says what it changed. */
    function stepDiffing() { curN++; return W.lt_apply_diff(curN - FROM); }
    function diffLines() { W.lt_diff(2); return JSON.parse(result()); }

    // ---- Rendering ----
    var position = FIRST, playing = null, MAX_ROWS = 5000;
    function time(t) { return typeof t === 'number' ? new Date(t).toISOString() : ''; }
    function clamp(n) { return Math.max(FIRST, Math.min(TO, n)); }

    function renderList(rs, multi) {
      var list = $('list'), showHidden = $('hidden').checked, frag = document.createDocumentFragment();
      var shown = 0, items = 0, visible = 0, selected = 0, sections = 0;
      rs.forEach(function (r) {
        if (r.header) {
          sections++;
          if (shown >= MAX_ROWS) return;
          var h = el('div', 'section', r.section);
          h.appendChild(el('span', 'dim', '  ' + r.count + ' item' + (r.count === 1 ? '' : 's') + ', ' + r.visible + ' visible'));
          frag.appendChild(h);
          return;
        }
        items++;
        if (r.visible) visible++;
        if (r.selected) selected++;
        if (!r.visible && !showHidden) return;
        if (++shown > MAX_ROWS) return;
        var row = el('div', 'row' + (r.selected ? ' selected' : '') + (r.visible ? '' : ' hidden'));
        row.dataset.id = r.id;
        row.style.paddingLeft = (4 + r.level * 20) + 'px';
        row.appendChild(el('span', 'tri', r.hasChildren ? (r.expanded ? '▾' : '▸') : ''));
        row.appendChild(el('span', 'id', r.id));
        if (r.title !== null && r.title !== r.id) row.appendChild(el('span', 'title', '"' + r.title + '"'));
        if (r.fields) row.appendChild(el('span', 'fields', '[' + r.fields + ']'));
        if (r.selected) row.appendChild(el('span', 'check', '✓'));
        if (!r.visible) row.appendChild(el('span', 'dim', '  (hidden)'));
        frag.appendChild(row);
      });
      if (shown > MAX_ROWS) frag.appendChild(el('div', 'dim', '… ' + (shown - MAX_ROWS) + ' more rows not drawn'));
      if (!sections) frag.appendChild(el('div', 'dim', '(no sections)'));
      list.replaceChildren(frag);
      $('listsummary').textContent = sections + ' section' + (sections === 1 ? '' : 's') + ' · ' +
        items + ' item' + (items === 1 ? '' : 's') + ' · ' + visible + ' visible · ' + selected +
        ' selected · ' + (multi ? 'multiple' : 'single') + ' selection';
    }

    function renderEvents() {
      var box = $('events'), frag = document.createDocumentFragment();
      var lo = Math.max(FROM, position - 12), hi = Math.min(TO, lo + 24);
      lo = Math.max(FROM, Math.min(lo, hi - 24));
      for (var n = lo; n <= hi; n++) {
        var e = event(n), row = el('div', 'ev' + (n === position ? ' current' : '') + (faults.has(n) ? ' faulted' : ''));
        row.dataset.n = String(n);
        row.appendChild(el('span', 'n', '#' + n));
        row.appendChild(el('span', 'op', e.op));
        row.appendChild(el('span', 'desc', '  ' + D.descriptions[n - FROM]));
        if (marks.has(n)) row.appendChild(el('span', 'label', '  ◆ ' + marks.get(n)));
        if (faults.has(n)) row.appendChild(el('span', 'fault', '  ✗ fault'));
        row.title = faults.has(n) ? 'fault: ' + faults.get(n) : '';
        frag.appendChild(row);
      }
      box.replaceChildren(frag);
    }

    function render() {
      var n = position, lines = null, fault = '';
      if (n >= FROM) {
        seek(n - 1);
        if (stepDiffing() === 1) fault = result();
        lines = diffLines();
      } else {
        seek(n);
      }
      var st = state(), now = st.rows;
      $('slider').value = String(n);
      $('num').value = String(n);
      var head = $('eventhead');
      head.replaceChildren();
      head.appendChild(el('span', '', 'event ' + n + ' of ' + D.total));
      if (isInexact(n)) head.appendChild(el('span', 'inexact', '  (not the recorded state)'));
      if (n >= FROM) {
        var e = event(n);
        head.appendChild(el('span', 'op', '  ' + e.op));
        head.appendChild(el('span', 'dim', '  ' + time(e.t)));
        if (marks.has(n)) head.appendChild(el('span', 'label', '  “' + marks.get(n) + '”'));
        head.appendChild(el('div', 'desc dim', D.descriptions[n - FROM]));
      } else {
        head.appendChild(el('span', 'dim', n === 0 ? '  (the empty list before the first event)' : '  (the state before the embedded window)'));
      }
      $('fault').textContent = fault ? '✗ fault: event ' + n + ': ' + fault + ' (the state is unchanged)' : '';
      renderList(now, st.multi);
      var d = $('diff');
      d.replaceChildren();
      if (!lines) d.appendChild(el('div', 'dim', '(no earlier event in this file)'));
      else lines.forEach(function (l) { d.appendChild(el('div', 'd-line ' + DIFF_CLASSES[l[0]], l[1])); });
      renderEvents();
      var here = $('here');
      here.style.left = pct(n) + '%';
      try { history.replaceState(null, '', '#event=' + n); } catch (err) { /* file: URLs may refuse */ }
    }

    function go(n) { position = clamp(n); render(); }
    function pct(n) { return TO > FIRST ? (n - FIRST) * 100 / (TO - FIRST) : 0; }

    function buildBar() {
      var bar = $('bar'), buckets = new Map(), width = 1000;
      function add(n, kind, text) {
        var b = Math.round(pct(n) * width / 100), cell = buckets.get(b);
        if (!cell || (kind === 'fault' && cell.kind !== 'fault')) buckets.set(b, { n: n, kind: kind, text: text });
      }
      D.marks.forEach(function (m) { add(m[0], 'mark', 'event ' + m[0] + ': mark “' + m[1] + '”'); });
      D.faults.forEach(function (f) { add(f[0], 'fault', 'event ' + f[0] + ': fault: ' + f[1]); });
      buckets.forEach(function (cell, b) {
        var t = el('div', 'tick ' + cell.kind);
        t.style.left = 'calc(' + (b / 10) + '% - 1px)';
        t.title = cell.text;
        t.addEventListener('click', function () { go(cell.n); });
        bar.appendChild(t);
      });
      var here = el('div', 'tick here');
      here.id = 'here';
      bar.appendChild(here);
    }

    function nextIn(list, n) { for (var i = 0; i < list.length; i++) if (list[i] > n) return list[i]; return null; }
    function prevIn(list, n) { for (var i = list.length - 1; i >= 0; i--) if (list[i] < n) return list[i]; return null; }
    function togglePlay() {
      if (playing) { clearInterval(playing); playing = null; $('play').textContent = '▶ play'; return; }
      if (position >= TO) go(FIRST);
      $('play').textContent = '❚❚ pause';
      playing = setInterval(function () { if (position >= TO) togglePlay(); else go(position + 1); }, 250);
    }

    // A check for tests (#check in the address): folds the whole window, writes one line per
    // event (`ok` or `fault: …`, then the FNV-1a 32 of the state JSON) to #check, and checks
    // the faults against the ones the native fold embedded and every checkpoint against the
    // folded state.
    function check() {
      var lines = [], bad = [], c = 1;
      load(cps[0]);
      for (var n = FROM; n <= TO; n++) {
        var outcome = step(), message = outcome === 0 ? 'ok' : (outcome === 1 ? 'fault: ' : 'malformed: ') + result();
        if ((outcome === 1) !== faults.has(n) || (outcome === 1 && message !== 'fault: ' + faults.get(n))) bad.push('fault at event ' + n);
        // A salvaged log: the checkpoint after a stretch of inexact states restores the
        // recorded state, which the fold cannot reach.
        if (c < cps.length && cps[c][0] === n && isInexact(n - 1)) load(cps[c++]);
        W.lt_state(n);
        var bytes = resultBytes(), h = 0x811c9dc5;
        for (var i = 0; i < bytes.length; i++) h = Math.imul(h ^ bytes[i], 0x01000193) >>> 0;
        lines.push(message + ' ' + ('0000000' + h.toString(16)).slice(-8));
        if (c < cps.length && cps[c][0] === n) {
          var folded = result();
          load(cps[c++]);
          W.lt_state(n);
          if (result() !== folded) bad.push('checkpoint at event ' + n);
        }
      }
      $('check').textContent = lines.join('\n');
      $('selftest').textContent = bad.length ? 'check: mismatch: ' + bad.slice(0, 5).join(', ')
        : 'check: ok, ' + lines.length + ' events, ' + (c - 1) + ' checkpoints';
    }

    // A check for tests (#diffs in the address): every event's diff from the one before, as
    // the page draws it: `@ N`, then its lines, for each event of the window.
    function diffCheck() {
      var out = [];
      load(cps[0]);
      for (var n = FROM; n <= TO; n++) {
        stepDiffing();
        out.push('@ ' + n);
        diffLines().forEach(function (l) { out.push(l[1]); });
      }
      $('check').textContent = out.join('\n');
      $('selftest').textContent = 'diffs: ' + (TO - FROM + 1) + ' events';
    }

    $('name').textContent = D.name + ' · events ' + FROM + '…' + TO + ' of ' + D.total;
    document.title = 'ListTape · ' + D.name;
    $('summary').textContent = (TO - FROM + 1) + ' events · ' + D.marks.length + ' mark' + (D.marks.length === 1 ? '' : 's') + ' · ' + D.faults.length + ' fault' + (D.faults.length === 1 ? '' : 's');
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
    $('nextmark').addEventListener('click', function () { var m = nextIn(markList, position); if (m !== null) go(m); });
    $('prevmark').addEventListener('click', function () { var m = prevIn(markList, position); if (m !== null) go(m); });
    $('nextfault').addEventListener('click', function () { var m = nextIn(faultList, position); if (m !== null) go(m); });
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
    buildBar();
    function fromHash() {
      var m = /event=(\d+)/.exec(location.hash);
      return m ? Number(m[1]) : TO;
    }
    var wantsCheck = /check/.test(location.hash), wantsDiffs = /diffs/.test(location.hash);
    position = clamp(fromHash());
    render();
    // Navigation start to the first state drawn, for docs/performance.md.
    document.body.dataset.firstRender = performance.now().toFixed(0);
    window.addEventListener('hashchange', function () { var n = clamp(fromHash()); if (n !== position) go(n); });
    if (wantsCheck) check();
    if (wantsDiffs) diffCheck();
    var loads = performance.getEntriesByType('resource').length;
    $('netcheck').textContent = 'resources loaded: ' + loads;
    })();
    """#
}
