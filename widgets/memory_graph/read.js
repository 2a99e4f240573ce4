// @ts-check
/** MemoryGraph's synced `_graph`, read into columns, and what follows from it. Pure: tested under node. */

export const FLAG = { stale: 1, hub: 2, pinned: 4, until: 8 };
export const TYPES = ["entity", "preference", "decision", "experience", "observation"];
export const LABELS = ["about", "decided", "broke", "fixed", "same_as", "observed_in"];

/** @param {any} raw  the `_graph` trait (may be empty) */
export function readGraph(raw) {
  const g = raw || {};
  const nodes = g.nodes || {};
  for (const c of ["id", "type", "label", "tip", "x", "y", "flags", "deg"]) if (!Array.isArray(nodes[c])) nodes[c] = [];
  const edges = g.edges || {};
  for (const c of ["s", "t", "label"]) if (!Array.isArray(edges[c])) edges[c] = [];
  const clusters = g.clusters || {};
  for (const c of ["x", "y", "r", "hub"]) if (!Array.isArray(clusters[c])) clusters[c] = [];
  const bounds = /** @type {[number, number, number, number]} */ (Array.isArray(g.bounds) ? g.bounds : [0, 0, 0, 0]);
  const index = new Map(nodes.id.map((/** @type {string} */ id, /** @type {number} */ i) => [id, i]));
  return { nodes, edges, clusters, n: nodes.id.length, bounds, index };
}

/** @typedef {ReturnType<typeof readGraph>} Graph */

/**
 * Each satellite's cluster: the first cluster with a hub whose circle holds the node.
 * @param {Graph} g @returns {Map<number, number>} node index -> cluster index
 */
export function clustersOf(g) {
  const clusterOf = new Map();
  for (let c = 0; c < g.clusters.x.length; c++) {
    const hub = g.clusters.hub[c];
    if (hub < 0) continue;
    for (let i = 0; i < g.n; i++) if (Math.hypot(g.nodes.x[i] - g.clusters.x[c], g.nodes.y[i] - g.clusters.y[c]) < g.clusters.r[c] && i !== hub && !clusterOf.has(i)) clusterOf.set(i, c);
  }
  return clusterOf;
}

/** A node's radius, for labels and edge ends. @param {Graph} g @param {number} i */
export function nodeRadius(g, i) {
  return g.nodes.flags[i] & FLAG.hub ? 18 : g.nodes.type[i] === "observation" ? 7 : 14;
}

/**
 * An edge from the rim of its source to the rim of its target.
 * @param {Graph} g @param {number} e @returns {[number, number, number, number]} x1, y1, x2, y2
 */
export function edgeEnds(g, e) {
  const a = g.edges.s[e], b = g.edges.t[e];
  const ax = g.nodes.x[a], ay = g.nodes.y[a], bx = g.nodes.x[b], by = g.nodes.y[b];
  const len = Math.hypot(bx - ax, by - ay) || 1;
  const pad = (/** @type {number} */ i) => (g.nodes.flags[i] & FLAG.hub ? 20 : g.nodes.type[i] === "observation" ? 8 : 15);
  return [ax + ((bx - ax) * pad(a)) / len, ay + ((by - ay) * pad(a)) / len, bx - ((bx - ax) * pad(b)) / len, by - ((by - ay) * pad(b)) / len];
}
