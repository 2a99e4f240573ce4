// @ts-check
/**
 * The graph view CheckpointGraph and MemoryGraph share: an SVG with an arrow marker and
 * layers under one transformed viewport, drag to pan and the wheel to zoom (panzoom.js), the
 * zoom label, Fit, revealing a node, the keyboard cursor (arrows move to the nearest node,
 * + - 0 zoom and fit, Enter opens) and the selected node. The widget draws the nodes and edges
 * into the layers and says what a node's box is; the math is in view.js and navigate.js.
 */
import { h, s } from "../base/dom.js";
import { button } from "../base/panel.js";
import { graphKey, nearest } from "./navigate.js";
import { panZoom } from "./panzoom.js";
import { fitView, panView, revealBox, transformOf, zoomText } from "./view.js";

/**
 * @typedef {{
 *   prefix: string,
 *   uid: string,
 *   label: string,
 *   layers: string[],
 *   arrow: Record<string, string>,
 *   minK: number,
 *   maxK: number,
 *   farK: number,
 *   fit: {pad: number, maxK: number},
 *   inset: number,
 *   keys: {pan?: boolean, ends?: boolean, cursorOnFocus?: boolean},
 *   xs: () => ArrayLike<number>,
 *   ys: () => ArrayLike<number>,
 *   bounds: () => import("./view.js").Box,
 *   nodeBox: (i: number) => import("./view.js").Box,
 *   nodeClass: string,
 *   onOpen: (i: number) => void,
 *   onCursor: (old: number, i: number) => void,
 *   onView?: () => void,
 * }} GraphViewOptions
 *   prefix: the class prefix of the svg and its parts ("cx-graph": cx-graph__svg,
 *   cx-graph--far, cx-graph--dragging); layers: the names of the groups under the viewport,
 *   bottom first; inset: how far inside the edges a revealed node must lie (pixels);
 *   onView: after every change of the view (a virtualized widget redraws what is in it).
 */

/** @param {GraphViewOptions} o */
export function createGraphView(o) {
  let view = { x: 0, y: 0, k: 1 };
  let cursor = -1;
  /** @type {string | null} */
  let selected = null;

  const svg = /** @type {SVGSVGElement} */ (
    /** @type {unknown} */ (s("svg", { class: `${o.prefix}__svg`, role: "application", tabindex: "0", "aria-roledescription": "graph", "aria-label": o.label }))
  );
  const pz = panZoom(svg, {
    get: () => view,
    set: (v) => setView(v),
    minK: o.minK,
    maxK: o.maxK,
    draggingClass: `${o.prefix}--dragging`,
    onClick: (e) => {
      const node = /** @type {Element} */ (e.target).closest?.(`.${o.nodeClass}`);
      if (node) o.onOpen(Number(node.getAttribute("data-i")));
    },
  });
  const defs = s("defs");
  const arrow = s("marker", { id: `${o.uid}-arrow`, viewBox: "0 0 10 10", refY: "5", orient: "auto-start-reverse", ...o.arrow });
  arrow.append(s("path", { d: "M0,0 L10,5 L0,10 z", class: `${o.prefix}__arrow` }));
  defs.append(arrow);
  const viewport = s("g", { class: `${o.prefix}__viewport` });
  /** @type {Record<string, SVGGElement>} */
  const layers = {};
  for (const name of o.layers) {
    layers[name] = /** @type {SVGGElement} */ (/** @type {unknown} */ (s("g", { class: `${o.prefix}__${name}` })));
    viewport.append(layers[name]);
  }
  svg.append(defs, viewport);
  const zoomLabel = h("span", { class: `${o.prefix}__zoom`, "aria-live": "off" });
  const box = h("div", { class: `${o.prefix}__box` }, svg, zoomLabel);

  const size = () => pz.size();

  /** @param {import("./view.js").View} v */
  function setView(v) {
    view = v;
    viewport.setAttribute("transform", transformOf(view));
    svg.classList.toggle(`${o.prefix}--far`, view.k < o.farK);
    zoomLabel.textContent = zoomText(view);
    o.onView?.();
  }

  function fit() {
    setView(fitView(o.bounds(), size(), { pad: o.fit.pad, minK: o.minK, maxK: o.fit.maxK }));
  }

  /** @param {number} factor @param {number} [cx] @param {number} [cy] */
  const zoomBy = (factor, cx, cy) => pz.zoomBy(factor, cx, cy);

  /** Bring node `i` into view (centre it when it is outside). @param {number} i */
  function reveal(i) {
    const v = revealBox(view, size(), o.nodeBox(i), o.inset);
    if (v) setView(v);
  }

  /** @param {number} i  the keyboard's node (-1: none) */
  function setCursor(i) {
    const old = cursor;
    cursor = i;
    o.onCursor(old, i);
    if (i >= 0) svg.setAttribute("aria-activedescendant", `${o.uid}-n${i}`);
  }

  /** @param {number} i */
  function moveTo(i) {
    setCursor(i);
    reveal(i);
  }

  svg.addEventListener("keydown", (e) => {
    const k = graphKey(e, o.keys);
    if (!k) return;
    const n = o.xs().length;
    if (k.type === "pan") setView(panView(view, k.dx, k.dy));
    else if (k.type === "move") {
      const i = nearest(o.xs(), o.ys(), cursor, k.dx, k.dy);
      if (i >= 0) moveTo(i);
    } else if (k.type === "zoom") zoomBy(k.factor);
    else if (k.type === "fit") fit();
    else if (k.type === "first" || k.type === "last") {
      if (!n) return;
      moveTo(k.type === "first" ? 0 : n - 1);
    } else if (k.type === "open") {
      if (cursor < 0) return;
      o.onOpen(cursor);
    }
    e.preventDefault();
    e.stopPropagation();
  });
  if (o.keys.cursorOnFocus) svg.addEventListener("focus", () => { if (cursor < 0 && o.xs().length) setCursor(0); });

  // Fit once the element has its size (it may be attached after render returns).
  let fitted = false;
  const ro = new ResizeObserver(() => {
    if (!fitted && size().w > 0 && svg.getBoundingClientRect().width > 0) {
      fitted = true;
      fit();
    } else o.onView?.();
  });
  ro.observe(svg);

  return {
    svg,
    box,
    layers,
    size,
    fit,
    zoomBy,
    reveal,
    setCursor,
    /** Show the view again (after a redraw). */
    apply: () => setView(view),
    get view() { return view; },
    get cursor() { return cursor; },
    set cursor(i) { cursor = i; },
    get selected() { return selected; },
    set selected(id) { selected = id; },
    /** The zoom buttons of the header: out, in, fit. */
    buttons: () => [
      button("−", () => zoomBy(1 / 1.25), { title: "zoom out (-)", "aria-label": "zoom out", "data-action": "zoom-out" }),
      button("+", () => zoomBy(1.25), { title: "zoom in (+)", "aria-label": "zoom in", "data-action": "zoom-in" }),
      button("Fit", () => fit(), { title: "fit the whole graph (0)", "data-action": "fit" }),
    ],
    dispose: () => ro.disconnect(),
  };
}
