// @ts-check
/** Moving between a graph's nodes from the keyboard. Pure: tested under node. */

const ARROWS = /** @type {Record<string, [number, number]>} */ ({ ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1] });

/**
 * The nearest node from `cursor` in direction (dx, dy), by position: distance along the
 * direction plus three times the distance across it. The first node when there is no cursor,
 * -1 when no node lies that way.
 * @param {ArrayLike<number>} xs @param {ArrayLike<number>} ys @param {number} cursor
 * @param {number} dx @param {number} dy
 */
export function nearest(xs, ys, cursor, dx, dy) {
  const n = xs.length;
  if (n === 0) return -1;
  if (cursor < 0) return 0;
  const cx = xs[cursor], cy = ys[cursor];
  let best = -1, score = Infinity;
  for (let i = 0; i < n; i++) {
    if (i === cursor) continue;
    const ddx = xs[i] - cx, ddy = ys[i] - cy;
    const along = ddx * dx + ddy * dy;
    if (along <= 1) continue;
    const sc = along + (Math.abs(ddx * dy) + Math.abs(ddy * dx)) * 3;
    if (sc < score) { score = sc; best = i; }
  }
  return best;
}

/**
 * @typedef {{type: "move" | "pan", dx: number, dy: number} | {type: "zoom", factor: number}
 *   | {type: "fit" | "first" | "last" | "open"}} GraphKey
 */

/**
 * What a key does in a graph, or null when the graph leaves it alone.
 * @param {{key: string, shiftKey?: boolean, altKey?: boolean, ctrlKey?: boolean, metaKey?: boolean}} e
 * @param {{pan?: boolean, ends?: boolean}} [o]  pan: Shift+arrows pan; ends: Home / End
 * @returns {GraphKey | null}
 */
export function graphKey(e, o = {}) {
  if (e.altKey || e.ctrlKey || e.metaKey) return null;
  const dir = ARROWS[e.key];
  if (dir && e.shiftKey && o.pan) return { type: "pan", dx: -dir[0] * 80, dy: -dir[1] * 80 };
  if (dir) return { type: "move", dx: dir[0], dy: dir[1] };
  if (e.key === "+" || e.key === "=") return { type: "zoom", factor: 1.25 };
  if (e.key === "-" || e.key === "_") return { type: "zoom", factor: 1 / 1.25 };
  if (e.key === "0") return { type: "fit" };
  if (o.ends && e.key === "Home") return { type: "first" };
  if (o.ends && e.key === "End") return { type: "last" };
  if (e.key === "Enter" || e.key === " ") return { type: "open" };
  return null;
}
