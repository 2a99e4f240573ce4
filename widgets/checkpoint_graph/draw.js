// @ts-check
/**
 * Drawing CheckpointGraph: only the nodes and edges in view (plus a margin) are in the DOM, so
 * hundreds of checkpoints or sessions stay responsive; the frozen and open bands and the
 * frontier behind them.
 */
import { s } from "../base/dom.js";
import { formatTokens } from "../base/format.js";
import { visibleRect } from "../graph/view.js";
import { FLAG, edgeGeometry, inView } from "./read.js";

const MARGIN = 240; // graph units around the view that are rendered too

/**
 * @param {{
 *   graph: () => import("./read.js").Graph,
 *   gv: ReturnType<typeof import("../graph/graph_view.js").createGraphView>,
 *   uid: string,
 *   model: any,
 * }} c
 */
export function createDrawing(c) {
  const { gv, uid, model } = c;
  /** @type {Map<number, SVGGElement>} */
  const shownNodes = new Map();
  /** @type {Map<number, SVGGElement>} */
  const shownEdges = new Map();
  let frame = 0;

  /** @param {number} i */
  function nodeClass(i) {
    const g = c.graph();
    const f = g.nodes.flags[i];
    return (
      `cx-node cx-node--${g.nodes.kind[i]}` +
      (g.nodes.mode[i] ? ` cx-node--mode-${g.nodes.mode[i]}` : "") +
      (f & FLAG.frozen ? " cx-node--frozen" : "") +
      (f & FLAG.superseded ? " cx-node--superseded" : "") +
      (f & FLAG.live ? " cx-node--live" : "") +
      (f & FLAG.unreadable ? " cx-node--unreadable" : "") +
      (f & FLAG.inherited ? " cx-node--inherited" : "") +
      (g.nodes.id[i] === gv.selected ? " cx-node--selected" : "") +
      (i === gv.cursor ? " cx-node--cursor" : "")
    );
  }

  /** @param {number} i */
  function makeNode(i) {
    const g = c.graph();
    const [nw, nh] = g.size;
    const grp = /** @type {SVGGElement} */ (/** @type {unknown} */ (s("g", { class: nodeClass(i), transform: `translate(${g.nodes.x[i]},${g.nodes.y[i]})`, "data-i": i, "data-id": g.nodes.id[i], id: `${uid}-n${i}`, role: "button", "aria-label": `${g.nodes.label[i]}: ${g.nodes.sub[i]}` })));
    grp.append(s("rect", { class: "cx-node__box", width: nw, height: nh, rx: 7 }));
    grp.append(s("rect", { class: "cx-node__stripe", width: 5, height: nh, rx: 2 }));
    const label = s("text", { class: "cx-node__label", x: 14, y: 24 });
    label.textContent = g.nodes.label[i];
    const sub = s("text", { class: "cx-node__sub", x: 14, y: 46 });
    sub.textContent = g.nodes.sub[i];
    const tip = s("title");
    tip.textContent = `${g.nodes.label[i]}\n${g.nodes.sub[i]}`;
    grp.append(label, sub, tip);
    return grp;
  }

  /** @param {number} e */
  function makeEdge(e) {
    const g = c.graph();
    const { d, lx, ly, anchor } = edgeGeometry(g, e);
    const grp = /** @type {SVGGElement} */ (/** @type {unknown} */ (s("g", { class: `cx-edge cx-edge--${g.edges.kind[e]}`, "data-e": e })));
    grp.append(s("path", { d, "marker-end": `url(#${uid}-arrow)` }));
    if (g.edges.label[e]) {
      const t = s("text", { x: lx, y: ly, class: "cx-edge__label", "text-anchor": anchor });
      t.textContent = g.edges.label[e];
      grp.append(t);
    }
    return grp;
  }

  function draw() {
    const want = inView(c.graph(), visibleRect(gv.view, gv.size(), MARGIN), gv.cursor);
    for (const [i, node] of shownNodes) if (!want.nodes.has(i)) { node.remove(); shownNodes.delete(i); }
    for (const i of want.nodes) {
      let node = shownNodes.get(i);
      if (!node) {
        node = makeNode(i);
        shownNodes.set(i, node);
        gv.layers.nodes.append(node);
      } else node.setAttribute("class", nodeClass(i));
    }
    for (const [e, edge] of shownEdges) if (!want.edges.has(e)) { edge.remove(); shownEdges.delete(e); }
    for (const e of want.edges) if (!shownEdges.has(e)) { const edge = makeEdge(e); shownEdges.set(e, edge); gv.layers.edges.append(edge); }
    gv.svg.dataset.nodes = String(shownNodes.size);
  }

  function schedule() {
    if (frame) return;
    frame = requestAnimationFrame(() => {
      frame = 0;
      draw();
    });
  }

  function drawBands() {
    const g = c.graph();
    const bands = gv.layers.bands;
    bands.replaceChildren();
    if (g.frontier == null) return;
    const [x0, y0, x1, y1] = g.bounds;
    const far = 20000; // the bands fill the view at any pan / zoom
    const top = y0 - far, bottom = y1 + far;
    bands.append(
      s("rect", { class: "cx-band cx-band--frozen", x: x0 - far, y: top, width: g.frontier - x0 + far, height: bottom - top }),
      s("rect", { class: "cx-band cx-band--open", x: g.frontier, y: top, width: x1 - g.frontier + far, height: bottom - top }),
      s("line", { class: "cx-frontier", x1: g.frontier, x2: g.frontier, y1: top, y2: bottom }),
    );
    const sm = model.get("summary") || {};
    const lf = s("text", { class: "cx-band__label", x: g.frontier - 12, y: y0 - 24, "text-anchor": "end" });
    lf.textContent = `frozen prefix · ${formatTokens((sm.head || 0) + (sm.frozen || 0))} tok`;
    const lo = s("text", { class: "cx-band__label", x: g.frontier + 12, y: y0 - 24 });
    lo.textContent = `open · ${formatTokens(sm.open || 0)} tok`;
    const lfr = s("text", { class: "cx-frontier__label", x: g.frontier, y: y1 + 34, "text-anchor": "middle" });
    lfr.textContent = "frontier";
    bands.append(lf, lo, lfr);
  }

  function redrawAll() {
    for (const [, n] of shownNodes) n.remove();
    for (const [, e] of shownEdges) e.remove();
    shownNodes.clear();
    shownEdges.clear();
    drawBands();
    draw();
  }

  /** Restyle the nodes `is` if they are drawn. @param {Iterable<number>} is */
  function restyle(is) {
    for (const i of is) shownNodes.get(i)?.setAttribute("class", nodeClass(i));
  }

  /** Restyle every drawn node whose id is `id`, or whose index is `i`. @param {string | null} id @param {number} i */
  function restyleWhere(id, i) {
    const g = c.graph();
    for (const [j, n] of shownNodes) if (g.nodes.id[j] === id || j === i) n.setAttribute("class", nodeClass(j));
  }

  return { schedule, drawBands, redrawAll, restyle, restyleWhere, cancel: () => frame && cancelAnimationFrame(frame) };
}
