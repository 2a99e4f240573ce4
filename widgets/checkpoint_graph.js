// @ts-check
/**
 * CheckpointGraph: a Fold's checkpoints (system head, frozen prefix, checkpoints a rebase
 * merged, masking passes, the frontier and the open tail) or a workspace's sessions (fork and
 * subagent edges) as a pannable, zoomable SVG graph with a side panel.
 *
 * Synced traits (small, set by the kernel):
 *   _graph    nodes by column (id, kind, label, sub, mode, tokens, flags, ref, x, y), edges
 *             (source, target, kind, label), bounds [x0, y0, x1, y1], node [w, h], frontier
 *             (x of the frozen / open boundary, or null), layout ("fold" | "workspace")
 *   summary, title, height, revision
 * A checkpoint's state, its exact messages (recall), "fork from here" and a session's row
 * come over the request/response channel (base/channel.js).
 *
 * The layout is the kernel's (deterministic). Only the nodes and edges inside the view (plus a
 * margin) are in the DOM, and labels are dropped when zoomed far out, so hundreds of
 * checkpoints or sessions stay responsive.
 */
import { createChannel } from "./base/channel.js";
import { panZoom } from "./base/panzoom.js";
import { h, badge, formatTokens, stackedBar, legend } from "./base/components.js";

const SVG = "http://www.w3.org/2000/svg";
const FLAG = { frozen: 1, superseded: 2, recallable: 4, inherited: 8, focus: 16, unreadable: 32, live: 64 };
const PAGE = 20; // recalled messages per request (the engine's MAX_PAGE)
const MIN_K = 0.002;
const MAX_K = 3;
const FAR_K = 0.45; // below this zoom, nodes lose their text
const MARGIN = 240; // graph units around the view that are rendered too

let views = 0;

/** @param {string} tag @param {Record<string, any>} [attrs] */
function s(tag, attrs = {}) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) if (v != null) el.setAttribute(k, String(v));
  return el;
}

/**
 * `el.replaceChildren(...)` without the null / false children (which it would print).
 * @param {Element} el @param {...(Node | string | null | undefined | false)} kids
 */
function put(el, ...kids) {
  el.replaceChildren(.../** @type {(Node | string)[]} */ (kids.filter((k) => k != null && k !== false)));
}

/** @param {any} model */
function readGraph(model) {
  const g = model.get("_graph") || {};
  const nodes = g.nodes || {};
  for (const c of ["id", "kind", "label", "sub", "mode", "tokens", "flags", "ref", "x", "y"]) {
    if (!Array.isArray(nodes[c])) nodes[c] = [];
  }
  const edges = g.edges || {};
  for (const c of ["source", "target", "kind", "label"]) if (!Array.isArray(edges[c])) edges[c] = [];
  return {
    nodes,
    edges,
    n: nodes.id.length,
    bounds: Array.isArray(g.bounds) ? g.bounds : [0, 0, 0, 0],
    size: Array.isArray(g.node) ? g.node : [186, 66],
    frontier: typeof g.frontier === "number" ? g.frontier : null,
    layout: g.layout || "fold",
  };
}

/** @param {{model: any, el: HTMLElement}} ctx */
function render({ model, el }) {
  const uid = `cg${++views}${Math.random().toString(36).slice(2, 7)}`; // unique: each widget loads its own copy of this module
  const channel = createChannel(model);
  const disposers = [];

  // ---- state ---------------------------------------------------------------------------
  let g = readGraph(model);
  /** @type {Map<string, number>} */
  let index = new Map();
  let edgeIdx = { s: new Int32Array(0), t: new Int32Array(0) };
  /** @type {Map<number, number>} merged edges per source node (a group of two or more is labelled to the side) */
  let mergedFrom = new Map();
  let view = { x: 0, y: 0, k: 1 }; // screen = graph * k + (x, y)
  let cursor = -1; // keyboard position (node index)
  let selected = /** @type {string | null} */ (null);
  let frame = 0;
  /** @type {Map<number, SVGGElement>} */
  const shownNodes = new Map();
  /** @type {Map<number, SVGGElement>} */
  const shownEdges = new Map();

  function reindex() {
    g = readGraph(model);
    index = new Map(g.nodes.id.map((id, i) => [id, i]));
    const m = g.edges.source.length;
    edgeIdx = { s: new Int32Array(m), t: new Int32Array(m) };
    for (let e = 0; e < m; e++) {
      edgeIdx.s[e] = index.get(g.edges.source[e]) ?? -1;
      edgeIdx.t[e] = index.get(g.edges.target[e]) ?? -1;
    }
    mergedFrom = new Map();
    for (let e = 0; e < m; e++) if (g.edges.kind[e] === "merged") mergedFrom.set(edgeIdx.s[e], (mergedFrom.get(edgeIdx.s[e]) || 0) + 1);
  }

  // ---- DOM -----------------------------------------------------------------------------
  const root = h("div", { class: "cx-root cx-graph", "data-cx-view": uid });
  const titleEl = h("div", { class: "cx-title" });
  const btn = (label, onclick, extra = {}) => h("button", { type: "button", class: "cx-btn", onclick, ...extra }, label);
  const actions = h(
    "div",
    { class: "cx-actions" },
    btn("−", () => zoomBy(1 / 1.25), { title: "zoom out (-)", "aria-label": "zoom out", "data-action": "zoom-out" }),
    btn("+", () => zoomBy(1.25), { title: "zoom in (+)", "aria-label": "zoom in", "data-action": "zoom-in" }),
    btn("Fit", () => fit(), { title: "fit the whole graph (0)", "data-action": "fit" }),
    btn("↻", () => refresh(), { title: "re-read the fold or workspace", "aria-label": "refresh", "data-action": "refresh" }),
  );
  const head = h("div", { class: "cx-head" }, titleEl, actions);
  const figures = h("div", { class: "cx-figures", "aria-label": "figures" });
  const svg = /** @type {SVGSVGElement} */ (
    /** @type {unknown} */ (
      s("svg", {
        class: "cx-graph__svg",
        role: "application",
        tabindex: "0",
        "aria-roledescription": "graph",
        "aria-label": "checkpoint graph: arrows move between nodes, Enter opens one, + and - zoom, 0 fits the graph to the view, Shift+arrows pan",
      })
    )
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
    draggingClass: "cx-graph--dragging",
    onClick: (e) => {
      const node = /** @type {Element} */ (e.target).closest?.(".cx-node");
      if (node) {
        const i = Number(node.getAttribute("data-i"));
        setCursor(i);
        select(i);
      }
    },
  });
  const defs = s("defs");
  const arrow = s("marker", { id: `${uid}-arrow`, viewBox: "0 0 10 10", refX: "9", refY: "5", markerWidth: "7", markerHeight: "7", orient: "auto-start-reverse" });
  arrow.append(s("path", { d: "M0,0 L10,5 L0,10 z", class: "cx-graph__arrow" }));
  defs.append(arrow);
  const viewport = s("g", { class: "cx-graph__viewport" });
  const bands = s("g", { class: "cx-graph__bands" });
  const edgeLayer = s("g", { class: "cx-graph__edges" });
  const nodeLayer = s("g", { class: "cx-graph__nodes" });
  viewport.append(bands, edgeLayer, nodeLayer);
  svg.append(defs, viewport);
  const zoomLabel = h("span", { class: "cx-graph__zoom", "aria-live": "off" });
  const graphBox = h("div", { class: "cx-graph__box" }, svg, zoomLabel);
  const panelBody = h("div", { class: "cx-panel__body", tabindex: "-1" });
  const panel = h("div", { class: "cx-panel", role: "region", "aria-label": "details" }, panelBody);
  const body = h("div", { class: "cx-body" }, graphBox, panel);
  const statusLine = h("div", { class: "cx-status", role: "status", "aria-live": "polite" });
  const help = h("div", { class: "cx-help" }, "drag to pan · wheel or + − to zoom · 0 to fit · ← → ↑ ↓ move between nodes · Enter opens · Shift+arrows pan");
  root.append(head, figures, body, statusLine, help);
  el.append(root);

  function setHeight() {
    const px = Math.max(200, Number(model.get("height")) || 460);
    graphBox.style.height = `${px}px`;
    panel.style.height = `${px}px`;
  }

  /** @param {string} text @param {"info" | "error" | "ok"} [kind] */
  function status(text, kind = "info") {
    statusLine.textContent = text;
    statusLine.dataset.kind = kind;
  }

  // ---- header --------------------------------------------------------------------------
  function stat(name, label, value, hint = "") {
    return h("span", { class: "cx-stat", "data-stat": name, title: hint || null }, h("span", { class: "cx-stat__label" }, label), h("span", { class: "cx-stat__value" }, value));
  }

  function renderHeader() {
    const t = model.get("title") || {};
    const sm = model.get("summary") || {};
    put(titleEl, 
      h("span", { class: "cx-title__name", title: t.name || "" }, t.name || ""),
      h("span", { class: "cx-title__meta" }, [t.id, t.policy && `policy ${t.policy}`, t.kind === "workspace" ? "workspace" : sm.tokenizer].filter(Boolean).join(" · ")),
    );
    if (g.layout === "workspace") {
      put(figures, 
        h(
          "div",
          { class: "cx-stats" },
          stat("sessions", "sessions", formatTokens(sm.sessions)),
          stat("roots", "lineages", formatTokens(sm.roots)),
          stat("forks", "forks", formatTokens(sm.forks)),
          stat("subagents", "subagents", formatTokens(sm.subagents)),
          sm.store != null ? stat("checkpoints", "checkpoints", `${formatTokens(sm.checkpoints)} in ${formatTokens(sm.folded)} sessions`, `fold store ${sm.store}`) : null,
        ),
      );
      return;
    }
    const segs = [
      { key: "system", label: "system head", value: sm.head || 0 },
      { key: "folds", label: "frozen checkpoints", value: sm.frozen || 0 },
      { key: "open", label: "open tail", value: sm.open || 0 },
    ];
    const total = Math.max(1, sm.surface || 0);
    put(figures, 
      h(
        "div",
        { class: "cx-stats" },
        stat("surface", "surface", `${formatTokens(sm.surface)} tok`),
        stat("checkpoints", "on the surface", `${formatTokens(sm.checkpoints)} checkpoint${sm.checkpoints === 1 ? "" : "s"}`),
        stat("folds", "folds", formatTokens(sm.folds), "every fold over the session's life"),
        stat("frontier", "frontier", `${formatTokens(sm.frozen_nodes)} frozen | ${formatTokens(sm.open_nodes)} open`, "frozen prefix nodes | open nodes a leaf fold may take"),
      ),
      h("div", { class: "cx-frontierbar" }, stackedBar(segs, total, [{ at: (sm.head || 0) + (sm.frozen || 0), label: "the frontier" }], "surface tokens by part"), legend(segs, total)),
      sm.problem ? h("div", { class: "cx-note cx-note--error", "data-problem": "" }, sm.problem) : null,
    );
  }

  // ---- the view transform --------------------------------------------------------------
  const size = () => pz.size();
  function applyView() {
    viewport.setAttribute("transform", `translate(${view.x.toFixed(2)},${view.y.toFixed(2)}) scale(${view.k.toFixed(4)})`);
    svg.classList.toggle("cx-graph--far", view.k < FAR_K);
    zoomLabel.textContent = `${Math.round(view.k * 100)}%`;
    schedule();
  }

  function schedule() {
    if (frame) return;
    frame = requestAnimationFrame(() => {
      frame = 0;
      draw();
    });
  }

  function fit() {
    const { w, h: hh } = size();
    const [x0, y0b, x1, y1b] = g.bounds;
    const y0 = g.frontier == null ? y0b : y0b - 44; // the band labels above, "frontier" below
    const y1 = g.frontier == null ? y1b : y1b + 44;
    const pad = 24;
    const gw = Math.max(1, x1 - x0);
    const gh = Math.max(1, y1 - y0);
    const k = Math.max(MIN_K, Math.min(1, (w - 2 * pad) / gw, (hh - 2 * pad) / gh));
    view = { k, x: (w - gw * k) / 2 - x0 * k, y: (hh - gh * k) / 2 - y0 * k };
    applyView();
  }

  /** @param {number} factor @param {number} [cx] @param {number} [cy] */
  const zoomBy = (factor, cx, cy) => pz.zoomBy(factor, cx, cy);

  function panBy(dx, dy) {
    view = { ...view, x: view.x + dx, y: view.y + dy };
    applyView();
  }

  /** @param {number} i  bring node i into view (centre it when it is outside) */
  function reveal(i) {
    const { w, h: hh } = size();
    const [nw, nh] = g.size;
    const sx = g.nodes.x[i] * view.k + view.x;
    const sy = g.nodes.y[i] * view.k + view.y;
    if (sx < 0 || sy < 0 || sx + nw * view.k > w || sy + nh * view.k > hh) {
      view = { ...view, x: w / 2 - (g.nodes.x[i] + nw / 2) * view.k, y: hh / 2 - (g.nodes.y[i] + nh / 2) * view.k };
      applyView();
    }
  }

  // ---- drawing (only what is in view) --------------------------------------------------
  function visibleRect() {
    const { w, h: hh } = size();
    return { x0: -view.x / view.k - MARGIN, y0: -view.y / view.k - MARGIN, x1: (w - view.x) / view.k + MARGIN, y1: (hh - view.y) / view.k + MARGIN };
  }

  /** @param {number} i */
  function nodeClass(i) {
    const f = g.nodes.flags[i];
    return (
      `cx-node cx-node--${g.nodes.kind[i]}` +
      (g.nodes.mode[i] ? ` cx-node--mode-${g.nodes.mode[i]}` : "") +
      (f & FLAG.frozen ? " cx-node--frozen" : "") +
      (f & FLAG.superseded ? " cx-node--superseded" : "") +
      (f & FLAG.live ? " cx-node--live" : "") +
      (f & FLAG.unreadable ? " cx-node--unreadable" : "") +
      (f & FLAG.inherited ? " cx-node--inherited" : "") +
      (g.nodes.id[i] === selected ? " cx-node--selected" : "") +
      (i === cursor ? " cx-node--cursor" : "")
    );
  }

  /** @param {number} i */
  function makeNode(i) {
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
    const [nw, nh] = g.size;
    const a = edgeIdx.s[e];
    const b = edgeIdx.t[e];
    const kind = g.edges.kind[e];
    const ax = g.nodes.x[a], ay = g.nodes.y[a], bx = g.nodes.x[b], by = g.nodes.y[b];
    let d;
    let lx, ly;
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
    const grp = /** @type {SVGGElement} */ (/** @type {unknown} */ (s("g", { class: `cx-edge cx-edge--${kind}`, "data-e": e })));
    grp.append(s("path", { d, "marker-end": `url(#${uid}-arrow)` }));
    // A merged group has one label: below its parent's left corner, clear of the edges fanning out.
    const merged = kind === "merged" && (mergedFrom.get(a) || 0) > 1;
    if (merged) {
      lx = ax - 4;
      ly = ay + nh + 12;
    }
    if (g.edges.label[e]) {
      const t = s("text", { x: lx, y: ly, class: "cx-edge__label", "text-anchor": merged ? "end" : "middle" });
      t.textContent = g.edges.label[e];
      grp.append(t);
    }
    return grp;
  }

  function draw() {
    const r = visibleRect();
    const [nw, nh] = g.size;
    const want = new Set();
    for (let i = 0; i < g.n; i++) {
      const x = g.nodes.x[i], y = g.nodes.y[i];
      if (x + nw >= r.x0 && x <= r.x1 && y + nh >= r.y0 && y <= r.y1) want.add(i);
    }
    if (cursor >= 0) want.add(cursor); // the keyboard's node is always there (aria-activedescendant)
    for (const [i, node] of shownNodes) if (!want.has(i)) { node.remove(); shownNodes.delete(i); }
    for (const i of want) {
      let node = shownNodes.get(i);
      if (!node) {
        node = makeNode(i);
        shownNodes.set(i, node);
        nodeLayer.append(node);
      } else node.setAttribute("class", nodeClass(i));
    }
    const wantE = new Set();
    for (let e = 0; e < edgeIdx.s.length; e++) {
      const a = edgeIdx.s[e], b = edgeIdx.t[e];
      if (a < 0 || b < 0) continue;
      const x0 = Math.min(g.nodes.x[a], g.nodes.x[b]), x1 = Math.max(g.nodes.x[a], g.nodes.x[b]) + nw;
      const y0 = Math.min(g.nodes.y[a], g.nodes.y[b]), y1 = Math.max(g.nodes.y[a], g.nodes.y[b]) + nh;
      if (x1 >= r.x0 && x0 <= r.x1 && y1 >= r.y0 && y0 <= r.y1) wantE.add(e);
    }
    for (const [e, edge] of shownEdges) if (!wantE.has(e)) { edge.remove(); shownEdges.delete(e); }
    for (const e of wantE) if (!shownEdges.has(e)) { const edge = makeEdge(e); shownEdges.set(e, edge); edgeLayer.append(edge); }
    svg.dataset.nodes = String(shownNodes.size);
  }

  function drawBands() {
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

  // ---- pointer: drag pans, wheel zooms, click selects ------------------------------------

  // ---- keyboard --------------------------------------------------------------------------
  /** @param {number} i */
  function setCursor(i) {
    const old = cursor;
    cursor = i;
    for (const j of [old, i]) {
      const n = shownNodes.get(j);
      if (n) n.setAttribute("class", nodeClass(j));
    }
    if (i >= 0) {
      schedule();
      svg.setAttribute("aria-activedescendant", `${uid}-n${i}`);
    }
  }

  /** The nearest node from the cursor in a direction (by centre; ties to the closer row). */
  function nearest(dx, dy) {
    if (g.n === 0) return -1;
    if (cursor < 0) return 0;
    const cx = g.nodes.x[cursor], cy = g.nodes.y[cursor];
    let best = -1, score = Infinity;
    for (let i = 0; i < g.n; i++) {
      if (i === cursor) continue;
      const ddx = g.nodes.x[i] - cx, ddy = g.nodes.y[i] - cy;
      const along = ddx * dx + ddy * dy;
      if (along <= 1) continue;
      const across = Math.abs(ddx * dy) + Math.abs(ddy * dx);
      const sc = along + across * 3;
      if (sc < score) { score = sc; best = i; }
    }
    return best;
  }

  svg.addEventListener("keydown", (e) => {
    if (e.altKey || e.ctrlKey || e.metaKey) return;
    const dir = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1] }[e.key];
    let handled = true;
    if (dir && e.shiftKey) panBy(-dir[0] * 80, -dir[1] * 80);
    else if (dir) {
      const i = nearest(dir[0], dir[1]);
      if (i >= 0) { setCursor(i); reveal(i); }
    } else if (e.key === "+" || e.key === "=") zoomBy(1.25);
    else if (e.key === "-" || e.key === "_") zoomBy(1 / 1.25);
    else if (e.key === "0") fit();
    else if (e.key === "Home" && g.n) { setCursor(0); reveal(0); }
    else if (e.key === "End" && g.n) { setCursor(g.n - 1); reveal(g.n - 1); }
    else if ((e.key === "Enter" || e.key === " ") && cursor >= 0) select(cursor);
    else handled = false;
    if (handled) { e.preventDefault(); e.stopPropagation(); }
  });
  svg.addEventListener("focus", () => { if (cursor < 0 && g.n) setCursor(0); });
  // Keys typed in the widget must not reach the notebook ("a", "0", "-" are commands there).
  root.addEventListener("keydown", (e) => {
    if (e.key === "Tab" || e.key === "Escape" || e.ctrlKey || e.metaKey || e.altKey) return;
    e.stopPropagation();
  });

  // ---- the panel -----------------------------------------------------------------------
  let ask = 0; // the latest panel request (older replies are dropped)

  function emptyPanel() {
    put(panelBody, 
      h("div", { class: "cx-empty" }, g.layout === "workspace" ? "Click a session to see its row." : "Click a checkpoint to see its state, recall its exact messages, or fork from it."),
    );
  }

  /** @param {number} i */
  function select(i) {
    const old = selected;
    selected = g.nodes.id[i];
    for (const [j, n] of shownNodes) if (g.nodes.id[j] === old || j === i) n.setAttribute("class", nodeClass(j));
    const ref = g.nodes.ref[i] || g.nodes.id[i];
    const mine = ++ask;
    put(panelBody, h("div", { class: "cx-loading" }, "loading…"));
    const type = g.layout === "workspace" ? "session" : "checkpoint";
    channel.request(type, { ref }).then(
      (r) => { if (mine === ask) (type === "session" ? showSession(r) : showState(r)); },
      (err) => { if (mine === ask) put(panelBody, h("div", { class: "cx-note cx-note--error" }, `${err.type}: ${err.message}`)); },
    );
  }

  const row = (k, v) => h("div", { class: "cx-kv__row" }, h("span", { class: "cx-kv__k" }, k), h("span", { class: "cx-kv__v" }, v));

  /** @param {any} r */
  function showState(r) {
    if (r.kind === "head" || r.kind === "open") {
      put(panelBody, 
        h("div", { class: "cx-panel__title" }, badge(r.kind === "head" ? "system" : "user", r.kind === "head" ? "system head" : "open tail"), ` ${r.count} nodes · ${formatTokens(r.tokens)} tokens`),
        h("div", { class: "cx-note" }, r.kind === "head" ? "Sent with every request; a fold never covers it." : "The open nodes after the frontier: a leaf fold takes the oldest of them, never the verbatim tail."),
        r.text ? h("pre", { class: "cx-pre" }, r.text) : null,
        h("ol", { class: "cx-nodes" }, ...r.nodes.map((n) => h("li", null, h("span", { class: "cx-nodes__seq" }, String(n.seq)), badge(n.role), h("span", { class: "cx-nodes__gist" }, n.gist || "(empty)"), h("span", { class: "cx-nodes__tok" }, formatTokens(n.tokens))))),
        r.count > r.nodes.length ? h("div", { class: "cx-note" }, `… ${r.count - r.nodes.length} more`) : null,
      );
      return;
    }
    if (r.kind === "compaction") {
      put(panelBody, 
        h("div", { class: "cx-panel__title" }, badge("replacement", "compaction"), ` seq ${r.seq}`),
        h("div", { class: "cx-note" }, r.why),
        h("div", { class: "cx-section" }, h("h4", null, "State"), h("pre", { class: "cx-pre", "data-part": "state" }, r.text)),
      );
      return;
    }
    const statusBadge = h("span", { class: `cx-verify cx-verify--${r.status}`, "data-verify": r.status, title: r.reason || "" }, r.status);
    const recallBox = h("div", { class: "cx-recall", "data-part": "recall" });
    const forkBox = h("div", { class: "cx-forkbox", "data-part": "fork" });
    const canFork = r.fork && r.fork.at_seq != null;
    put(panelBody, 
      h("div", { class: "cx-panel__title" }, badge(r.mode === "mask" ? "tool" : "replacement", r.mode), h("span", { class: "cx-panel__id" }, r.ref), statusBadge),
      h(
        "div",
        { class: "cx-kv" },
        row("archived", `${formatTokens(r.shadowed)} nodes${r.first_seq != null ? `, seq ${r.first_seq}–${r.last_seq}` : ""}`),
        row("tokens", `${formatTokens(r.shadowed_tokens)} → ${formatTokens(r.checkpoint_tokens)} (${r.tokenizer})`),
        row("where", r.on_surface ? "on the surface (frozen prefix)" : r.mode === "mask" ? "a masking pass" : "superseded: merged into a later checkpoint"),
        r.children.length ? row("merged", r.children.join(", ")) : null,
        row("bundle", `${formatTokens(r.messages)} messages · ${formatTokens(r.bytes)} bytes · sha256 ${String(r.file_sha256).slice(0, 12)}…`),
        r.reason ? row("problem", r.reason) : null,
        r.inherited ? row("inherited", `from session ${String(r.bundle_session).slice(0, 8)}`) : null,
      ),
      h(
        "div",
        { class: "cx-actions" },
        h("button", { type: "button", class: "cx-btn cx-btn--primary", "data-action": "recall", onclick: () => recall(r.ref, 0, recallBox) }, "Recall exact messages"),
        h(
          "button",
          { type: "button", class: "cx-btn", "data-action": "fork", disabled: !canFork, title: canFork ? `session.fork(at_seq=${r.fork.at_seq})` : r.fork?.why, onclick: () => fork(r.ref, forkBox) },
          canFork ? `Fork from here (seq ${r.fork.at_seq})` : "Fork from here",
        ),
      ),
      !canFork && r.fork?.why ? h("div", { class: "cx-note", "data-why": "fork" }, r.fork.why) : null,
      forkBox,
      recallBox,
      h("details", { class: "cx-section", open: true }, h("summary", null, "State (the checkpoint text)"), h("pre", { class: "cx-pre", "data-part": "state" }, r.text || "(no text)")),
    );
  }

  /** @param {string} ref @param {number} offset @param {HTMLElement} box */
  function recall(ref, offset, box) {
    const mine = ask;
    put(box, h("div", { class: "cx-loading" }, "recalling…"));
    channel.request("recall", { ref, offset, limit: PAGE }).then(
      (r) => {
        if (mine !== ask) return;
        if (r.status !== "verified") {
          put(box, 
            h("div", { class: `cx-note cx-note--error`, "data-recall": r.status }, h("span", { class: `cx-verify cx-verify--${r.status}` }, r.status), ` ${r.reason || ""}`),
            h("div", { class: "cx-note" }, "No messages are shown: bytes that fail verification are never read. Restore the bundle file from a backup, or treat the checkpoint as unrecoverable."),
          );
          return;
        }
        const last = r.offset + r.messages.length;
        const pager = h(
          "div",
          { class: "cx-pager" },
          h("button", { type: "button", class: "cx-btn", "data-action": "prev", disabled: r.offset === 0, onclick: () => recall(ref, Math.max(0, r.offset - PAGE), box) }, "‹ Previous"),
          h("span", { class: "cx-pager__at" }, `messages ${r.offset + 1}–${last} of ${r.total}`),
          h("button", { type: "button", class: "cx-btn", "data-action": "next", disabled: r.next_offset == null, onclick: () => recall(ref, r.next_offset, box) }, "Next ›"),
        );
        put(box, 
          h("div", { class: "cx-recall__head", "data-recall": "verified" }, h("span", { class: "cx-verify cx-verify--verified" }, "verified"), ` exact messages, logical hash ${String(r.logical_hash).slice(0, 16)}…`),
          pager,
          h("ol", { class: "cx-msgs", start: r.offset + 1 }, ...r.messages.map(messageItem)),
        );
      },
      (err) => { if (mine === ask) put(box, h("div", { class: "cx-note cx-note--error" }, `${err.type}: ${err.message}`)); },
    );
  }

  /** @param {any} m */
  function messageItem(m) {
    return h(
      "li",
      { class: `cx-msg cx-msg--${m.kind}`, "data-seq": m.seq },
      h("div", { class: "cx-msg__head" }, badge(m.kind), h("span", { class: "cx-msg__seq" }, `seq ${m.seq}`)),
      ...(m.reasoning || []).map((t) => h("pre", { class: "cx-pre cx-pre--reasoning" }, t)),
      m.text ? h("pre", { class: "cx-pre" }, m.text) : null,
      ...(m.calls || []).map((c) => h("div", { class: "cx-call" }, h("span", { class: "cx-call__name" }, `→ ${c.name}`), h("pre", { class: "cx-pre" }, c.arguments))),
      ...(m.results || []).map((x) => h("pre", { class: `cx-pre cx-result${x.is_error ? " cx-result--error" : ""}` }, x.text)),
    );
  }

  /** @param {string} ref @param {HTMLElement} box */
  function fork(ref, box) {
    put(box, h("div", { class: "cx-loading" }, "forking…"));
    channel.request("fork", { ref }).then(
      (r) => {
        put(box, h("div", { class: "cx-note cx-note--ok", "data-result": "fork" }, `Forked after seq ${r.at_seq}: child ${r.child_id}`, h("br"), h("code", null, r.path || "")));
        status(`forked ${ref} → ${r.child_id.slice(0, 8)}`, "ok");
      },
      (err) => put(box, h("div", { class: "cx-note cx-note--error", "data-result": "fork" }, `${err.type}: ${err.message}`)),
    );
  }

  /** @param {any} r */
  function showSession(r) {
    put(panelBody, 
      h("div", { class: "cx-panel__title" }, badge(r.parent ? (r.origin === "subagent" ? "subagent" : "turn") : "session", r.parent ? (r.origin === "subagent" ? "subagent" : "fork") : "session"), h("span", { class: "cx-panel__id" }, String(r.id).slice(0, 8))),
      h(
        "div",
        { class: "cx-kv" },
        row("title", r.title || "—"),
        row("events", formatTokens(r.events)),
        row("format", `v${r.version ?? "?"}`),
        r.parent ? row("parent", String(r.parent)) : null,
        r.fork_seq != null ? row("forked after", `seq ${r.fork_seq}`) : null,
        r.checkpoints != null ? row("checkpoints", `${r.checkpoints} on the surface · ${r.folds} folds`) : null,
        row("updated", r.updated || "—"),
        row("path", h("code", null, r.path || "")),
        r.error ? row("error", r.error) : null,
      ),
    );
  }

  // ---- kernel requests -----------------------------------------------------------------
  function refresh() {
    status("re-reading…");
    channel.request("refresh").then(
      () => status("up to date", "ok"),
      (err) => status(`${err.type}: ${err.message}`, "error"),
    );
  }

  // ---- sync ----------------------------------------------------------------------------
  function onGraph() {
    const first = g.n === 0;
    reindex();
    if (cursor >= g.n) cursor = -1;
    renderHeader();
    redrawAll();
    if (first) fit();
  }
  const handlers = [
    ["change:_graph", onGraph],
    ["change:summary", () => { renderHeader(); drawBands(); }],
    ["change:title", renderHeader],
    ["change:height", () => { setHeight(); schedule(); }],
  ];
  for (const [ev, fn] of handlers) model.on(ev, fn);
  disposers.push(() => { for (const [ev, fn] of handlers) model.off(ev, fn); });

  reindex();
  setHeight();
  renderHeader();
  emptyPanel();
  drawBands();
  applyView();
  // Fit once the element has its size (it may be attached after render returns).
  let fitted = false;
  const ro = new ResizeObserver(() => {
    const { w } = size();
    if (!fitted && w > 0 && svg.getBoundingClientRect().width > 0) { fitted = true; fit(); } else schedule();
  });
  ro.observe(svg);
  disposers.push(() => ro.disconnect());

  return () => {
    if (frame) cancelAnimationFrame(frame);
    for (const d of disposers) d();
    channel.dispose();
  };
}

export default { render };
