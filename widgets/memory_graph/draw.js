// @ts-check
/**
 * Drawing MemoryGraph: every drawn node (the kernel caps them at max_nodes) with its shape and
 * label, the edges, the cluster rings, and restyling for the cursor, the selection and a
 * search's hits and path.
 */
import { put, s } from "../base/dom.js";
import { noun } from "../base/format.js";
import { labelOrder, placeLabels } from "./labels.js";
import { FLAG, clustersOf, edgeEnds } from "./read.js";
import { shape } from "./shapes.js";

/**
 * @param {{
 *   graph: () => import("./read.js").Graph,
 *   search: () => import("./labels.js").Search | null,
 *   gv: ReturnType<typeof import("../graph/graph_view.js").createGraphView>,
 *   uid: string,
 *   model: any,
 *   mapBox: HTMLElement,
 * }} c
 */
export function createDrawing(c) {
  const { gv, uid, model } = c;
  /** @type {SVGGElement[]} */
  let nodeEls = [];
  /** @type {SVGGElement[]} */
  let edgeEls = [];
  /** @type {Map<number, number>} node index -> cluster index (satellites) */
  let clusterOf = new Map();
  let laidOut = "";

  /** @param {number} i */
  function nodeClass(i) {
    const g = c.graph(), search = c.search();
    const f = g.nodes.flags[i];
    const id = g.nodes.id[i];
    return (
      `cx-mnode cx-mnode--${g.nodes.type[i]}` +
      (f & FLAG.hub ? " cx-mnode--hub" : "") +
      (f & FLAG.stale ? " cx-mnode--stale" : "") +
      (search?.hits.has(id) ? " cx-mnode--hit" : search?.ends.has(id) ? " cx-mnode--path" : "") +
      (id === gv.selected ? " cx-mnode--selected" : "") +
      (i === gv.cursor ? " cx-mnode--cursor" : "")
    );
  }

  /** @param {number} e */
  function edgeKey(e) {
    const g = c.graph();
    return `${g.nodes.id[g.edges.s[e]]}|${g.nodes.id[g.edges.t[e]]}|${g.edges.label[e]}`;
  }

  /** @param {number} i */
  function makeNode(i) {
    const g = c.graph();
    const x = g.nodes.x[i], y = g.nodes.y[i];
    const type = g.nodes.type[i];
    const f = g.nodes.flags[i];
    const grp = /** @type {SVGGElement} */ (/** @type {unknown} */ (s("g", { class: nodeClass(i), transform: `translate(${x},${y})`, "data-i": i, "data-id": g.nodes.id[i], "data-type": type, id: `${uid}-n${i}`, role: "button", "aria-label": `${type}: ${g.nodes.tip[i] || g.nodes.label[i]}${f & FLAG.stale ? " (stale)" : ""}` })));
    grp.append(shape(type, Boolean(f & FLAG.hub)));
    if (f & FLAG.stale) {
      const mark = s("text", { class: "cx-mnode__stale", x: 11, y: -9 });
      mark.textContent = "⏱";
      grp.append(mark);
    }
    // labels: under a hub; outward for a satellite (by its side of the hub)
    const label = s("text", { class: "cx-mnode__label" });
    label.textContent = g.nodes.label[i] + (f & FLAG.stale ? " · stale" : "");
    if (f & FLAG.hub || type === "entity") {
      label.setAttribute("x", "0");
      label.setAttribute("y", f & FLAG.hub ? "32" : "28");
      label.setAttribute("text-anchor", "middle");
    } else {
      let dx = 0;
      const c = clusterOf.get(i);
      if (c != null) dx = x - g.clusters.x[c];
      const anchor = Math.abs(dx) < 24 ? "middle" : dx > 0 ? "start" : "end";
      label.setAttribute("text-anchor", anchor);
      label.setAttribute("x", anchor === "middle" ? "0" : anchor === "start" ? "16" : "-16");
      label.setAttribute("y", anchor === "middle" ? (y < (c != null ? g.clusters.y[c] : y + 1) ? "-18" : "26") : "4");
      if (c == null) {
        label.setAttribute("text-anchor", "start");
        label.setAttribute("x", "16");
        label.setAttribute("y", "4");
      }
    }
    label.setAttribute("data-part", "label");
    const tip = s("title");
    tip.textContent = `${type}${f & FLAG.stale ? " (stale)" : ""}: ${g.nodes.tip[i] || g.nodes.label[i]}`;
    grp.append(label, tip);
    return grp;
  }

  /** @type {CanvasRenderingContext2D | null} */
  let measurer = null;
  /** @type {Map<string, number>} */
  const widths = new Map();
  /** @param {SVGTextElement} t @param {string} text */
  function textWidth(t, text) {
    const cs = getComputedStyle(t);
    const key = `${cs.fontWeight}|${cs.fontSize}|${text}`;
    let w = widths.get(key);
    if (w == null) {
      if (!measurer) measurer = document.createElement("canvas").getContext("2d");
      if (measurer) {
        measurer.font = `${cs.fontWeight} ${cs.fontSize} ${cs.fontFamily}`;
        w = measurer.measureText(text).width;
      } else w = text.length * (parseFloat(cs.fontSize) || 11.5) * 0.6;
      widths.set(key, w);
    }
    return w;
  }
  /** @param {boolean} [force] */
  function layoutLabels(force = false) {
    const g = c.graph(), search = c.search();
    const key = `${model.get("revision")}|${g.n}|${gv.selected}|${search ? [...search.hits].join(",") : ""}`;
    if (!force && key === laidOut) return;
    laidOut = key;
    /** @param {number} i */
    const textOf = (i) => /** @type {SVGTextElement | null} */ (nodeEls[i]?.querySelector(".cx-mnode__label"));
    const where = placeLabels(
      g,
      labelOrder(g, gv.selected, search),
      (i) => {
        const t = textOf(i);
        if (!t) return null;
        const full = String(t.dataset.full || t.textContent || "");
        t.dataset.full = full;
        t.dataset.home = t.dataset.home || [t.getAttribute("text-anchor") || "start", Number(t.getAttribute("x")), Number(t.getAttribute("y"))].join(",");
        const [anchor, dx, dy] = t.dataset.home.split(",");
        return { full, home: [anchor, Number(dx), Number(dy)], size: parseFloat(getComputedStyle(t).fontSize) || 11.5 };
      },
      (i, text) => textWidth(/** @type {SVGTextElement} */ (textOf(i)), text),
    );
    let hidden = 0;
    for (const [i, at] of where) {
      const t = /** @type {SVGTextElement} */ (textOf(i));
      if (!at) {
        t.classList.add("cx-mnode__label--hidden");
        hidden++;
        continue;
      }
      t.setAttribute("text-anchor", at.place[0]);
      t.setAttribute("x", String(at.place[1]));
      t.setAttribute("y", String(at.place[2]));
      t.textContent = at.text;
      t.classList.remove("cx-mnode__label--hidden");
      t.dataset.cut = at.cut ? "1" : "";
    }
    gv.svg.dataset.hiddenLabels = String(hidden);
  }

  /** @param {number} e */
  function makeEdge(e) {
    const g = c.graph();
    const a = g.edges.s[e], b = g.edges.t[e];
    const [x1, y1, x2, y2] = edgeEnds(g, e);
    const label = g.edges.label[e];
    const grp = /** @type {SVGGElement} */ (/** @type {unknown} */ (s("g", { class: `cx-medge cx-medge--${label}`, "data-e": e, "data-label": label, "data-src": g.nodes.id[a], "data-dst": g.nodes.id[b] })));
    grp.append(s("line", { x1: x1.toFixed(1), y1: y1.toFixed(1), x2: x2.toFixed(1), y2: y2.toFixed(1), "marker-end": `url(#${uid}-arrow)` }));
    const tip = s("title");
    tip.textContent = `${g.nodes.label[a]} —${label}→ ${g.nodes.label[b]}`;
    grp.append(tip);
    return grp;
  }

  function redrawAll() {
    const g = c.graph();
    clusterOf = clustersOf(g);
    const rings = [];
    for (let c = 0; c < g.clusters.x.length; c++) {
      if (g.clusters.hub[c] < 0) continue;
      rings.push(s("circle", { class: "cx-mcluster", cx: g.clusters.x[c], cy: g.clusters.y[c], r: Math.max(40, g.clusters.r[c] - 70) }));
    }
    put(gv.layers.clusters, ...rings);
    edgeEls = [];
    for (let e = 0; e < g.edges.s.length; e++) edgeEls.push(makeEdge(e));
    put(gv.layers.edges, ...edgeEls);
    nodeEls = [];
    for (let i = 0; i < g.n; i++) nodeEls.push(makeNode(i));
    put(gv.layers.nodes, ...nodeEls);
    if (!g.n) {
      const t = s("text", { class: "cx-mgraph__empty", x: 0, y: 0, "text-anchor": "middle" });
      const sm = model.get("summary") || {};
      const total = Object.values(sm.total || {}).reduce((/** @type {number} */ a, /** @type {any} */ b) => a + (Number(b) || 0), 0);
      const obs = (sm.total || {}).observation || 0;
      t.textContent = total
        ? obs && !model.get("observations")
          ? `Nothing to draw: ${obs} ${noun(obs, "observation")} are hidden. Tick “observations” to draw them.`
          : "Nothing to draw here: search, or ↻ to re-read the memory."
        : "This memory is empty: mem.ingest(session) or mem.remember(...) adds to it.";
      gv.layers.nodes.append(t);
    }
    laidOut = "";
    restyle();
  }

  function restyle() {
    const g = c.graph(), search = c.search();
    gv.svg.classList.toggle("cx-mgraph--searching", Boolean(search));
    for (let i = 0; i < nodeEls.length; i++) nodeEls[i].setAttribute("class", nodeClass(i));
    for (let e = 0; e < edgeEls.length; e++) {
      const on = search?.edges.has(edgeKey(e));
      edgeEls[e].classList.toggle("cx-medge--hit", Boolean(on));
      if (on) gv.layers.edges.append(edgeEls[e]); // on top
    }
    gv.svg.dataset.nodes = String(g.n);
    gv.svg.dataset.hits = String(search ? search.hits.size : 0);
    layoutLabels();
    for (const b of c.mapBox.querySelectorAll(".cx-smap__box")) b.classList.toggle("cx-smap__box--selected", b.getAttribute("data-id") === gv.selected);
  }

  return { redrawAll, restyle };
}
