// @ts-check
/** CheckpointGraph's synced `_graph`, read into columns and edge indices. Pure: tested under node. */

export const FLAG = { frozen: 1, superseded: 2, recallable: 4, inherited: 8, focus: 16, unreadable: 32, live: 64 };

/** @param {any} raw  the `_graph` trait (may be empty) */
export function readGraph(raw) {
  const g = raw || {};
  const nodes = g.nodes || {};
  for (const c of ["id", "kind", "label", "sub", "mode", "tokens", "flags", "ref", "x", "y"]) {
    if (!Array.isArray(nodes[c])) nodes[c] = [];
  }
  const edges = g.edges || {};
  for (const c of ["source", "target", "kind", "label"]) if (!Array.isArray(edges[c])) edges[c] = [];
  const index = new Map(nodes.id.map((/** @type {string} */ id, /** @type {number} */ i) => [id, i]));
  const m = edges.source.length;
  const from = new Int32Array(m), to = new Int32Array(m);
  /** @type {Map<number, number>} merged edges per source node (a group of two or more is labelled to the side) */
  const mergedFrom = new Map();
  for (let e = 0; e < m; e++) {
    from[e] = index.get(edges.source[e]) ?? -1;
    to[e] = index.get(edges.target[e]) ?? -1;
    if (edges.kind[e] === "merged") mergedFrom.set(from[e], (mergedFrom.get(from[e]) || 0) + 1);
  }
  return {
    nodes,
    edges,
    n: nodes.id.length,
    bounds: /** @type {[number, number, number, number]} */ (Array.isArray(g.bounds) ? g.bounds : [0, 0, 0, 0]),
    size: /** @type {[number, number]} */ (Array.isArray(g.node) ? g.node : [186, 66]),
    frontier: typeof g.frontier === "number" ? g.frontier : null,
    layout: g.layout || "fold",
    from,
    to,
    mergedFrom,
  };
}

/** @typedef {ReturnType<typeof readGraph>} Graph */

/**
 * An edge's path and where its label goes: across (left to right) between nodes of one row, a
 * workspace's and the surface's edges; down from the bottom to the top otherwise. A merged
 * group of two or more is labelled once, below its parent's left corner.
 * @param {Graph} g @param {number} e
 */
export function edgeGeometry(g, e) {
  const [nw, nh] = g.size;
  const a = g.from[e], b = g.to[e];
  const kind = g.edges.kind[e];
  const ax = g.nodes.x[a], ay = g.nodes.y[a], bx = g.nodes.x[b], by = g.nodes.y[b];
  let d, lx, ly;
  if (g.layout === "workspace" || kind === "surface" || Math.abs(ay - by) < 1) {
    const x1 = ax + nw, y1 = ay + nh / 2, x2 = bx, y2 = by + nh / 2;
    const mx = (x1 + x2) / 2;
    d = `M${x1},${y1} C${mx},${y1} ${mx},${y2} ${x2},${y2}`;
    lx = mx; ly = (y1 + y2) / 2 - 6;
  } else {
    const x1 = ax + nw / 2, y1 = ay + nh, x2 = bx + nw / 2, y2 = by;
    const my = (y1 + y2) / 2;
    d = `M${x1},${y1} C${x1},${my} ${x2},${my} ${x2},${y2}`;
    lx = (x1 + x2) / 2; ly = my;
  }
  const grouped = kind === "merged" && (g.mergedFrom.get(a) || 0) > 1;
  if (grouped) {
    lx = ax - 4;
    ly = ay + nh + 12;
  }
  return { d, lx, ly, anchor: grouped ? "end" : "middle" };
}

/**
 * The nodes and edges to draw for the visible rectangle `r` (graph units): what overlaps it,
 * and the keyboard's node always (aria-activedescendant must exist).
 * @param {Graph} g @param {{x0: number, y0: number, x1: number, y1: number}} r @param {number} cursor
 */
export function inView(g, r, cursor) {
  const [nw, nh] = g.size;
  /** @type {Set<number>} */
  const nodes = new Set();
  for (let i = 0; i < g.n; i++) {
    const x = g.nodes.x[i], y = g.nodes.y[i];
    if (x + nw >= r.x0 && x <= r.x1 && y + nh >= r.y0 && y <= r.y1) nodes.add(i);
  }
  if (cursor >= 0) nodes.add(cursor);
  /** @type {Set<number>} */
  const edges = new Set();
  for (let e = 0; e < g.from.length; e++) {
    const a = g.from[e], b = g.to[e];
    if (a < 0 || b < 0) continue;
    const x0 = Math.min(g.nodes.x[a], g.nodes.x[b]), x1 = Math.max(g.nodes.x[a], g.nodes.x[b]) + nw;
    const y0 = Math.min(g.nodes.y[a], g.nodes.y[b]), y1 = Math.max(g.nodes.y[a], g.nodes.y[b]) + nh;
    if (x1 >= r.x0 && x0 <= r.x1 && y1 >= r.y0 && y0 <= r.y1) edges.add(e);
  }
  return { nodes, edges };
}
