// @ts-check
/**
 * The view of a graph: screen = graph * k + (x, y). Pure functions from a view (and the size
 * of the SVG) to another view or to what is in it; no DOM, tested under node.
 */

/** @typedef {{x: number, y: number, k: number}} View */
/** @typedef {{w: number, h: number}} Size */
/** @typedef {[number, number, number, number]} Box  x0, y0, x1, y1 in graph units */

/** @param {number} v @param {number} lo @param {number} hi */
const clamp = (v, lo, hi) => Math.max(lo, Math.min(hi, v));

/**
 * The view that shows `bounds` whole and centred, `pad` pixels from the edges, no closer than
 * `maxK` and no further than `minK`.
 * @param {Box} bounds @param {Size} size @param {{pad: number, minK: number, maxK: number}} o
 * @returns {View}
 */
export function fitView([x0, y0, x1, y1], { w, h }, { pad, minK, maxK }) {
  const gw = Math.max(1, x1 - x0);
  const gh = Math.max(1, y1 - y0);
  const k = Math.max(minK, Math.min(maxK, (w - 2 * pad) / gw, (h - 2 * pad) / gh));
  return { k, x: (w - gw * k) / 2 - x0 * k, y: (h - gh * k) / 2 - y0 * k };
}

/**
 * Zoom by `factor` (clamped to [minK, maxK]) keeping the screen point (px, py) still.
 * @param {View} view @param {number} factor @param {number} px @param {number} py
 * @param {number} minK @param {number} maxK
 * @returns {View}
 */
export function zoomAt(view, factor, px, py, minK, maxK) {
  const k = clamp(view.k * factor, minK, maxK);
  const f = k / view.k;
  return { k, x: px - (px - view.x) * f, y: py - (py - view.y) * f };
}

/** @param {View} view @param {number} dx @param {number} dy  screen pixels @returns {View} */
export function panView(view, dx, dy) {
  return { ...view, x: view.x + dx, y: view.y + dy };
}

/**
 * The part of the graph on screen, `margin` graph units wider on every side.
 * @param {View} view @param {Size} size @param {number} margin
 */
export function visibleRect(view, { w, h }, margin) {
  return {
    x0: -view.x / view.k - margin,
    y0: -view.y / view.k - margin,
    x1: (w - view.x) / view.k + margin,
    y1: (h - view.y) / view.k + margin,
  };
}

/**
 * The view that brings `box` on screen: unchanged when it lies `inset` pixels inside the
 * edges, else moved (not zoomed) to centre it; null when nothing has to move.
 * @param {View} view @param {Size} size @param {Box} box @param {number} inset
 * @returns {View | null}
 */
export function revealBox(view, { w, h }, [x0, y0, x1, y1], inset) {
  const sx0 = x0 * view.k + view.x, sy0 = y0 * view.k + view.y;
  const sx1 = x1 * view.k + view.x, sy1 = y1 * view.k + view.y;
  if (sx0 >= inset && sy0 >= inset && sx1 <= w - inset && sy1 <= h - inset) return null;
  return { ...view, x: w / 2 - ((x0 + x1) / 2) * view.k, y: h / 2 - ((y0 + y1) / 2) * view.k };
}

/** The SVG transform of a view. @param {View} view */
export function transformOf(view) {
  return `translate(${view.x.toFixed(2)},${view.y.toFixed(2)}) scale(${view.k.toFixed(4)})`;
}

/** The zoom as the corner label prints it. @param {View} view */
export function zoomText(view) {
  return `${Math.round(view.k * 100)}%`;
}
