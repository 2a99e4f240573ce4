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
 * The layout is the kernel's (deterministic: entities as hubs, their neighbours on rings). The
 * graph view (pan, zoom, keyboard, selection) is graph/graph_view.js, shared with
 * CheckpointGraph.
 */
import "./memory_graph.css";
import { createChannel } from "./base/channel.js";
import { h } from "./base/dom.js";
import { button, createPanel, createStatus, fitHeight, keepKeys } from "./base/panel.js";
import { createGraphView } from "./graph/graph_view.js";
import { createDrawing } from "./memory_graph/draw.js";
import { createHeader } from "./memory_graph/header.js";
import { createNodePanel } from "./memory_graph/panel.js";
import { readGraph } from "./memory_graph/read.js";
import { createSearch } from "./memory_graph/search.js";
import { legend } from "./memory_graph/shapes.js";

let views = 0;

/** @param {{model: any, el: HTMLElement}} ctx */
function render({ model, el }) {
  const uid = `mg${++views}${Math.random().toString(36).slice(2, 7)}`;
  const channel = createChannel(model);
  let g = readGraph(model.get("_graph"));
  const status = createStatus();

  // ---- the graph view ------------------------------------------------------------------
  const gv = createGraphView({
    prefix: "cx-mgraph",
    uid,
    label: "memory graph: arrows move between nodes, Enter opens one, + and - zoom, 0 fits",
    layers: ["clusters", "edges", "nodes"],
    arrow: { refX: "10", markerUnits: "userSpaceOnUse", markerWidth: "9", markerHeight: "9" },
    minK: 0.05,
    maxK: 3,
    farK: 0.42, // below this zoom, satellites lose their labels
    fit: { pad: 16, maxK: 1.4 },
    inset: 20,
    keys: {},
    xs: () => g.nodes.x,
    ys: () => g.nodes.y,
    bounds: () => g.bounds,
    nodeBox: (i) => [g.nodes.x[i], g.nodes.y[i], g.nodes.x[i], g.nodes.y[i]],
    nodeClass: "cx-mnode",
    onOpen: (i) => open(g.nodes.id[i]),
    onCursor: () => drawing.restyle(),
  });

  // ---- DOM -----------------------------------------------------------------------------
  const root = h("div", { class: "cx-root cx-mgraph", "data-cx-view": uid });
  const titleEl = h("div", { class: "cx-title" });
  const query = /** @type {HTMLInputElement} */ (h("input", { class: "cx-input cx-input--search", type: "search", placeholder: "search the memory…", "data-control": "search", "aria-label": "search the memory (memory.find)" }));
  const obsBox = /** @type {HTMLInputElement} */ (h("input", { type: "checkbox", "data-control": "observations" }));
  const actions = h(
    "div",
    { class: "cx-actions" },
    h("form", { class: "cx-search", onsubmit: (/** @type {Event} */ e) => { e.preventDefault(); search.run(); } }, query, h("button", { type: "submit", class: "cx-btn cx-btn--primary", "data-action": "search" }, "Find")),
    h("label", { class: "cx-control", title: "draw verbatim observations too" }, obsBox, h("span", null, "observations")),
    ...gv.buttons(),
    button("↻", () => refresh(), { title: "re-read the memory (changes made in Python)", "aria-label": "refresh", "data-action": "refresh" }),
  );
  const figures = h("div", { class: "cx-stats", "aria-label": "figures" });
  const hiddenNote = h("div", { class: "cx-mgraph__hidden", "data-part": "hidden" });
  gv.box.append(hiddenNote);
  const graphNote = h("div", { class: "cx-mgraph__note", "data-part": "graph-note" });
  const hitsBox = h("div", { class: "cx-hits", "data-part": "hits" });
  const panel = createPanel({ "data-part": "panel" }, hitsBox);
  const mapBox = h("div", { class: "cx-smap", "data-part": "session-map", role: "region", "aria-label": "session map" });
  root.append(h("div", { class: "cx-head" }, titleEl, actions), figures, legend(), graphNote, h("div", { class: "cx-body" }, gv.box, panel.el), mapBox, status.el);
  el.append(root);
  keepKeys(root);

  const drawing = createDrawing({ graph: () => g, search: () => search.current, gv, uid, model, mapBox });
  const search = createSearch({ channel, query, hitsBox, status: status.show, restyle: () => drawing.restyle(), open: (id) => open(id) });
  const header = createHeader({ model, titleEl, figures, hiddenNote, graphNote, obsBox, mapBox, selected: () => gv.selected, open: (id) => open(id) });
  const nodePanel = createNodePanel({
    model,
    root,
    panel,
    channel,
    status: status.show,
    open: (id) => open(id),
    searched: () => { if (query.value.trim() && search.current) search.run(); },
  });
  const setHeight = () => fitHeight(model, 240, 520, gv.box, panel.el);

  // ---- the panel -----------------------------------------------------------------------
  let reading = 0;
  function emptyPanel() {
    panel.empty("Click a node to read it: its text, sources and edges; archive, rename or merge it from here.");
  }

  /** @param {string} id */
  function open(id) {
    gv.selected = id;
    const i = g.index.get(id);
    if (i != null) { gv.cursor = i; gv.reveal(i); }
    drawing.restyle();
    const mine = ++reading;
    panel.loading("reading…");
    channel.request("read", { node: id }).then(
      (r) => {
        if (mine !== reading) return;
        const j = g.index.get(id);
        if (j != null) { gv.cursor = j; gv.reveal(j); drawing.restyle(); }
        nodePanel.showNode(r);
      },
      (err) => { if (mine === reading) panel.error(err, { "data-part": "error" }); },
    );
  }

  function refresh() {
    status.show("re-reading the memory…");
    channel.request("refresh").then(
      () => {
        status.show("up to date", "ok");
        if (gv.selected) open(gv.selected);
      },
      (err) => status.show(`${err.type}: ${err.message}`, "error"),
    );
  }

  obsBox.addEventListener("change", () => {
    model.set("observations", obsBox.checked);
    model.save_changes();
  });

  // ---- sync ----------------------------------------------------------------------------
  /** Whether the graph draws observations (the toggle's effect, as the kernel drew it). */
  const drawsObservations = () => g.nodes.type.includes("observation");
  let fittedObs = drawsObservations();
  function onGraph() {
    const first = g.n === 0;
    g = readGraph(model.get("_graph"));
    if (gv.cursor >= g.n) gv.cursor = -1;
    if (gv.selected && !g.index.has(gv.selected)) gv.cursor = -1;
    header.renderHeader();
    drawing.redrawAll();
    // observations shown or hidden change the graph's extent: fit it again
    const obs = drawsObservations();
    if (first || obs !== fittedObs) gv.fit();
    fittedObs = obs;
  }
  const handlers = [
    ["change:_graph", onGraph],
    ["change:summary", header.renderHeader],
    ["change:session_map", header.renderMap],
    ["change:observations", header.renderHeader],
    ["change:height", () => { setHeight(); }],
  ];
  for (const [ev, fn] of handlers) model.on(ev, fn);

  setHeight();
  header.renderHeader();
  header.renderMap();
  search.renderHits();
  emptyPanel();
  drawing.redrawAll();
  gv.apply();

  return () => {
    for (const [ev, fn] of handlers) model.off(ev, fn);
    gv.dispose();
    channel.dispose();
  };
}

export default { render };
