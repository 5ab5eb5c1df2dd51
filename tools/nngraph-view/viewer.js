// viewer.js - Draws the graph embedded in nngraph-view's page (viewer.html):
// module scopes collapse to one box each; the visible graph is laid out in
// layers (layout.js) and drawn as SVG with pan and zoom; a click shows a node's details; the search box
// highlights and centres matches. The URL hash drives it too, for links
// and tests: #select=NAME, #search=TEXT, #collapse=all or a comma list of
// scopes. It never touches the network.
'use strict';

(function () {
  const SVGNS = 'http://www.w3.org/2000/svg';
  const data = JSON.parse(document.getElementById('graph-data').textContent);
  const svg = document.getElementById('canvas');
  const details = document.getElementById('details');
  const searchBox = document.getElementById('search');
  const matchesLabel = document.getElementById('matches');

  const NODE_H = nngLayout.NODE_H;
  const layout = nngLayout.layout;

  // --- The model: nodes, scopes, values. -----------------------------------

  const nodes = data.nodes;
  const producer = new Map(); // value name -> node id
  const consumers = new Map(); // value name -> [node id]
  nodes.forEach((n) => {
    n.outputs.forEach((v) => producer.set(v, n.id));
    n.inputs.forEach((v) => {
      if (!v) return;
      if (!consumers.has(v)) consumers.set(v, []);
      consumers.get(v).push(n.id);
    });
  });
  const graphInputs = new Set(data.inputs.map((v) => v.name));

  /// "layer1.0.conv1" -> ["layer1", "layer1.0", "layer1.0.conv1"].
  function prefixes(scope) {
    if (!scope) return [];
    const parts = scope.split('.');
    const out = [];
    for (let i = 1; i <= parts.length; ++i) out.push(parts.slice(0, i).join('.'));
    return out;
  }

  // A scope is a group when it holds at least two nodes, unless they are
  // all one leaf module called twice (a shared ReLU), which would make a
  // box around whatever lies between the calls.
  const scopeMembers = new Map(); // prefix -> [node id]
  const scopeModule = new Map(); // prefix -> module type
  nodes.forEach((n) => {
    prefixes(n.scope).forEach((p) => {
      if (!scopeMembers.has(p)) scopeMembers.set(p, []);
      scopeMembers.get(p).push(n.id);
    });
    if (n.scope && n.module && !scopeModule.has(n.scope)) scopeModule.set(n.scope, n.module);
  });
  const groups = [...scopeMembers.keys()].filter((p) => {
    const ms = scopeMembers.get(p).map((id) => nodes[id]);
    if (ms.length < 2) return false;
    return !ms.every((n) => n.scope === p && n.op === ms[0].op);
  });
  const isGroup = new Set(groups);
  const collapsed = new Set();
  let unitByKey = new Map(); // unit key -> unit, of the visible graph

  /// The unit (box) a node is drawn in: its outermost collapsed scope, or itself.
  function unitOfNode(id) {
    for (const p of prefixes(nodes[id].scope)) {
      if (collapsed.has(p)) return 'g:' + p;
    }
    return 'n:' + id;
  }

  function nodeLabel(n) {
    return n.name || ('#' + n.id + ' ' + n.op);
  }

  const CATEGORY_COLORS = [
    [/^(Conv|ConvTranspose|QLinearConv|FusedConv)/, '#33527a'],
    [/^(Gemm|MatMul|QLinearMatMul|MatMulInteger|FusedMatMul|FusedGemm|Einsum)/, '#33527a'],
    [/(Norm|Normalization)/, '#2f6b3e'],
    [/^(Relu|LeakyRelu|Sigmoid|Tanh|Gelu|Softmax|LogSoftmax|Elu|Selu|HardSigmoid|HardSwish|Clip|Mish|Softplus|PRelu)/, '#8c2f2f'],
    [/Pool/, '#3d6b2f'],
    [/^(Reshape|Flatten|Transpose|Squeeze|Unsqueeze|Concat|Split|Slice|Gather|Shape|Expand|Tile|Pad|Identity|Cast)/, '#6b6b6b'],
    [/^(Quantize|Dequantize|DynamicQuantize)/, '#7a5a1f'],
  ];
  function opColor(op) {
    for (const [re, c] of CATEGORY_COLORS) if (re.test(op)) return c;
    return '#5b3f7a';
  }

  function textWidth(s, px) {
    return s.length * px * 0.6;
  }

  // --- The visible graph. ---------------------------------------------------

  /// Units (boxes) and edges between them for the current collapse state.
  function buildVisible() {
    const units = new Map(); // key -> unit
    const order = [];
    function add(key, unit) {
      if (!units.has(key)) {
        unit.key = key;
        units.set(key, unit);
        order.push(unit);
      }
      return units.get(key);
    }
    data.inputs.forEach((v) => add('i:' + v.name, { kind: 'input', value: v,
      title: v.name, sub: v.type }));
    nodes.forEach((n) => {
      const key = unitOfNode(n.id);
      if (key.startsWith('g:')) {
        const scope = key.slice(2);
        const u = add(key, { kind: 'group', scope, members: [] });
        u.members.push(n.id);
      } else {
        add(key, { kind: 'op', node: n, title: n.op,
          sub: n.scope ? n.scope : (n.name || '') });
      }
    });
    data.outputs.forEach((v) => add('o:' + v.name, { kind: 'output', value: v,
      title: v.name, sub: v.type }));
    units.forEach((u) => {
      if (u.kind === 'group') {
        u.title = u.scope;
        const mod = scopeModule.get(u.scope);
        u.sub = (mod ? mod + ' · ' : '') + u.members.length + ' nodes';
      }
      const w = Math.max(textWidth(u.title || '', 11), textWidth(u.sub || '', 9)) + 20;
      u.w = Math.min(Math.max(w, 70), 260);
      u.h = NODE_H;
      u.succ = [];
      u.pred = [];
    });
    const edges = [];
    const seen = new Set();
    function link(a, b, value) {
      if (a === b) return;
      const id = a.key + '\u0000' + b.key;
      if (seen.has(id)) return;
      seen.add(id);
      const e = { from: a, to: b, value };
      edges.push(e);
      a.succ.push(e);
      b.pred.push(e);
    }
    function sourceOf(v) {
      if (producer.has(v)) return units.get(unitOfNode(producer.get(v)));
      if (graphInputs.has(v)) return units.get('i:' + v);
      return null; // an initializer: shown in the node's details
    }
    nodes.forEach((n) => {
      const to = units.get(unitOfNode(n.id));
      n.inputs.forEach((v) => {
        const from = v ? sourceOf(v) : null;
        if (from) link(from, to, v);
      });
    });
    data.outputs.forEach((v) => {
      const from = sourceOf(v.name);
      if (from) link(from, units.get('o:' + v.name), v.name);
    });
    unitByKey = units;
    return { units: order, edges };
  }

  // --- Drawing. -------------------------------------------------------------

  const view = { x: 20, y: 20, k: 1 };
  let viewport = null;
  let current = null; // the visible graph
  const unitElements = new Map(); // unit key -> <g>
  let selectedKey = null;

  function el(name, attrs, parent) {
    const e = document.createElementNS(SVGNS, name);
    for (const k in attrs) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  }

  function applyView() {
    viewport.setAttribute('transform', `translate(${view.x},${view.y}) scale(${view.k})`);
  }

  function edgePath(pts) {
    let d = `M${pts[0].x},${pts[0].y}`;
    for (let i = 1; i < pts.length; ++i) {
      const a = pts[i - 1];
      const b = pts[i];
      const m = (b.y - a.y) / 2;
      d += ` C${a.x},${a.y + m} ${b.x},${b.y - m} ${b.x},${b.y}`;
    }
    return d;
  }

  function draw() {
    const start = performance.now();
    current = buildVisible();
    layout(current);
    const layoutMs = performance.now() - start;

    svg.textContent = '';
    const defs = el('defs', {}, svg);
    const marker = el('marker', { id: 'arrow', viewBox: '0 0 10 10', refX: '10', refY: '5',
      markerWidth: '7', markerHeight: '7', orient: 'auto-start-reverse' }, defs);
    el('path', { d: 'M0,0 L10,5 L0,10 z', fill: '#777' }, marker);
    viewport = el('g', { id: 'viewport' }, svg);
    const boxLayer = el('g', { class: 'scopes' }, viewport);
    const edgeLayer = el('g', { class: 'edges' }, viewport);
    const unitLayer = el('g', { class: 'units' }, viewport);

    drawScopeBoxes(boxLayer);
    current.edges.forEach((e) => {
      const p = el('path', { class: 'edge' + (e.back ? ' back' : ''), d: edgePath(e.points),
        'marker-end': 'url(#arrow)' }, edgeLayer);
      const v = data.values[e.value];
      el('title', {}, p).textContent = e.value + (v ? ': ' + v.type : '');
    });
    unitElements.clear();
    let ops = 0;
    current.units.forEach((u) => {
      const cls = u.kind === 'op' ? 'op' : u.kind === 'group' ? 'group' : 'io';
      if (u.kind === 'op') ++ops;
      const g = el('g', { class: 'unit ' + cls, transform: `translate(${u.x - u.w / 2},${u.y})`,
        'data-key': u.key }, unitLayer);
      if (u.kind === 'op') g.setAttribute('data-name', nodeLabel(u.node));
      const r = el('rect', { width: u.w, height: u.h, rx: 4 }, g);
      if (u.kind === 'op') r.setAttribute('fill', opColor(u.node.op));
      const t = el('text', { x: u.w / 2, y: 14, 'text-anchor': 'middle' }, g);
      t.textContent = clip(u.title || '', u.w, 11);
      const s = el('text', { class: 'sub', x: u.w / 2, y: 27, 'text-anchor': 'middle' }, g);
      s.textContent = clip(u.sub || '', u.w, 9);
      el('title', {}, g).textContent = tooltip(u);
      g.addEventListener('click', (ev) => {
        ev.stopPropagation();
        select(u.key);
      });
      if (u.kind === 'group') {
        g.addEventListener('dblclick', (ev) => {
          ev.stopPropagation();
          toggleScope(u.scope);
        });
      }
      unitElements.set(u.key, g);
    });
    applyView();
    if (selectedKey && unitElements.has(selectedKey)) {
      unitElements.get(selectedKey).classList.add('selected');
    }
    highlightMatches();
    document.body.dataset.renderedOps = String(ops);
    document.body.dataset.renderedUnits = String(current.units.length);
    document.body.dataset.graphNodes = String(nodes.length);
    document.body.dataset.layoutMs = layoutMs.toFixed(1);
  }

  function clip(s, w, px) {
    const max = Math.max(4, Math.floor((w - 8) / (px * 0.6)));
    return s.length > max ? s.slice(0, max - 1) + '…' : s;
  }

  function tooltip(u) {
    if (u.kind === 'op') return nodeLabel(u.node) + ' (' + u.node.op + ')' + (u.node.scope ? '\nscope: ' + u.node.scope : '');
    if (u.kind === 'group') return u.scope + ': ' + u.members.length + ' nodes (click: details, double-click: expand)';
    return u.kind + ' ' + u.value.name + ': ' + u.value.type;
  }

  /// A dashed box around each expanded scope's visible nodes, labelled with
  /// the scope; clicking the label collapses it.
  function drawScopeBoxes(layer) {
    const boxes = [];
    groups.forEach((scope) => {
      if (collapsed.has(scope)) return;
      if (prefixes(scope).some((p) => p !== scope && collapsed.has(p))) return;
      let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
      const keys = new Set(scopeMembers.get(scope).map(unitOfNode));
      keys.forEach((k) => {
        const u = unitByKey.get(k);
        if (!u) return;
        x0 = Math.min(x0, u.x - u.w / 2);
        x1 = Math.max(x1, u.x + u.w / 2);
        y0 = Math.min(y0, u.y);
        y1 = Math.max(y1, u.y + u.h);
      });
      if (x0 === Infinity) return;
      boxes.push({ scope, depth: scope.split('.').length, x0, y0, x1, y1 });
    });
    // A scope gets more padding the more drawn scopes nest inside it.
    boxes.sort((a, b) => b.depth - a.depth);
    boxes.forEach((b) => {
      b.nested = 0;
      boxes.forEach((c) => {
        if (c.depth > b.depth && c.scope.startsWith(b.scope + '.')) b.nested = Math.max(b.nested, c.nested + 1);
      });
    });
    boxes.reverse();
    boxes.forEach((b) => {
      const pad = 4 + 6 * b.nested;
      const top = 16 + 14 * b.nested;
      el('rect', { class: 'scope-box', x: b.x0 - pad, y: b.y0 - top,
        width: b.x1 - b.x0 + 2 * pad, height: b.y1 - b.y0 + top + pad, rx: 6 }, layer);
      const label = el('text', { class: 'scope-label', x: b.x0 - pad + 4, y: b.y0 - top + 10,
        'data-scope': b.scope }, layer);
      const mod = scopeModule.get(b.scope);
      label.textContent = '− ' + b.scope + (mod ? ' (' + mod + ')' : '');
      el('title', {}, label).textContent = 'collapse ' + b.scope;
      label.addEventListener('click', (ev) => {
        ev.stopPropagation();
        toggleScope(b.scope);
      });
    });
  }

  function toggleScope(scope) {
    if (collapsed.has(scope)) collapsed.delete(scope);
    else collapsed.add(scope);
    if (selectedKey && !selectedKey.startsWith('g:') && !selectedKey.startsWith('i:') &&
        !selectedKey.startsWith('o:')) {
      selectedKey = unitOfNode(Number(selectedKey.slice(2)));
    }
    draw();
  }

  // --- Pan and zoom. --------------------------------------------------------

  function bounds() {
    let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
    current.units.forEach((u) => {
      x0 = Math.min(x0, u.x - u.w / 2);
      x1 = Math.max(x1, u.x + u.w / 2);
      y0 = Math.min(y0, u.y);
      y1 = Math.max(y1, u.y + u.h);
    });
    return { x0, y0, x1, y1 };
  }

  function fit() {
    const b = bounds();
    const r = svg.getBoundingClientRect();
    const w = r.width || 800;
    const h = r.height || 600;
    if (!isFinite(b.x0)) return;
    view.k = Math.min(1.5, Math.min((w - 40) / (b.x1 - b.x0 + 1), (h - 40) / (b.y1 - b.y0 + 1)));
    view.k = Math.max(view.k, 0.02);
    view.x = (w - (b.x1 - b.x0) * view.k) / 2 - b.x0 * view.k;
    view.y = 20 - b.y0 * view.k + 16;
    applyView();
  }

  function centerOn(key) {
    const u = unitByKey.get(key);
    if (!u) return;
    const r = svg.getBoundingClientRect();
    view.k = Math.max(view.k, 0.8);
    view.x = (r.width || 800) / 2 - u.x * view.k;
    view.y = (r.height || 600) / 2 - (u.y + u.h / 2) * view.k;
    applyView();
  }

  let drag = null;
  svg.addEventListener('mousedown', (ev) => {
    drag = { x: ev.clientX, y: ev.clientY, vx: view.x, vy: view.y };
    svg.classList.add('dragging');
  });
  window.addEventListener('mousemove', (ev) => {
    if (!drag) return;
    view.x = drag.vx + ev.clientX - drag.x;
    view.y = drag.vy + ev.clientY - drag.y;
    applyView();
  });
  window.addEventListener('mouseup', () => {
    drag = null;
    svg.classList.remove('dragging');
  });
  svg.addEventListener('wheel', (ev) => {
    ev.preventDefault();
    const r = svg.getBoundingClientRect();
    const mx = ev.clientX - r.left;
    const my = ev.clientY - r.top;
    const f = Math.exp(-ev.deltaY * 0.0015);
    const k = Math.min(4, Math.max(0.02, view.k * f));
    view.x = mx - (mx - view.x) * (k / view.k);
    view.y = my - (my - view.y) * (k / view.k);
    view.k = k;
    applyView();
  }, { passive: false });

  // --- Details. -------------------------------------------------------------

  function h(tag, text, cls) {
    const e = document.createElement(tag);
    if (text !== undefined) e.textContent = text;
    if (cls) e.className = cls;
    return e;
  }

  function table(rows, id) {
    const t = h('table');
    if (id) t.id = id;
    rows.forEach(([k, v, attrName]) => {
      const tr = h('tr');
      if (attrName) tr.dataset.attr = attrName;
      tr.appendChild(h('td', k));
      const td = h('td', v, 'value');
      tr.appendChild(td);
      t.appendChild(tr);
    });
    return t;
  }

  function fmt(x) {
    if (x === null || x === undefined) return 'n/a';
    return Math.abs(x) >= 1e4 || (Math.abs(x) < 1e-3 && x !== 0) ? x.toExponential(4) : String(+x.toFixed(6));
  }

  function valueRows(name) {
    const rows = [];
    const init = data.initializers[name];
    const v = data.values[name];
    if (init) {
      rows.push(['initializer', init.type]);
      if (init.elided) {
        rows.push(['data', 'elided in the file (no statistics)']);
      } else {
        rows.push(['elements', String(init.numel) + ' (' + init.bytes + ' bytes)']);
        const s = init.stats;
        if (s.min !== undefined) {
          rows.push(['min / max', fmt(s.min) + ' / ' + fmt(s.max)]);
          rows.push(['mean / std', fmt(s.mean) + ' / ' + fmt(s.std)]);
        }
        if (s.nan_count || s.inf_count) rows.push(['NaN / Inf', s.nan_count + ' / ' + s.inf_count]);
      }
    } else if (v) {
      rows.push([v.kind === 'input' ? 'graph input' : 'type', v.type]);
    }
    return rows;
  }

  function showValues(title, names, id) {
    details.appendChild(h('h3', title));
    const list = h('div');
    list.id = id;
    names.forEach((name, i) => {
      const block = h('div', undefined, 'value-block');
      block.appendChild(h('div', '#' + i + ' ' + (name || '(absent)'), 'mono'));
      if (name) block.appendChild(table(valueRows(name)));
      list.appendChild(block);
    });
    details.appendChild(list);
  }

  function showNode(n) {
    details.textContent = '';
    details.dataset.kind = 'node';
    details.dataset.node = nodeLabel(n);
    details.appendChild(h('h2', n.op + (n.domain ? ' (' + n.domain + ')' : '')));
    details.appendChild(table([
      ['name', n.name || '(none)'],
      ['scope', (n.scope || '(none)') + (n.scope_derived && n.scope ? ' (from names)' : '')],
      ['module', n.module || 'n/a'],
    ], 'node-info'));
    details.appendChild(h('h3', 'Attributes'));
    if (n.attrs.length) details.appendChild(table(n.attrs.map(([k, v]) => [k, v, k]), 'attributes'));
    else details.appendChild(h('p', 'none', 'hint'));
    showValues('Inputs', n.inputs, 'inputs');
    showValues('Outputs', n.outputs, 'outputs');
  }

  function showGroup(u) {
    details.textContent = '';
    details.dataset.kind = 'group';
    details.dataset.node = u.scope;
    details.appendChild(h('h2', u.scope));
    const hist = new Map();
    let params = 0;
    const counted = new Set();
    u.members.forEach((id) => {
      const n = nodes[id];
      hist.set(n.op, (hist.get(n.op) || 0) + 1);
      n.inputs.forEach((v) => {
        const init = data.initializers[v];
        if (init && !counted.has(v)) { counted.add(v); params += init.numel || 0; }
      });
    });
    details.appendChild(table([
      ['module', scopeModule.get(u.scope) || 'n/a'],
      ['nodes', String(u.members.length)],
      ['parameters', String(params)],
    ], 'group-info'));
    details.appendChild(h('h3', 'Ops'));
    details.appendChild(table([...hist.entries()].sort((a, b) => b[1] - a[1]).map(([op, c]) => [op, String(c)])));
    const b = h('button', 'Expand ' + u.scope);
    b.addEventListener('click', () => toggleScope(u.scope));
    details.appendChild(b);
  }

  function showIo(u) {
    details.textContent = '';
    details.dataset.kind = u.kind;
    details.dataset.node = u.value.name;
    details.appendChild(h('h2', (u.kind === 'input' ? 'Input ' : 'Output ') + u.value.name));
    const users = (consumers.get(u.value.name) || []).map((id) => nodeLabel(nodes[id]));
    details.appendChild(table([
      ['type', u.value.type],
      ['read by', users.join(', ') || '(none)'],
    ]));
  }

  function select(key) {
    if (selectedKey && unitElements.has(selectedKey)) unitElements.get(selectedKey).classList.remove('selected');
    selectedKey = key;
    const g = unitElements.get(key);
    if (g) g.classList.add('selected');
    const u = unitByKey.get(key);
    if (!u) return;
    if (u.kind === 'op') showNode(u.node);
    else if (u.kind === 'group') showGroup(u);
    else showIo(u);
  }

  /// Expands the collapsed scopes that hide node id; true when any was.
  function reveal(id) {
    let changed = false;
    prefixes(nodes[id].scope).forEach((p) => {
      if (collapsed.delete(p)) changed = true;
    });
    return changed;
  }

  // --- Search. --------------------------------------------------------------

  let matches = [];
  let matchIndex = -1;

  function nodeMatches(n, q) {
    const hay = [n.name, n.op, n.scope, n.module, ...n.inputs, ...n.outputs];
    return hay.some((s) => s && s.toLowerCase().includes(q));
  }

  function runSearch() {
    const q = searchBox.value.trim().toLowerCase();
    matches = q ? nodes.filter((n) => nodeMatches(n, q)).map((n) => n.id) : [];
    matchIndex = -1;
    matchesLabel.textContent = q ? matches.length + (matches.length === 1 ? ' match' : ' matches') : '';
    highlightMatches();
  }

  function highlightMatches() {
    unitElements.forEach((g) => g.classList.remove('match'));
    matches.forEach((id) => {
      const g = unitElements.get(unitOfNode(id));
      if (g) g.classList.add('match');
    });
  }

  function nextMatch() {
    if (!matches.length) return;
    matchIndex = (matchIndex + 1) % matches.length;
    const id = matches[matchIndex];
    if (reveal(id)) draw();
    const key = unitOfNode(id);
    centerOn(key);
    select(key);
    matchesLabel.textContent = (matchIndex + 1) + ' of ' + matches.length;
  }

  searchBox.addEventListener('input', runSearch);
  searchBox.addEventListener('keydown', (ev) => {
    if (ev.key === 'Enter') nextMatch();
  });

  // --- Toolbar, hash, start. ------------------------------------------------

  document.getElementById('fit').addEventListener('click', fit);
  document.getElementById('collapse-all').addEventListener('click', () => {
    groups.forEach((s) => collapsed.add(s));
    draw();
    fit();
  });
  document.getElementById('expand-all').addEventListener('click', () => {
    collapsed.clear();
    draw();
    fit();
  });

  function findNode(name) {
    const byName = nodes.find((n) => n.name === name);
    if (byName) return byName;
    const m = /^#(\d+)$/.exec(name);
    if (m && nodes[Number(m[1])]) return nodes[Number(m[1])];
    return nodes.find((n) => n.scope === name) || null; // the scope's first
  }

  function applyHash() {
    const params = new URLSearchParams(location.hash.replace(/^#/, ''));
    const c = params.get('collapse');
    if (c !== null) {
      collapsed.clear();
      (c === 'all' ? groups : c.split(',')).forEach((s) => { if (isGroup.has(s)) collapsed.add(s); });
      draw();
      fit();
    }
    const s = params.get('search');
    if (s !== null) {
      searchBox.value = s;
      runSearch();
    }
    const sel = params.get('select');
    if (sel !== null) {
      const n = findNode(sel);
      if (!n) {
        const group = unitElements.get('g:' + sel); // a collapsed scope
        if (group) {
          centerOn('g:' + sel);
          group.dispatchEvent(new MouseEvent('click', { bubbles: true }));
        } else {
          document.body.dataset.selectError = 'no node or collapsed scope named ' + sel;
        }
        return;
      }
      if (reveal(n.id)) draw();
      const key = unitOfNode(n.id);
      centerOn(key);
      // A real click, so that the page's click handling is what runs.
      unitElements.get(key).dispatchEvent(new MouseEvent('click', { bubbles: true }));
    }
  }

  document.getElementById('title').textContent = data.title + ' — graph "' + data.graph + '": ' +
    nodes.length + ' nodes, ' + Object.keys(data.initializers).length + ' initializers';
  svg.addEventListener('click', () => {
    if (selectedKey && unitElements.has(selectedKey)) unitElements.get(selectedKey).classList.remove('selected');
    selectedKey = null;
  });
  window.addEventListener('hashchange', applyHash);
  window.addEventListener('error', (ev) => {
    document.body.dataset.error = String(ev.message);
  });
  try {
    draw();
    fit();
    applyHash();
    document.body.dataset.ready = 'true';
  } catch (e) {
    document.body.dataset.error = String(e && e.stack || e);
    throw e;
  }
})();
