// @ts-check
/**
 * MemoryGraph: a cx.Memory's entities, preferences, decisions and experiences (observations
 * when asked) with their typed edges as a pannable, zoomable SVG graph, a search box that runs
 * `memory.find` in the kernel, and a side panel that reads a node (`memory.read`) and archives,
 * renames or merges it.
 *
 * Synced traits (set by the kernel):
 *   _graph    nodes by column (id, type, label, tip, x, y, flags, deg), edges by column
 *             (s, t: node indices, label), clusters by column (x, y, r, hub), bounds
 *   summary   total / shown counts by type, edges, stale, hidden (and by type), location
 *   session_map  a row per session, newest first: label, boxes (id, kind, name, at, text),
 *             hidden (older boxes not listed), from (the parent's box a fork starts at)
 *   observations (set here: the toggle), selected_event, height, max_nodes, revision
 * Search, read, select_event, archive, rename, merge and refresh go over the request/response
 * channel (base/channel.js); every error comes back as a message shown in the panel.
 *
 * The layout is the kernel's (deterministic: entities as hubs, their neighbours on rings).
 */
import { createChannel } from "./base/channel.js";
import { panZoom } from "./base/panzoom.js";
import { h, badge, formatTokens } from "./base/components.js";

const SVG = "http://www.w3.org/2000/svg";
const FLAG = { stale: 1, hub: 2, pinned: 4, until: 8 };
const TYPES = ["entity", "preference", "decision", "experience", "observation"];
const LABELS = ["about", "decided", "broke", "fixed", "same_as", "observed_in"];
const MIN_K = 0.05;
const MAX_K = 3;
const FAR_K = 0.42; // below this zoom, satellites lose their labels

let views = 0;

/** @param {string} tag @param {Record<string, any>} [attrs] */
function s(tag, attrs = {}) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) if (v != null) el.setAttribute(k, String(v));
  return el;
}

/** @param {Element} el @param {...(Node | string | null | undefined | false)} kids */
function put(el, ...kids) {
  el.replaceChildren(.../** @type {(Node | string)[]} */ (kids.filter((k) => k != null && k !== false)));
}

/** @param {any} model */
function readGraph(model) {
  const g = model.get("_graph") || {};
  const nodes = g.nodes || {};
  for (const c of ["id", "type", "label", "tip", "x", "y", "flags", "deg"]) if (!Array.isArray(nodes[c])) nodes[c] = [];
  const edges = g.edges || {};
  for (const c of ["s", "t", "label"]) if (!Array.isArray(edges[c])) edges[c] = [];
  const clusters = g.clusters || {};
  for (const c of ["x", "y", "r", "hub"]) if (!Array.isArray(clusters[c])) clusters[c] = [];
  return { nodes, edges, clusters, n: nodes.id.length, bounds: Array.isArray(g.bounds) ? g.bounds : [0, 0, 0, 0] };
}

/** The node's shape, centred on (0, 0). @param {string} type @param {boolean} hub */
function shape(type, hub) {
  if (type === "entity") return s("circle", { class: "cx-mnode__shape", r: hub ? 17 : 14 });
  if (type === "decision") return s("path", { class: "cx-mnode__shape", d: "M0,-13 L13,0 L0,13 L-13,0 Z" });
  if (type === "experience") return s("path", { class: "cx-mnode__shape", d: "M0,-13 L12.5,10 L-12.5,10 Z" });
  if (type === "observation") return s("circle", { class: "cx-mnode__shape", r: 6 });
  return s("rect", { class: "cx-mnode__shape", x: -10, y: -10, width: 20, height: 20, rx: 4 });
}

/** @param {{model: any, el: HTMLElement}} ctx */
function render({ model, el }) {
  const uid = `mg${++views}${Math.random().toString(36).slice(2, 7)}`;
  const channel = createChannel(model);
  const disposers = [];

  // ---- state ---------------------------------------------------------------------------
  let g = readGraph(model);
  /** @type {Map<string, number>} */
  let index = new Map();
  let view = { x: 0, y: 0, k: 1 };
  let selected = /** @type {string | null} */ (null);
  let cursor = -1;
  /** @type {{hits: Set<string>, ends: Set<string>, edges: Set<string>} | null} */
  let search = null;
  let lastHits = /** @type {any[]} */ ([]);
  /** @type {SVGGElement[]} */
  let nodeEls = [];
  /** @type {SVGGElement[]} */
  let edgeEls = [];

  function reindex() {
    g = readGraph(model);
    index = new Map(g.nodes.id.map((/** @type {string} */ id, /** @type {number} */ i) => [id, i]));
  }

  // ---- DOM -----------------------------------------------------------------------------
  const root = h("div", { class: "cx-root cx-mgraph", "data-cx-view": uid });
  const titleEl = h("div", { class: "cx-title" });
  const btn = (/** @type {string} */ label, /** @type {() => void} */ onclick, extra = {}) => h("button", { type: "button", class: "cx-btn", onclick, ...extra }, label);
  const query = /** @type {HTMLInputElement} */ (h("input", { class: "cx-input cx-input--search", type: "search", placeholder: "search the memory…", "data-control": "search", "aria-label": "search the memory (memory.find)" }));
  const obsBox = /** @type {HTMLInputElement} */ (h("input", { type: "checkbox", "data-control": "observations" }));
  const actions = h(
    "div",
    { class: "cx-actions" },
    h("form", { class: "cx-search", onsubmit: (/** @type {Event} */ e) => { e.preventDefault(); runSearch(); } }, query, h("button", { type: "submit", class: "cx-btn cx-btn--primary", "data-action": "search" }, "Find")),
    h("label", { class: "cx-control", title: "draw verbatim observations too" }, obsBox, h("span", null, "observations")),
    btn("−", () => zoomBy(1 / 1.25), { title: "zoom out (-)", "aria-label": "zoom out", "data-action": "zoom-out" }),
    btn("+", () => zoomBy(1.25), { title: "zoom in (+)", "aria-label": "zoom in", "data-action": "zoom-in" }),
    btn("Fit", () => fit(), { title: "fit the whole graph (0)", "data-action": "fit" }),
    btn("↻", () => refresh(), { title: "re-read the memory (changes made in Python)", "aria-label": "refresh", "data-action": "refresh" }),
  );
  const head = h("div", { class: "cx-head" }, titleEl, actions);
  const figures = h("div", { class: "cx-stats", "aria-label": "figures" });
  const legendEl = h(
    "div",
    { class: "cx-mlegend", "aria-label": "legend" },
    ...TYPES.map((t) => h("span", { class: `cx-mlegend__item cx-mlegend__item--${t}` }, legendShape(t), t)),
    h("span", { class: "cx-mlegend__item cx-mlegend__item--stale" }, legendShape("decision", "stale"), "stale decision"),
    ...LABELS.map((l) => h("span", { class: `cx-mlegend__item cx-mlegend__edge cx-medge--${l}` }, legendLine(), l)),
  );
  const svg = /** @type {SVGSVGElement} */ (
    /** @type {unknown} */ (s("svg", { class: "cx-mgraph__svg", role: "application", tabindex: "0", "aria-roledescription": "graph", "aria-label": "memory graph: arrows move between nodes, Enter opens one, + and - zoom, 0 fits" }))
  );
  // drag pans, the wheel zooms, a click opens a node (base/panzoom.js)
  const pz = panZoom(svg, {
    get: () => view,
    set: (v) => {
      view = v;
      applyView();
    },
    minK: MIN_K,
    maxK: MAX_K,
    draggingClass: "cx-mgraph--dragging",
    onClick: (e) => {
      const node = /** @type {Element} */ (e.target).closest?.(".cx-mnode");
      if (node) open(String(node.getAttribute("data-id")));
    },
  });
  const defs = s("defs");
  const arrow = s("marker", { id: `${uid}-arrow`, viewBox: "0 0 10 10", refX: "10", refY: "5", markerUnits: "userSpaceOnUse", markerWidth: "9", markerHeight: "9", orient: "auto-start-reverse" });
  arrow.append(s("path", { d: "M0,0 L10,5 L0,10 z", class: "cx-mgraph__arrow" }));
  defs.append(arrow);
  const viewport = s("g", { class: "cx-mgraph__viewport" });
  const clusterLayer = s("g", { class: "cx-mgraph__clusters" });
  const edgeLayer = s("g", { class: "cx-mgraph__edges" });
  const nodeLayer = s("g", { class: "cx-mgraph__nodes" });
  viewport.append(clusterLayer, edgeLayer, nodeLayer);
  svg.append(defs, viewport);
  const zoomLabel = h("span", { class: "cx-mgraph__zoom" });
  const hiddenNote = h("div", { class: "cx-mgraph__hidden", "data-part": "hidden" });
  const graphNote = h("div", { class: "cx-mgraph__note", "data-part": "graph-note" });
  const graphBox = h("div", { class: "cx-mgraph__box" }, svg, zoomLabel, hiddenNote);
  const hitsBox = h("div", { class: "cx-hits", "data-part": "hits" });
  const panelBody = h("div", { class: "cx-panel__body", "data-part": "panel" });
  const panel = h("div", { class: "cx-panel", role: "region", "aria-label": "details" }, hitsBox, panelBody);
  const body = h("div", { class: "cx-body" }, graphBox, panel);
  const mapBox = h("div", { class: "cx-smap", "data-part": "session-map", role: "region", "aria-label": "session map" });
  const statusLine = h("div", { class: "cx-status", role: "status", "aria-live": "polite" });
  root.append(head, figures, legendEl, graphNote, body, mapBox, statusLine);
  el.append(root);

  /** @param {string} t @param {string} [extra] */
  function legendShape(t, extra = "") {
    const box = s("svg", { class: `cx-mlegend__swatch cx-mswatch cx-mswatch--${t}${extra ? ` cx-mswatch--${extra}` : ""}`, viewBox: "-16 -16 32 32", width: 16, height: 16, "aria-hidden": "true" });
    box.append(shape(t, false));
    return box;
  }
  function legendLine() {
    const box = s("svg", { class: "cx-mlegend__line", viewBox: "0 0 28 10", width: 28, height: 10, "aria-hidden": "true" });
    box.append(s("line", { x1: 1, y1: 5, x2: 27, y2: 5 }));
    return box;
  }

  function setHeight() {
    const px = Math.max(240, Number(model.get("height")) || 520);
    graphBox.style.height = `${px}px`;
    panel.style.height = `${px}px`;
  }

  /** @param {string} text @param {"info" | "error" | "ok"} [kind] */
  function status(text, kind = "info") {
    statusLine.textContent = text;
    statusLine.dataset.kind = kind;
  }

  /** @param {string} name @param {string} label @param {string} value @param {string} [hint] */
  function stat(name, label, value, hint = "") {
    return h("span", { class: "cx-stat", "data-stat": name, title: hint || null }, h("span", { class: "cx-stat__label" }, label), h("span", { class: "cx-stat__value" }, value));
  }

  // ---- header --------------------------------------------------------------------------
  function renderHeader() {
    const sm = model.get("summary") || {};
    const total = sm.total || {};
    const shown = sm.shown || {};
    put(titleEl, h("span", { class: "cx-title__name" }, "Memory"), h("span", { class: "cx-title__meta", title: sm.location || "" }, String(sm.location || "").split("/").pop() || ""));
    const types = TYPES.filter((t) => t !== "observation" || sm.observations || total[t]);
    put(
      figures,
      ...types.map((t) => stat(t, `${t === "entity" ? "entities" : t + "s"}`, shown[t] === total[t] ? formatTokens(total[t] || 0) : `${formatTokens(shown[t] || 0)} / ${formatTokens(total[t] || 0)}`, t === "observation" && !sm.observations ? "hidden: tick observations to draw them" : "drawn / in the memory")),
      stat("edges", "edges", formatTokens(sm.edges || 0)),
      sm.stale ? stat("stale", "stale", formatTokens(sm.stale), "decisions past their deadline") : null,
    );
    const hidden = sm.hidden || 0;
    const by = sm.hidden_by_type || {};
    hiddenNote.hidden = !hidden;
    hiddenNote.textContent = hidden ? `${formatTokens(hidden)} more not drawn (max_nodes ${formatTokens(sm.max_nodes)}: the most connected are shown): ${Object.entries(by).map(([t, n]) => `${formatTokens(/** @type {number} */ (n))} ${t}`).join(", ")}` : "";
    obsBox.checked = Boolean(model.get("observations"));
    // a memory with no entity and no edge draws loose memories only: say so, and what to do
    const drawn = Object.values(shown).reduce((/** @type {number} */ a, /** @type {any} */ b) => a + (Number(b) || 0), 0);
    const bare = drawn > 0 && !total.entity && !sm.edges;
    graphNote.hidden = !bare;
    graphNote.textContent = bare ? "No entities and no edges yet: these memories are not linked to anything. mem.link(a, \"about\", b) links two; ingesting more sessions finds the names they share." : "";
  }

  // ---- the session map: each session's boxes (checkpoints, tail, fork), clickable -------
  function renderMap() {
    const rows = /** @type {any[]} */ (model.get("session_map") || []);
    mapBox.hidden = rows.length === 0;
    const chip = (/** @type {any} */ b) =>
      h(
        "button",
        { type: "button", class: `cx-smap__box cx-smap__box--${b.kind}${b.id === selected ? " cx-smap__box--selected" : ""}`, "data-id": b.id, "data-kind": b.kind, title: b.text || b.name, onclick: () => open(b.id) },
        h("span", { class: "cx-smap__kind" }, b.kind),
        h("span", { class: "cx-smap__name" }, b.name),
        b.at != null ? h("span", { class: "cx-smap__at" }, `#${b.at}`) : null,
      );
    put(
      mapBox,
      h("div", { class: "cx-smap__title" }, "Session map", h("span", { class: "cx-smap__hint" }, "each session's checkpoints, newest session first; click a box to read it")),
      ...rows.map((r) => {
        const kids = [];
        for (const [i, b] of r.boxes.entries()) {
          if (i) kids.push(h("span", { class: "cx-smap__arrow", "aria-hidden": "true" }, "→"));
          kids.push(chip(b));
        }
        return h(
          "div",
          { class: "cx-smap__row", "data-session": r.session },
          h("code", { class: "cx-smap__sid", title: r.session }, r.label),
          r.from ? h("button", { type: "button", class: "cx-linkbtn cx-smap__from", "data-action": "fork-origin", title: "the parent's box this session forks from", onclick: () => open(r.from.id) }, `forked from ${r.from.label}`) : null,
          r.hidden ? h("span", { class: "cx-smap__more" }, `${formatTokens(r.hidden)} earlier`) : null,
          ...kids,
        );
      }),
    );
  }

  // ---- the view transform --------------------------------------------------------------
  const size = () => pz.size();
  function applyView() {
    viewport.setAttribute("transform", `translate(${view.x.toFixed(2)},${view.y.toFixed(2)}) scale(${view.k.toFixed(4)})`);
    svg.classList.toggle("cx-mgraph--far", view.k < FAR_K);
    zoomLabel.textContent = `${Math.round(view.k * 100)}%`;
  }
  function fit() {
    const { w, h: hh } = size();
    const [x0, y0, x1, y1] = g.bounds;
    const pad = 16;
    const gw = Math.max(1, x1 - x0), gh = Math.max(1, y1 - y0);
    const k = Math.max(MIN_K, Math.min(1.4, (w - 2 * pad) / gw, (hh - 2 * pad) / gh));
    view = { k, x: (w - gw * k) / 2 - x0 * k, y: (hh - gh * k) / 2 - y0 * k };
    applyView();
  }
  /** @param {number} factor @param {number} [cx] @param {number} [cy] */
  const zoomBy = (factor, cx, cy) => pz.zoomBy(factor, cx, cy);
  /** @param {number} i */
  function reveal(i) {
    const { w, h: hh } = size();
    const sx = g.nodes.x[i] * view.k + view.x, sy = g.nodes.y[i] * view.k + view.y;
    if (sx < 20 || sy < 20 || sx > w - 20 || sy > hh - 20) {
      view = { ...view, x: w / 2 - g.nodes.x[i] * view.k, y: hh / 2 - g.nodes.y[i] * view.k };
      applyView();
    }
  }

  // ---- drawing -------------------------------------------------------------------------
  /** @param {number} i */
  function nodeClass(i) {
    const f = g.nodes.flags[i];
    const id = g.nodes.id[i];
    return (
      `cx-mnode cx-mnode--${g.nodes.type[i]}` +
      (f & FLAG.hub ? " cx-mnode--hub" : "") +
      (f & FLAG.stale ? " cx-mnode--stale" : "") +
      (search?.hits.has(id) ? " cx-mnode--hit" : search?.ends.has(id) ? " cx-mnode--path" : "") +
      (id === selected ? " cx-mnode--selected" : "") +
      (i === cursor ? " cx-mnode--cursor" : "")
    );
  }

  /** @param {number} e */
  function edgeKey(e) {
    return `${g.nodes.id[g.edges.s[e]]}|${g.nodes.id[g.edges.t[e]]}|${g.edges.label[e]}`;
  }

  /** @param {number} i */
  function makeNode(i) {
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

  // ---- labels: a greedy layout pass so that no two labels (nor a label and a node) overlap.
  // Labels scale with the view, so a layout made in graph units holds at every zoom. The most
  // important label is placed first (selected, hits, path ends, hubs, entities, the most
  // connected); each tries its own side, then right, left, below and above, in full and then
  // cut short; a label with no free place is hidden. The full text stays in the node's
  // tooltip and aria-label, and in the panel.
  const SHORT = 16;
  /** @type {CanvasRenderingContext2D | null} */
  let measurer = null;
  /** @type {Map<string, number>} */
  const widths = new Map();
  let laidOut = "";
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
  /** @param {number} i */
  function labelRank(i) {
    const id = g.nodes.id[i];
    if (id === selected) return 0;
    if (search?.hits.has(id)) return 1;
    if (search?.ends.has(id)) return 2;
    if (g.nodes.flags[i] & FLAG.hub) return 3;
    return g.nodes.type[i] === "entity" ? 4 : g.nodes.type[i] === "observation" ? 6 : 5;
  }
  /** @param {number} i */
  function nodeRadius(i) {
    return g.nodes.flags[i] & FLAG.hub ? 18 : g.nodes.type[i] === "observation" ? 7 : 14;
  }
  /** @param {boolean} [force] */
  function layoutLabels(force = false) {
    const key = `${model.get("revision")}|${g.n}|${selected}|${search ? [...search.hits].join(",") : ""}`;
    if (!force && key === laidOut) return;
    laidOut = key;
    /** @type {number[][]} */
    const placed = [];
    for (let i = 0; i < g.n; i++) {
      const r = nodeRadius(i);
      placed.push([g.nodes.x[i] - r, g.nodes.y[i] - r, g.nodes.x[i] + r, g.nodes.y[i] + r, i]);
    }
    const free = (/** @type {number[]} */ b, /** @type {number} */ own) => {
      for (const p of placed) {
        if (p[4] === own) continue;
        if (Math.min(b[2], p[2]) - Math.max(b[0], p[0]) > 1 && Math.min(b[3], p[3]) - Math.max(b[1], p[1]) > 1) return false;
      }
      return true;
    };
    const order = [...Array(g.n).keys()].sort((a, b) => labelRank(a) - labelRank(b) || (g.nodes.deg[b] || 0) - (g.nodes.deg[a] || 0) || a - b);
    const [x0, y0, x1, y1] = g.bounds;
    let hidden = 0;
    for (const i of order) {
      const t = /** @type {SVGTextElement | null} */ (nodeEls[i]?.querySelector(".cx-mnode__label"));
      if (!t) continue;
      const full = String(t.dataset.full || t.textContent || "");
      t.dataset.full = full;
      const x = g.nodes.x[i], y = g.nodes.y[i];
      const own = [t.getAttribute("text-anchor") || "start", Number(t.getAttribute("x")), Number(t.getAttribute("y"))];
      t.dataset.home = t.dataset.home || own.join(",");
      const home = t.dataset.home.split(",");
      const r = nodeRadius(i);
      const places = [
        [home[0], Number(home[1]), Number(home[2])],
        ["start", r + 3, 4],
        ["end", -r - 3, 4],
        ["middle", 0, r + 13],
        ["middle", 0, -r - 5],
      ];
      const fs = parseFloat(getComputedStyle(t).fontSize) || 11.5;
      const texts = full.length > SHORT + 2 ? [full, full.slice(0, SHORT).trimEnd() + "…"] : [full];
      // its own side in full, then cut short; then the other sides, in full, then cut short
      const tries = [];
      for (const text of texts) tries.push([places[0], text]);
      for (const text of texts) for (const p of places.slice(1)) tries.push([p, text]);
      let done = false;
      for (const [[anchor, dx, dy], text] of tries) {
        {
          const w = textWidth(t, String(text));
          const left = x + Number(dx) - (anchor === "middle" ? w / 2 : anchor === "end" ? w : 0);
          const box = [left, y + Number(dy) - fs * 0.8, left + w, y + Number(dy) + fs * 0.25, i];
          // inside the graph's bounds (what Fit shows), clear of every label and node placed
          if (box[0] < x0 || box[2] > x1 || box[1] < y0 || box[3] > y1 || !free(box, i)) continue;
          t.setAttribute("text-anchor", String(anchor));
          t.setAttribute("x", String(dx));
          t.setAttribute("y", String(dy));
          t.textContent = String(text);
          t.classList.remove("cx-mnode__label--hidden");
          t.dataset.cut = text === full ? "" : "1";
          placed.push(box);
          done = true;
          break;
        }
      }
      if (!done) {
        t.classList.add("cx-mnode__label--hidden");
        hidden++;
      }
    }
    svg.dataset.hiddenLabels = String(hidden);
  }

  /** @type {Map<number, number>} node index -> cluster index (satellites) */
  let clusterOf = new Map();

  /** @param {number} e */
  function makeEdge(e) {
    const a = g.edges.s[e], b = g.edges.t[e];
    const ax = g.nodes.x[a], ay = g.nodes.y[a], bx = g.nodes.x[b], by = g.nodes.y[b];
    const len = Math.hypot(bx - ax, by - ay) || 1;
    const pad = (/** @type {number} */ i) => (g.nodes.flags[i] & FLAG.hub ? 20 : g.nodes.type[i] === "observation" ? 8 : 15);
    const x1 = ax + ((bx - ax) * pad(a)) / len, y1 = ay + ((by - ay) * pad(a)) / len;
    const x2 = bx - ((bx - ax) * pad(b)) / len, y2 = by - ((by - ay) * pad(b)) / len;
    const label = g.edges.label[e];
    const grp = /** @type {SVGGElement} */ (/** @type {unknown} */ (s("g", { class: `cx-medge cx-medge--${label}`, "data-e": e, "data-label": label, "data-src": g.nodes.id[a], "data-dst": g.nodes.id[b] })));
    grp.append(s("line", { x1: x1.toFixed(1), y1: y1.toFixed(1), x2: x2.toFixed(1), y2: y2.toFixed(1), "marker-end": `url(#${uid}-arrow)` }));
    const tip = s("title");
    tip.textContent = `${g.nodes.label[a]} —${label}→ ${g.nodes.label[b]}`;
    grp.append(tip);
    return grp;
  }

  function redrawAll() {
    clusterOf = new Map();
    for (let c = 0; c < g.clusters.x.length; c++) {
      const hub = g.clusters.hub[c];
      if (hub < 0) continue;
      for (let i = 0; i < g.n; i++) if (Math.hypot(g.nodes.x[i] - g.clusters.x[c], g.nodes.y[i] - g.clusters.y[c]) < g.clusters.r[c] && i !== hub && !clusterOf.has(i)) clusterOf.set(i, c);
    }
    const rings = [];
    for (let c = 0; c < g.clusters.x.length; c++) {
      if (g.clusters.hub[c] < 0) continue;
      rings.push(s("circle", { class: "cx-mcluster", cx: g.clusters.x[c], cy: g.clusters.y[c], r: Math.max(40, g.clusters.r[c] - 70) }));
    }
    put(clusterLayer, ...rings);
    edgeEls = [];
    for (let e = 0; e < g.edges.s.length; e++) edgeEls.push(makeEdge(e));
    put(edgeLayer, ...edgeEls);
    nodeEls = [];
    for (let i = 0; i < g.n; i++) nodeEls.push(makeNode(i));
    put(nodeLayer, ...nodeEls);
    if (!g.n) {
      const t = s("text", { class: "cx-mgraph__empty", x: 0, y: 0, "text-anchor": "middle" });
      const sm = model.get("summary") || {};
      const total = Object.values(sm.total || {}).reduce((/** @type {number} */ a, /** @type {any} */ b) => a + (Number(b) || 0), 0);
      const obs = (sm.total || {}).observation || 0;
      t.textContent = total
        ? obs && !model.get("observations")
          ? `Nothing to draw: ${obs} observation${obs === 1 ? "" : "s"} are hidden. Tick “observations” to draw them.`
          : "Nothing to draw here: search, or ↻ to re-read the memory."
        : "This memory is empty: mem.ingest(session) or mem.remember(...) adds to it.";
      nodeLayer.append(t);
    }
    laidOut = "";
    restyle();
  }

  function restyle() {
    svg.classList.toggle("cx-mgraph--searching", Boolean(search));
    for (let i = 0; i < nodeEls.length; i++) nodeEls[i].setAttribute("class", nodeClass(i));
    for (let e = 0; e < edgeEls.length; e++) {
      const on = search?.edges.has(edgeKey(e));
      edgeEls[e].classList.toggle("cx-medge--hit", Boolean(on));
      if (on) edgeLayer.append(edgeEls[e]); // on top
    }
    svg.dataset.nodes = String(g.n);
    svg.dataset.hits = String(search ? search.hits.size : 0);
    layoutLabels();
    for (const b of mapBox.querySelectorAll(".cx-smap__box")) b.classList.toggle("cx-smap__box--selected", b.getAttribute("data-id") === selected);
  }

  // ---- pointer -------------------------------------------------------------------------

  // ---- keyboard ------------------------------------------------------------------------
  /** @param {number} i */
  function setCursor(i) {
    cursor = i;
    restyle();
    if (i >= 0) svg.setAttribute("aria-activedescendant", `${uid}-n${i}`);
  }
  /** @param {number} dx @param {number} dy */
  function nearest(dx, dy) {
    if (!g.n) return -1;
    if (cursor < 0) return 0;
    const cx = g.nodes.x[cursor], cy = g.nodes.y[cursor];
    let best = -1, score = Infinity;
    for (let i = 0; i < g.n; i++) {
      if (i === cursor) continue;
      const ddx = g.nodes.x[i] - cx, ddy = g.nodes.y[i] - cy;
      const along = ddx * dx + ddy * dy;
      if (along <= 1) continue;
      const sc = along + (Math.abs(ddx * dy) + Math.abs(ddy * dx)) * 3;
      if (sc < score) { score = sc; best = i; }
    }
    return best;
  }
  svg.addEventListener("keydown", (e) => {
    if (e.altKey || e.ctrlKey || e.metaKey) return;
    const dir = /** @type {Record<string, number[]>} */ ({ ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1] })[e.key];
    let handled = true;
    if (dir) {
      const i = nearest(dir[0], dir[1]);
      if (i >= 0) { setCursor(i); reveal(i); }
    } else if (e.key === "+" || e.key === "=") zoomBy(1.25);
    else if (e.key === "-" || e.key === "_") zoomBy(1 / 1.25);
    else if (e.key === "0") fit();
    else if ((e.key === "Enter" || e.key === " ") && cursor >= 0) open(g.nodes.id[cursor]);
    else handled = false;
    if (handled) { e.preventDefault(); e.stopPropagation(); }
  });
  // Keys typed in the widget must not reach the notebook ("a", "0", "-" are commands there).
  root.addEventListener("keydown", (e) => {
    if (e.key === "Tab" || e.key === "Escape" || e.ctrlKey || e.metaKey || e.altKey) return;
    e.stopPropagation();
  });

  // ---- search --------------------------------------------------------------------------
  let asked = 0;
  function runSearch() {
    const q = query.value.trim();
    const mine = ++asked;
    status(q ? `finding “${q}”…` : "search cleared");
    channel.request("search", { query: q }).then(
      (r) => {
        if (mine !== asked) return;
        if (!q) {
          search = null;
          lastHits = [];
          renderHits();
          restyle();
          return;
        }
        search = { hits: new Set(r.hits.map((/** @type {any} */ x) => x.id)), ends: new Set(r.nodes), edges: new Set(r.edges.map((/** @type {string[]} */ e) => e.join("|"))) };
        lastHits = r.hits;
        renderHits();
        restyle();
        status(`${r.hits.length} hit${r.hits.length === 1 ? "" : "s"} for “${r.query}”, ${r.edges.length} path edge${r.edges.length === 1 ? "" : "s"}`, "ok");
      },
      (err) => { if (mine === asked) status(`${err.type}: ${err.message}`, "error"); },
    );
  }
  query.addEventListener("search", () => { if (!query.value) runSearch(); });

  function renderHits() {
    if (!search) { put(hitsBox); hitsBox.hidden = true; return; }
    hitsBox.hidden = false;
    put(
      hitsBox,
      h("div", { class: "cx-hits__head" }, h("span", null, `${lastHits.length} hit${lastHits.length === 1 ? "" : "s"}`), btn("clear", () => { query.value = ""; runSearch(); }, { class: "cx-linkbtn", "data-action": "clear-search" })),
      lastHits.length
        ? h(
            "ol",
            { class: "cx-hits__list" },
            ...lastHits.map((x) =>
              h(
                "li",
                { class: "cx-hit", "data-id": x.id },
                h("button", { type: "button", class: "cx-linkbtn cx-hit__name", title: x.text, onclick: () => open(x.id) }, x.name),
                badge(`mt-${x.type}`, x.type),
                x.stale ? badge("failed", "stale") : null,
                h("span", { class: "cx-hit__score", title: `found by ${x.via}` }, `${x.score.toFixed(2)} · ${x.via}`),
                snippetOf(x),
              ),
            ),
          )
        : h("div", { class: "cx-empty" }, "No memory matches."),
    );
  }

  /** A hit's snippet: the matching text with the query's words marked. @param {any} x */
  function snippetOf(x) {
    const parts = Array.isArray(x.snippet) && x.snippet.length ? x.snippet : x.text ? [[x.text, false]] : [];
    if (!parts.length) return null;
    return h("div", { class: "cx-hit__snippet", "data-part": "snippet" }, ...parts.map((/** @type {[string, boolean]} */ [t, on]) => (on ? h("mark", null, t) : t)));
  }

  // ---- the panel -----------------------------------------------------------------------
  let reading = 0;
  function emptyPanel() {
    put(panelBody, h("div", { class: "cx-empty" }, "Click a node to read it: its text, sources and edges; archive, rename or merge it from here."));
  }

  /** @param {string} id */
  function open(id) {
    selected = id;
    const i = index.get(id);
    if (i != null) { cursor = i; reveal(i); }
    restyle();
    const mine = ++reading;
    put(panelBody, h("div", { class: "cx-loading" }, "reading…"));
    channel.request("read", { node: id }).then(
      (r) => {
        if (mine !== reading) return;
        const j = index.get(id);
        if (j != null) { cursor = j; reveal(j); restyle(); }
        showNode(r);
      },
      (err) => { if (mine === reading) put(panelBody, h("div", { class: "cx-note cx-note--error", "data-part": "error" }, `${err.type}: ${err.message}`)); },
    );
  }

  const row = (/** @type {string} */ k, /** @type {any} */ v) => h("div", { class: "cx-kv__row", "data-k": k }, h("span", { class: "cx-kv__k" }, k), h("span", { class: "cx-kv__v" }, v));

  /** @param {any} r */
  function showNode(r) {
    const sel = model.get("selected_event") || {};
    const errBox = h("div", { class: "cx-note cx-note--error", "data-part": "action-error", role: "alert" });
    errBox.hidden = true;
    const nameIn = /** @type {HTMLInputElement} */ (h("input", { class: "cx-input", type: "text", value: r.name, "data-control": "rename", "aria-label": "new name" }));
    const pick = /** @type {HTMLSelectElement} */ (
      h("select", { class: "cx-input", "data-control": "merge-pick", "aria-label": `another ${r.type} to merge into this one` }, h("option", { value: "" }, r.merge_choices.length ? `another ${r.type}…` : `no other ${r.type}`), ...r.merge_choices.map((/** @type {any} */ c) => h("option", { value: c.id }, c.name)))
    );
    const active = r.status === "active";
    const box = r.type === "episode"; // a session map box: renamed, never merged or archived here
    const edgeItem = (/** @type {any} */ e, /** @type {string} */ dir) =>
      h(
        "li",
        { class: `cx-medgeitem${e.active ? "" : " cx-medgeitem--archived"}`, "data-id": e.id, "data-label": e.label },
        h("span", { class: `cx-medgeitem__label cx-medge--${e.label}` }, dir === "in" ? `← ${e.label}` : `${e.label} →`),
        badge(`mt-${e.type}`, e.type),
        h("button", { type: "button", class: "cx-linkbtn", "data-action": "jump", title: e.active ? "go to this node" : "archived", disabled: !e.active, onclick: () => open(e.id) }, e.name),
      );
    const ins = r.incoming, outs = r.outgoing;
    put(
      panelBody,
      h("div", { class: "cx-panel__title" }, badge(`mt-${r.type}`, r.type), r.stale ? badge("failed", "stale") : null, r.status !== "active" ? badge("off", r.status) : null, h("span", { class: "cx-panel__name", "data-part": "name" }, r.name), h("code", { class: "cx-panel__id" }, r.id)),
      r.text && r.text !== r.name ? h("div", { class: "cx-mtext", "data-part": "text" }, r.text) : null,
      h(
        "div",
        { class: "cx-kv" },
        r.aliases.length ? row("aliases", r.aliases.join(", ")) : null,
        r.until ? row("until", h("span", null, r.until, r.until_at ? ` (${String(r.until_at).slice(0, 16).replace("T", " ")})` : "", r.stale ? h("strong", { class: "cx-stale-text" }, " · stale: the deadline passed") : "")) : null,
        r.fail ? row("failed", h("code", null, r.fail)) : null,
        r.fix ? row("fix", h("code", null, r.fix)) : null,
        row("uri", h("code", null, r.uri)),
        row("updated", String(r.updated || "").replace("T", " ").slice(0, 19)),
      ),
      h(
        "div",
        { class: "cx-section", "data-part": "sources" },
        h("h4", null, `sources (${r.sources.length})`),
        r.sources.length
          ? h(
              "ol",
              { class: "cx-sources" },
              ...r.sources.map((/** @type {any} */ src) =>
                h(
                  "li",
                  { class: "cx-source", "data-session": src.session || "", "data-seq": src.seq ?? "" },
                  h(
                    "div",
                    { class: "cx-source__head" },
                    src.session ? h("code", { class: "cx-source__session", title: src.session }, src.short) : h("span", { class: "cx-note" }, "typed in"),
                    src.seq != null && src.session
                      ? h("button", { type: "button", class: `cx-seq${sel.session === src.session && sel.seq === src.seq ? " cx-seq--selected" : ""}`, "data-action": "event", title: "select this event (selected_event)", onclick: (/** @type {MouseEvent} */ ev) => selectEvent(r.id, src, /** @type {HTMLElement} */ (ev.currentTarget)) }, `#${src.seq}`)
                      : null,
                    badge("off", src.via),
                  ),
                  src.quote ? h("blockquote", { class: "cx-quote" }, src.quote) : null,
                ),
              ),
            )
          : h("div", { class: "cx-empty" }, "no sources"),
      ),
      h(
        "div",
        { class: "cx-section", "data-part": "edges" },
        h("h4", null, `edges (${ins.length} in, ${outs.length} out)`),
        ins.length + outs.length ? h("ul", { class: "cx-medges" }, ...ins.map((/** @type {any} */ e) => edgeItem(e, "in")), ...outs.map((/** @type {any} */ e) => edgeItem(e, "out"))) : h("div", { class: "cx-empty" }, "no edges"),
      ),
      active
        ? h(
            "div",
            { class: "cx-section cx-medit", "data-part": "edit" },
            h("h4", null, "edit"),
            h("form", { class: "cx-medit__row", onsubmit: (/** @type {Event} */ e) => { e.preventDefault(); act("rename", { node: r.id, name: nameIn.value }, errBox, `renamed to “${nameIn.value.trim()}”`); } }, nameIn, h("button", { type: "submit", class: "cx-btn", "data-action": "rename" }, "Rename")),
            box ? null : h("div", { class: "cx-medit__row" }, pick, h("button", { type: "button", class: "cx-btn", "data-action": "merge", title: "merge the chosen node into this one (memory.merge)", onclick: () => act("merge", { keep: r.id, drop: pick.value }, errBox, "merged") }, "Merge into this")),
            !box && r.merge_total > r.merge_choices.length ? h("div", { class: "cx-note" }, `the first ${r.merge_choices.length} of ${formatTokens(r.merge_total)} are listed`) : null,
            box ? null : h("div", { class: "cx-medit__row" }, h("button", { type: "button", class: "cx-btn cx-btn--danger", "data-action": "archive", title: "hide it from search, the map and the graph (memory.archive; restorable)", onclick: () => act("archive", { node: r.id }, errBox, "archived") }, "Archive")),
            errBox,
          )
        : h("div", { class: "cx-section" }, h("div", { class: "cx-note", "data-part": "archived" }, "Archived: hidden from search, the map and the graph."), h("button", { type: "button", class: "cx-btn", "data-action": "restore", onclick: () => act("restore", { node: r.id }, errBox, "restored") }, "Restore"), errBox),
    );
  }

  /** @param {string} type @param {Record<string, any>} args @param {HTMLElement} errBox @param {string} done */
  function act(type, args, errBox, done) {
    errBox.hidden = true;
    root.classList.add("cx-pending");
    channel.request(type, args).then(
      (r) => {
        root.classList.remove("cx-pending");
        status(`${done} (${r.node})`, "ok");
        if (query.value.trim() && search) runSearch();
        open(r.node);
      },
      (err) => {
        root.classList.remove("cx-pending");
        errBox.hidden = false;
        errBox.textContent = `${err.type}: ${err.message}`;
        status(`${type} failed: ${err.message}`, "error");
      },
    );
  }

  /** @param {string} id @param {any} src @param {HTMLElement} button */
  function selectEvent(id, src, button) {
    channel.request("select_event", { node: id, session: src.session, seq: src.seq }).then(
      (r) => {
        for (const b of panelBody.querySelectorAll(".cx-seq--selected")) b.classList.remove("cx-seq--selected");
        button.classList.add("cx-seq--selected");
        status(`selected_event = {session: ${r.session.slice(0, 8)}…, seq: ${r.seq}}`, "ok");
      },
      (err) => status(`${err.type}: ${err.message}`, "error"),
    );
  }

  function refresh() {
    status("re-reading the memory…");
    channel.request("refresh").then(
      () => {
        status("up to date", "ok");
        if (selected) open(selected);
      },
      (err) => status(`${err.type}: ${err.message}`, "error"),
    );
  }

  obsBox.addEventListener("change", () => {
    model.set("observations", obsBox.checked);
    model.save_changes();
  });

  // ---- sync ----------------------------------------------------------------------------
  /** Whether the graph draws observations (the toggle's effect, as the kernel drew it). */
  const drawsObservations = () => g.nodes.type.includes("observation");
  let fittedObs = false;
  function onGraph() {
    const first = g.n === 0;
    reindex();
    if (cursor >= g.n) cursor = -1;
    if (selected && !index.has(selected)) cursor = -1;
    renderHeader();
    redrawAll();
    // observations shown or hidden change the graph's extent: fit it again
    const obs = drawsObservations();
    if (first || obs !== fittedObs) fit();
    fittedObs = obs;
  }
  const handlers = [
    ["change:_graph", onGraph],
    ["change:summary", renderHeader],
    ["change:session_map", renderMap],
    ["change:observations", renderHeader],
    ["change:height", () => { setHeight(); }],
  ];
  for (const [ev, fn] of handlers) model.on(ev, fn);
  disposers.push(() => { for (const [ev, fn] of handlers) model.off(ev, fn); });

  reindex();
  fittedObs = drawsObservations();
  setHeight();
  renderHeader();
  renderMap();
  renderHits();
  emptyPanel();
  redrawAll();
  applyView();
  let fitted = false;
  const ro = new ResizeObserver(() => {
    if (!fitted && svg.getBoundingClientRect().width > 0) { fitted = true; fit(); }
  });
  ro.observe(svg);
  disposers.push(() => ro.disconnect());

  return () => {
    for (const d of disposers) d();
    channel.dispose();
  };
}

export default { render };
