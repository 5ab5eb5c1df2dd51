// layout.js - The layered layout of nngraph-view's page (viewer.js draws
// what it computes): a topological order (a cycle, which collapsing scopes
// can make, is broken and its edge marked as a back edge), longest-path
// layering with constants moved down next to their readers, dummy points
// on edges that span layers, barycenter ordering sweeping down and up,
// then x positions pulled toward the neighbours' mean while keeping the
// order and the gaps. It knows nothing of the DOM.
//
// nngLayout.layout(g) takes g = {units, edges}: units [{kind, w, h, pred,
// succ}] (pred/succ: the edges in and out), edges [{from, to}]; it sets
// u.x (centre), u.y (top) and u.layer on units, e.back and e.points (the
// polyline to draw) on edges, and g.layers.
'use strict';

// eslint-disable-next-line no-unused-vars
const nngLayout = (function () {
  const NODE_H = 34;
  const LAYER_H = 66;
  const GAP = 22;

  /// Positions every unit (u.x: centre, u.y: top) and every edge's points.
  function layout(g) {
    const units = g.units;
    // Topological order (Kahn, by insertion order); a cycle made by
    // collapsing is broken at its earliest unit and its edge drawn dashed.
    const indeg = new Map(units.map((u) => [u, u.pred.length]));
    const done = new Set();
    const topo = [];
    let ready = units.filter((u) => indeg.get(u) === 0);
    const index = new Map(units.map((u, i) => [u, i]));
    while (topo.length < units.length) {
      if (ready.length === 0) {
        const first = units.find((u) => !done.has(u));
        ready = [first];
      }
      ready.sort((a, b) => index.get(a) - index.get(b));
      const next = [];
      for (const u of ready) {
        if (done.has(u)) continue;
        done.add(u);
        topo.push(u);
        for (const e of u.succ) {
          indeg.set(e.to, indeg.get(e.to) - 1);
          if (indeg.get(e.to) === 0 && !done.has(e.to)) next.push(e.to);
        }
      }
      ready = next;
    }
    const rank = new Map(topo.map((u, i) => [u, i]));
    g.edges.forEach((e) => { e.back = rank.get(e.from) >= rank.get(e.to); });

    // Longest-path layering; outputs sit just below their producer.
    topo.forEach((u) => {
      u.layer = 0;
      for (const e of u.pred) if (!e.back) u.layer = Math.max(u.layer, e.from.layer + 1);
    });
    // Sources other than graph inputs (constants) move down to just above
    // their first reader, instead of sending long edges from the top.
    for (let i = topo.length - 1; i >= 0; --i) {
      const u = topo[i];
      if (u.kind === 'input' || u.pred.length || !u.succ.length) continue;
      const below = u.succ.filter((e) => !e.back).map((e) => e.to.layer);
      if (below.length) u.layer = Math.max(0, Math.min(...below) - 1);
    }

    // Dummy points for edges that span layers.
    const layers = [];
    const put = (p) => { (layers[p.layer] = layers[p.layer] || []).push(p); };
    topo.forEach(put);
    const points = []; // every positioned item: units and dummies
    topo.forEach((u) => points.push(u));
    g.edges.forEach((e) => {
      e.chain = [];
      const lo = e.back ? e.to : e.from;
      const hi = e.back ? e.from : e.to;
      let prev = lo;
      for (let l = lo.layer + 1; l < hi.layer; ++l) {
        const d = { dummy: true, layer: l, w: 8, up: [prev], down: [] };
        if (prev.dummy) prev.down.push(d);
        e.chain.push(d);
        put(d);
        points.push(d);
        prev = d;
      }
    });
    // Neighbours of each point in the layers above (up) and below (down).
    units.forEach((u) => { u.up = []; u.down = []; });
    g.edges.forEach((e) => {
      const lo = e.back ? e.to : e.from;
      const hi = e.back ? e.from : e.to;
      const first = e.chain.length ? e.chain[0] : hi;
      const last = e.chain.length ? e.chain[e.chain.length - 1] : lo;
      lo.down.push(first);
      if (first.dummy) first.up = [lo];
      hi.up.push(last);
      if (last.dummy) last.down = [hi];
    });

    // Barycenter ordering, sweeping down and up.
    for (let l = 0; l < layers.length; ++l) {
      layers[l] = layers[l] || [];
      layers[l].forEach((p, i) => { p.pos = i; });
    }
    const sweep = (l, key) => {
      const layer = layers[l];
      layer.forEach((p) => {
        const ns = p[key];
        p.bary = ns.length ? ns.reduce((s, q) => s + q.pos, 0) / ns.length : p.pos;
      });
      layer.sort((a, b) => a.bary - b.bary || a.pos - b.pos);
      layer.forEach((p, i) => { p.pos = i; });
    };
    for (let it = 0; it < 6; ++it) {
      for (let l = 1; l < layers.length; ++l) sweep(l, 'up');
      for (let l = layers.length - 2; l >= 0; --l) sweep(l, 'down');
    }

    // x: start packed, then pull toward the neighbours' mean, keeping the
    // order and the gaps (the mean of a left-to-right and a right-to-left
    // placement keeps both).
    const width = (p) => p.w;
    layers.forEach((layer) => {
      let x = 0;
      layer.forEach((p) => { p.x = x + width(p) / 2; x += width(p) + GAP; });
    });
    const place = (layer, key) => {
      if (!layer.length) return;
      const want = layer.map((p) => {
        const ns = p[key];
        return ns.length ? ns.reduce((s, q) => s + q.x, 0) / ns.length : p.x;
      });
      const sep = (i) => (width(layer[i - 1]) + width(layer[i])) / 2 + GAP;
      const lr = want.slice();
      for (let i = 1; i < layer.length; ++i) lr[i] = Math.max(lr[i], lr[i - 1] + sep(i));
      const rl = want.slice();
      for (let i = layer.length - 2; i >= 0; --i) rl[i] = Math.min(rl[i], rl[i + 1] - sep(i + 1));
      layer.forEach((p, i) => { p.x = (lr[i] + rl[i]) / 2; });
    };
    for (let it = 0; it < 4; ++it) {
      for (let l = 1; l < layers.length; ++l) place(layers[l], 'up');
      for (let l = layers.length - 2; l >= 0; --l) place(layers[l], 'down');
    }
    points.forEach((p) => { p.y = p.layer * LAYER_H; });

    g.edges.forEach((e) => {
      const pts = [{ x: e.from.x, y: e.from.y + e.from.h }];
      const chain = e.back ? e.chain.slice().reverse() : e.chain;
      chain.forEach((d) => pts.push({ x: d.x, y: d.y + NODE_H / 2 }));
      pts.push({ x: e.to.x, y: e.to.y });
      e.points = pts;
    });
    g.layers = layers.length;
  }

  return { layout, NODE_H };
})();
