// @ts-check
/**
 * MemoryGraph's labels: a greedy layout pass so that no two labels (nor a label and a node)
 * overlap. Labels scale with the view, so a layout made in graph units holds at every zoom.
 * The most important label is placed first (selected, hits, path ends, hubs, entities, the
 * most connected); each tries its own side, then right, left, below and above, in full and
 * then cut short; a label with no free place is hidden. The full text stays in the node's
 * tooltip and aria-label, and in the panel. Pure: tested under node.
 */
import { FLAG, nodeRadius } from "./read.js";

export const SHORT = 16; // a label cut short keeps this many characters and an ellipsis

/** @typedef {{hits: Set<string>, ends: Set<string>, edges: Set<string>}} Search */
/** @typedef {[string, number, number]} Place  text-anchor, x, y relative to the node */

/**
 * The order labels are placed in.
 * @param {import("./read.js").Graph} g @param {string | null} selected @param {Search | null} search
 */
export function labelOrder(g, selected, search) {
  /** @param {number} i */
  const rank = (i) => {
    const id = g.nodes.id[i];
    if (id === selected) return 0;
    if (search?.hits.has(id)) return 1;
    if (search?.ends.has(id)) return 2;
    if (g.nodes.flags[i] & FLAG.hub) return 3;
    return g.nodes.type[i] === "entity" ? 4 : g.nodes.type[i] === "observation" ? 6 : 5;
  };
  return [...Array(g.n).keys()].sort((a, b) => rank(a) - rank(b) || (g.nodes.deg[b] || 0) - (g.nodes.deg[a] || 0) || a - b);
}

/**
 * Where each label goes, or null when it has no free place.
 * @param {import("./read.js").Graph} g @param {number[]} order
 * @param {(i: number) => {full: string, home: Place, size: number} | null} label  a node's
 *   label: its full text, its own side, its font size (null: the node has none)
 * @param {(i: number, text: string) => number} width  a text's width in graph units
 * @returns {Map<number, {place: Place, text: string, cut: boolean} | null>}
 */
export function placeLabels(g, order, label, width) {
  /** @type {number[][]} */
  const placed = [];
  for (let i = 0; i < g.n; i++) {
    const r = nodeRadius(g, i);
    placed.push([g.nodes.x[i] - r, g.nodes.y[i] - r, g.nodes.x[i] + r, g.nodes.y[i] + r, i]);
  }
  const free = (/** @type {number[]} */ b, /** @type {number} */ own) => {
    for (const p of placed) {
      if (p[4] === own) continue;
      if (Math.min(b[2], p[2]) - Math.max(b[0], p[0]) > 1 && Math.min(b[3], p[3]) - Math.max(b[1], p[1]) > 1) return false;
    }
    return true;
  };
  const [x0, y0, x1, y1] = g.bounds;
  /** @type {Map<number, {place: Place, text: string, cut: boolean} | null>} */
  const out = new Map();
  for (const i of order) {
    const l = label(i);
    if (!l) continue;
    const { full, home, size: fs } = l;
    const x = g.nodes.x[i], y = g.nodes.y[i];
    const r = nodeRadius(g, i);
    /** @type {Place[]} */
    const places = [home, ["start", r + 3, 4], ["end", -r - 3, 4], ["middle", 0, r + 13], ["middle", 0, -r - 5]];
    const texts = full.length > SHORT + 2 ? [full, full.slice(0, SHORT).trimEnd() + "…"] : [full];
    // its own side in full, then cut short; then the other sides, in full, then cut short
    /** @type {[Place, string][]} */
    const tries = [];
    for (const text of texts) tries.push([places[0], text]);
    for (const text of texts) for (const p of places.slice(1)) tries.push([p, text]);
    out.set(i, null);
    for (const [place, text] of tries) {
      const [anchor, dx, dy] = place;
      const w = width(i, text);
      const left = x + dx - (anchor === "middle" ? w / 2 : anchor === "end" ? w : 0);
      const box = [left, y + dy - fs * 0.8, left + w, y + dy + fs * 0.25, i];
      // inside the graph's bounds (what Fit shows), clear of every label and node placed
      if (box[0] < x0 || box[2] > x1 || box[1] < y0 || box[3] > y1 || !free(box, i)) continue;
      placed.push(box);
      out.set(i, { place, text, cut: text !== full });
      break;
    }
  }
  return out;
}
