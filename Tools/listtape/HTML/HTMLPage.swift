import Foundation

/// The viewer page: static markup, inline CSS and one inline script that reads the data
/// block and draws everything with `textContent` (never HTML built from data). A strict
/// Content-Security-Policy allows only that script (by its SHA-256) and inline styles, so
/// the page can make no request at all.
enum HTMLPage {
  /// The whole page around `data` (already escaped by `HTMLReport.escapeForScript`).
  static func render(data: [UInt8]) -> [UInt8] {
    let hash = Data(SHA256.digest(Array(script.utf8))).base64EncodedString()
    let policy =
      "default-src 'none'; script-src 'sha256-\(hash)'; style-src 'unsafe-inline'; "
      + "img-src data:; base-uri 'none'; form-action 'none'"
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
    out += data
    out += Array("</script>\n<script>".utf8)
    out += Array(script.utf8)
    out += Array("</script>\n</body>\n</html>\n".utf8)
    return out
  }

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
    .section { font-weight: 700; color: var(--acc); margin-top: 8px; }
    .section .dim { font-weight: 400; }
    .row { white-space: pre; padding: 0 4px; border-radius: 4px; }
    .row.selected { background: var(--sel); }
    .row.hidden { opacity: .45; }
    .tri { display: inline-block; width: 1.2em; color: var(--dim); }
    .title { color: var(--acc); margin-left: .8em; } .fields { color: var(--dim); margin-left: .8em; }
    .check { color: var(--add); margin-left: .5em; }
    .d-add { color: var(--add); } .d-del { color: var(--del); } .d-mod { color: var(--mark); }
    .d-line { white-space: pre-wrap; }
    .ev { white-space: nowrap; overflow: hidden; text-overflow: ellipsis; cursor: pointer;
      padding: 0 4px; border-radius: 4px; }
    .ev:hover { background: var(--line); } .ev.current { background: var(--sel); }
    .ev .n { color: var(--dim); display: inline-block; min-width: 5ch; }
    .ev .op { color: var(--acc); } .ev.faulted .op { color: var(--fault); }
    .ev .label { color: var(--mark); }
    footer { margin-top: 16px; font-size: 12px; }
    """

  /// The viewer. Plain ES2017, no libraries; it folds events between checkpoints with the
  /// protocol's semantics (faulted events, known from the Swift fold, are skipped).
  static let script = #"""
    (function () {
    'use strict';
    var D = JSON.parse(document.getElementById('listtape-data').textContent);
    var FROM = D.from, TO = D.to, FIRST = D.from - 1;
    var faults = new Map(D.faults), marks = new Map(D.marks);
    var markList = D.marks.map(function (m) { return m[0]; });
    var faultList = D.faults.map(function (f) { return f[0]; });
    function $(id) { return document.getElementById(id); }
    function el(tag, cls, text) {
      var e = document.createElement(tag);
      if (cls) e.className = cls;
      if (text !== undefined && text !== null) e.textContent = String(text);
      return e;
    }

    // ---- The model: sections of outlines, a selection of ids, the selection mode. ----
    function newState() {
      return { sections: [], secs: new Map(), items: new Map(), sel: new Set(), multi: false };
    }
    function fieldMap(obj) {
      if (obj === null || obj === undefined) return null;
      var m = new Map();
      Object.keys(obj).forEach(function (k) { m.set(k, obj[k]); });
      return m;
    }
    function addSection(st, id, at) {
      var s = { id: id, roots: [] };
      st.secs.set(id, s);
      st.sections.splice(at, 0, s);
      return s;
    }
    function makeNode(st, j, parent, sec) {
      var n = typeof j === 'string' ? { id: j } : j;
      var node = { id: n.id, title: n.title === undefined ? null : n.title,
        fields: fieldMap(n.fields), expanded: !!n.expanded, children: [], parent: parent,
        sec: parent ? null : sec };
      st.items.set(node.id, node);
      (n.children || []).forEach(function (c) { node.children.push(makeNode(st, c, node, null)); });
      return node;
    }
    function unregister(st, node, dropSelection) {
      st.items.delete(node.id);
      if (dropSelection) st.sel.delete(node.id);
      node.children.forEach(function (c) { unregister(st, c, dropSelection); });
    }
    function siblings(node) { return node.parent ? node.parent.children : node.sec.roots; }
    function isVisible(node) {
      for (var p = node.parent; p; p = p.parent) if (!p.expanded) return false;
      return true;
    }
    function anchorOf(e) { return e.before !== undefined && e.before !== null ? e.before : e.after; }
    function isAfter(e) { return !(e.before !== undefined && e.before !== null); }
    function remove(list, x) { list.splice(list.indexOf(x), 1); }

    // Folds one event that did not fault (the Swift fold found the faults).
    function apply(st, e) {
      var a, s, x, i, list;
      switch (e.op) {
      case 'appendSections':
        e.sections.forEach(function (id) { addSection(st, id, st.sections.length); });
        break;
      case 'insertSections':
        i = st.sections.indexOf(st.secs.get(anchorOf(e))) + (isAfter(e) ? 1 : 0);
        e.sections.forEach(function (id, k) { addSection(st, id, i + k); });
        break;
      case 'deleteSections':
        e.sections.forEach(function (id) {
          var sec = st.secs.get(id);
          if (!sec) return;
          sec.roots.forEach(function (r) { unregister(st, r, true); });
          remove(st.sections, sec);
          st.secs.delete(id);
        });
        break;
      case 'moveSection':
        s = st.secs.get(e.section);
        remove(st.sections, s);
        i = st.sections.indexOf(st.secs.get(anchorOf(e))) + (isAfter(e) ? 1 : 0);
        st.sections.splice(i, 0, s);
        break;
      case 'appendItems':
        if (e.parent !== undefined && e.parent !== null) {
          x = st.items.get(e.parent);
          e.items.forEach(function (j) { x.children.push(makeNode(st, j, x, null)); });
        } else {
          s = e.section !== undefined && e.section !== null ? st.secs.get(e.section)
            : st.sections[st.sections.length - 1];
          e.items.forEach(function (j) { s.roots.push(makeNode(st, j, null, s)); });
        }
        break;
      case 'insertItems':
        a = st.items.get(anchorOf(e));
        list = siblings(a);
        i = list.indexOf(a) + (isAfter(e) ? 1 : 0);
        var made = e.items.map(function (j) { return makeNode(st, j, a.parent, a.parent ? null : a.sec); });
        list.splice.apply(list, [i, 0].concat(made));
        break;
      case 'deleteItems':
        e.items.forEach(function (id) {
          var n = st.items.get(id);
          if (!n) return;
          remove(siblings(n), n);
          unregister(st, n, true);
        });
        break;
      case 'deleteAllItems':
        st.sections.forEach(function (sec) {
          sec.roots.forEach(function (r) { unregister(st, r, true); });
          sec.roots = [];
        });
        break;
      case 'moveItem':
        x = st.items.get(e.item);
        a = st.items.get(anchorOf(e));
        remove(siblings(x), x);
        list = siblings(a);
        i = list.indexOf(a) + (isAfter(e) ? 1 : 0);
        x.parent = a.parent;
        x.sec = a.parent ? null : a.sec;
        list.splice(i, 0, x);
        break;
      case 'replaceChildren':
        x = st.items.get(e.parent);
        x.children.forEach(function (c) { unregister(st, c, false); });
        x.children = e.items.map(function (j) { return makeNode(st, j, x, null); });
        break;
      case 'applySectionSnapshot':
        s = st.secs.get(e.section);
        s.roots.forEach(function (r) { unregister(st, r, false); });
        s.roots = e.items.map(function (j) { return makeNode(st, j, null, s); });
        break;
      case 'update':
        x = st.items.get(e.item);
        if (e.title !== undefined && e.title !== null) x.title = e.title;
        if (e.fields !== undefined && e.fields !== null) {
          if (!x.fields) x.fields = new Map();
          Object.keys(e.fields).forEach(function (k) { x.fields.set(k, e.fields[k]); });
        }
        break;
      case 'expand':
      case 'collapse':
        e.items.forEach(function (id) { st.items.get(id).expanded = e.op === 'expand'; });
        break;
      case 'select':
        if (st.multi) e.items.forEach(function (id) { st.sel.add(id); });
        else st.sel = new Set(e.items);
        break;
      case 'deselect':
        if (e.items === undefined || e.items === null) st.sel.clear();
        else e.items.forEach(function (id) { st.sel.delete(id); });
        break;
      case 'configure':
        if (!!e.multipleSelection !== st.multi) {
          st.multi = !!e.multipleSelection;
          if (!st.multi) st.sel.clear();
        }
        break;
      case 'batch':
        e.events.forEach(function (inner) { apply(st, inner); });
        return;
      default:
        break;
      }
      // The selection only ever holds items that exist and are visible.
      st.sel.forEach(function (id) {
        var n = st.items.get(id);
        if (!n || !isVisible(n)) st.sel.delete(id);
      });
    }

    function fromCheckpoint(cp) {
      var st = newState();
      st.multi = cp[1];
      cp[2].forEach(function (sc) {
        var s = addSection(st, sc[0], st.sections.length), stack = [];
        sc[1].forEach(function (r) {
          var level = r[0];
          var node = { id: r[1], expanded: (r[2] & 1) !== 0, title: r.length > 3 ? r[3] : null,
            fields: r.length > 4 ? fieldMap(r[4]) : null, children: [], parent: null, sec: null };
          stack.length = level;
          if (level === 0) { node.sec = s; s.roots.push(node); }
          else { node.parent = stack[level - 1]; node.parent.children.push(node); }
          stack[level] = node;
          st.items.set(node.id, node);
          if (r[2] & 2) st.sel.add(node.id);
        });
      });
      return st;
    }

    // Every item in display order with what a renderer needs (section headers included).
    function rows(st) {
      var out = [];
      st.sections.forEach(function (s) {
        out.push({ header: true, section: s.id, count: 0, visible: 0 });
        var head = out[out.length - 1];
        (function walk(list, level, parent, shown) {
          list.forEach(function (x) {
            head.count++;
            if (shown) head.visible++;
            out.push({ section: s.id, id: x.id, level: level, parent: parent, expanded: x.expanded,
              hasChildren: x.children.length > 0, visible: shown, selected: st.sel.has(x.id),
              title: x.title, fields: x.fields });
            walk(x.children, level + 1, x.id, shown && x.expanded);
          });
        })(s.roots, 0, null, true);
      });
      return out;
    }

    // ---- Seeking: the nearest checkpoint at or before n, then fold forward. ----
    var cps = D.checkpoints, cur = null, curN = -1;
    function checkpointIndex(n) {
      var lo = 0, hi = cps.length;
      while (lo < hi) { var mid = (lo + hi) >> 1; if (cps[mid][0] <= n) lo = mid + 1; else hi = mid; }
      return lo - 1;
    }
    function event(n) { return D.events[n - FROM]; }
    function seek(n) {
      var c = cps[checkpointIndex(n)];
      if (!cur || curN > n || curN < c[0]) { cur = fromCheckpoint(c); curN = c[0]; }
      while (curN < n) { curN++; if (!faults.has(curN)) apply(cur, event(curN)); }
      return cur;
    }

    // ---- Diff by identity between two row lists. ----
    function placeText(r) {
      return r.parent === null ? 'at the top of ' + r.section : 'under ' + r.parent;
    }
    function fieldsText(m) {
      if (!m) return '';
      return Array.from(m.keys()).sort().map(function (k) { return k + '=' + m.get(k); }).join(', ');
    }
    function notInLIS(seq) {
      var tails = [], idx = [], prev = new Array(seq.length);
      seq.forEach(function (v, i) {
        var lo = 0, hi = tails.length;
        while (lo < hi) { var mid = (lo + hi) >> 1; if (tails[mid] < v) lo = mid + 1; else hi = mid; }
        prev[i] = lo > 0 ? idx[lo - 1] : -1;
        tails[lo] = v; idx[lo] = i;
      });
      var keep = new Set();
      for (var i = idx.length ? idx[idx.length - 1] : -1; i >= 0; i = prev[i]) keep.add(i);
      return seq.map(function (_, i) { return !keep.has(i); });
    }
    function diff(a, b) {
      var out = [], A = new Map(), B = new Map(), secA = [], secB = [];
      a.forEach(function (r) { if (r.header) secA.push(r.section); else A.set(r.id, r); });
      b.forEach(function (r) { if (r.header) secB.push(r.section); else B.set(r.id, r); });
      secB.forEach(function (s) { if (secA.indexOf(s) < 0) out.push(['d-add', '+ section ' + s]); });
      secA.forEach(function (s) { if (secB.indexOf(s) < 0) out.push(['d-del', '- section ' + s]); });
      var keptA = secA.filter(function (s) { return secB.indexOf(s) >= 0; });
      var keptB = secB.filter(function (s) { return secA.indexOf(s) >= 0; });
      notInLIS(keptB.map(function (s) { return keptA.indexOf(s); })).forEach(function (m, i) {
        if (m) out.push(['d-mod', '~ section ' + keptB[i] + ' moved']);
      });
      a.forEach(function (r) {
        if (!r.header && !B.has(r.id)) out.push(['d-del', '- ' + r.id + ' (was ' + placeText(r) + ')']);
      });
      function key(r) { return r.parent === null ? 's:' + r.section : 'i:' + r.parent; }
      var groupsA = new Map(), groupsB = new Map(), moved = new Set();
      a.forEach(function (r) {
        var o = !r.header && B.get(r.id);
        if (o && key(o) === key(r)) { if (!groupsA.has(key(r))) groupsA.set(key(r), []); groupsA.get(key(r)).push(r.id); }
      });
      b.forEach(function (r) {
        var o = !r.header && A.get(r.id);
        if (!r.header && o && key(o) !== key(r)) moved.add(r.id);
        if (o && key(o) === key(r)) { if (!groupsB.has(key(r))) groupsB.set(key(r), []); groupsB.get(key(r)).push(r.id); }
      });
      groupsB.forEach(function (ids, k) {
        var old = groupsA.get(k) || [];
        notInLIS(ids.map(function (id) { return old.indexOf(id); })).forEach(function (m, i) { if (m) moved.add(ids[i]); });
      });
      var unchanged = 0;
      b.forEach(function (r) {
        if (r.header) return;
        var pad = '  '.repeat(r.level), o = A.get(r.id);
        if (!o) { out.push(['d-add', '+ ' + pad + r.id + ' (' + placeText(r) + ')']); return; }
        var changed = false;
        if (moved.has(r.id)) { changed = true; out.push(['d-mod', '~ ' + pad + r.id + ' moved: ' + placeText(o) + ' → ' + placeText(r)]); }
        if (o.expanded !== r.expanded) { changed = true; out.push(['d-mod', (r.expanded ? '▾ ' : '▸ ') + pad + r.id + (r.expanded ? ' expanded' : ' collapsed')]); }
        if (o.title !== r.title) { changed = true; out.push(['d-mod', '  ' + pad + 'title ' + r.id + ': ' + JSON.stringify(o.title) + ' → ' + JSON.stringify(r.title)]); }
        if (fieldsText(o.fields) !== fieldsText(r.fields)) { changed = true; out.push(['d-mod', '  ' + pad + 'fields ' + r.id + ': {' + fieldsText(o.fields) + '} → {' + fieldsText(r.fields) + '}']); }
        if (!changed) unchanged++;
      });
      var sa = a.filter(function (r) { return r.selected; }).map(function (r) { return r.id; });
      var sb = b.filter(function (r) { return r.selected; }).map(function (r) { return r.id; });
      if (sa.slice().sort().join('\u0000') !== sb.slice().sort().join('\u0000')) {
        out.push(['d-mod', 'selection {' + sa.join(', ') + '} → {' + sb.join(', ') + '}']);
      }
      if (out.length) out.push(['dim', '  ' + unchanged + ' unchanged item' + (unchanged === 1 ? '' : 's')]);
      return out;
    }

    // ---- Rendering ----
    var position = FIRST, playing = null, MAX_ROWS = 5000;
    function time(t) { return typeof t === 'number' ? new Date(t).toISOString() : ''; }
    function clamp(n) { return Math.max(FIRST, Math.min(TO, n)); }

    function renderList(rs) {
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
        if (r.fields && r.fields.size) row.appendChild(el('span', 'fields', '[' + fieldsText(r.fields) + ']'));
        if (r.selected) row.appendChild(el('span', 'check', '✓'));
        if (!r.visible) row.appendChild(el('span', 'dim', '  (hidden)'));
        frag.appendChild(row);
      });
      if (shown > MAX_ROWS) frag.appendChild(el('div', 'dim', '… ' + (shown - MAX_ROWS) + ' more rows not drawn'));
      if (!sections) frag.appendChild(el('div', 'dim', '(no sections)'));
      list.replaceChildren(frag);
      $('listsummary').textContent = sections + ' section' + (sections === 1 ? '' : 's') + ' · ' +
        items + ' item' + (items === 1 ? '' : 's') + ' · ' + visible + ' visible · ' + selected +
        ' selected · ' + (cur.multi ? 'multiple' : 'single') + ' selection';
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
      var n = position, before = null;
      if (n > FIRST) before = rows(seek(n - 1));
      var st = seek(n), now = rows(st);
      $('slider').value = String(n);
      $('num').value = String(n);
      var head = $('eventhead');
      head.replaceChildren();
      head.appendChild(el('span', '', 'event ' + n + ' of ' + D.total));
      if (n >= FROM) {
        var e = event(n);
        head.appendChild(el('span', 'op', '  ' + e.op));
        head.appendChild(el('span', 'dim', '  ' + time(e.t)));
        if (marks.has(n)) head.appendChild(el('span', 'label', '  “' + marks.get(n) + '”'));
        head.appendChild(el('div', 'desc dim', D.descriptions[n - FROM]));
      } else {
        head.appendChild(el('span', 'dim', n === 0 ? '  (the empty list before the first event)' : '  (the state before the embedded window)'));
      }
      $('fault').textContent = faults.has(n) ? '✗ fault: event ' + n + ': ' + faults.get(n) + ' (the state is unchanged)' : '';
      renderList(now);
      var d = $('diff');
      d.replaceChildren();
      if (!before) d.appendChild(el('div', 'dim', '(no earlier event in this file)'));
      else {
        var lines = diff(before, now);
        if (!lines.length) d.appendChild(el('div', 'dim', '(no change)'));
        lines.forEach(function (l) { d.appendChild(el('div', 'd-line ' + l[0], l[1])); });
      }
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

    // A self-check for tests: fold every event from the first checkpoint and compare the
    // state at each later checkpoint with the one the Swift fold embedded.
    function selfTest() {
      var st = fromCheckpoint(cps[0]), n = cps[0][0], bad = null, compared = 0;
      function text(s) { return JSON.stringify(rows(s).map(function (r) { return [r.section, r.id, r.level, r.expanded, r.selected, r.title, fieldsText(r.fields)]; })) + s.multi; }
      for (var k = 1; k < cps.length && bad === null; k++) {
        while (n < cps[k][0]) { n++; if (!faults.has(n)) apply(st, event(n)); }
        compared++;
        if (text(st) !== text(fromCheckpoint(cps[k]))) bad = n;
      }
      $('selftest').textContent = bad === null ? 'selftest: ok, ' + compared + ' checkpoints' : 'selftest: mismatch at event ' + bad;
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
    var wantsSelfTest = /selftest/.test(location.hash);
    position = clamp(fromHash());
    render();
    window.addEventListener('hashchange', function () { var n = clamp(fromHash()); if (n !== position) go(n); });
    if (wantsSelfTest) selfTest();
    var loads = performance.getEntriesByType('resource').length;
    $('netcheck').textContent = 'resources loaded: ' + loads;
    })();
    """#
}
