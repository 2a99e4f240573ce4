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
 * The layout is the kernel's (deterministic). The graph view (pan, zoom, keyboard, selection)
 * is graph/graph_view.js, shared with MemoryGraph; drawing only what is in view is
 * checkpoint_graph/draw.js.
 */
import "./checkpoint_graph.css";
import { createChannel } from "./base/channel.js";
import { h } from "./base/dom.js";
import { button, createPanel, createStatus, fitHeight, keepKeys } from "./base/panel.js";
import { createDrawing } from "./checkpoint_graph/draw.js";
import { renderHeader } from "./checkpoint_graph/header.js";
import { createCheckpointPanel } from "./checkpoint_graph/panel.js";
import { readGraph } from "./checkpoint_graph/read.js";
import { createGraphView } from "./graph/graph_view.js";

let views = 0;

/** @param {{model: any, el: HTMLElement}} ctx */
function render({ model, el }) {
  const uid = `cg${++views}${Math.random().toString(36).slice(2, 7)}`; // unique: each widget loads its own copy of this module
  const channel = createChannel(model);
  let g = readGraph(model.get("_graph"));
  const status = createStatus();

  // ---- the graph view ------------------------------------------------------------------
  const gv = createGraphView({
    prefix: "cx-graph",
    uid,
    label: "checkpoint graph: arrows move between nodes, Enter opens one, + and - zoom, 0 fits the graph to the view, Shift+arrows pan",
    layers: ["bands", "edges", "nodes"],
    arrow: { refX: "9", markerWidth: "7", markerHeight: "7" },
    minK: 0.002,
    maxK: 3,
    farK: 0.45, // below this zoom, nodes lose their text
    fit: { pad: 24, maxK: 1 },
    inset: 0,
    keys: { pan: true, ends: true, cursorOnFocus: true },
    xs: () => g.nodes.x,
    ys: () => g.nodes.y,
    // the band labels above and "frontier" below are part of what Fit shows
    bounds: () => (g.frontier == null ? g.bounds : [g.bounds[0], g.bounds[1] - 44, g.bounds[2], g.bounds[3] + 44]),
    nodeBox: (i) => [g.nodes.x[i], g.nodes.y[i], g.nodes.x[i] + g.size[0], g.nodes.y[i] + g.size[1]],
    nodeClass: "cx-node",
    onOpen: (i) => {
      gv.setCursor(i);
      select(i);
    },
    onCursor: (old, i) => {
      drawing.restyle([old, i]);
      if (i >= 0) drawing.schedule();
    },
    onView: () => drawing.schedule(),
  });
  const drawing = createDrawing({ graph: () => g, gv, uid, model });

  // ---- DOM -----------------------------------------------------------------------------
  const root = h("div", { class: "cx-root cx-graph", "data-cx-view": uid });
  const titleEl = h("div", { class: "cx-title" });
  const actions = h(
    "div",
    { class: "cx-actions" },
    ...gv.buttons(),
    button("↻", () => refresh(), { title: "re-read the fold or workspace", "aria-label": "refresh", "data-action": "refresh" }),
  );
  const figures = h("div", { class: "cx-figures", "aria-label": "figures" });
  const panel = createPanel({ tabindex: "-1" });
  const help = h("div", { class: "cx-help" }, "drag to pan · wheel or + − to zoom · 0 to fit · ← → ↑ ↓ move between nodes · Enter opens · Shift+arrows pan");
  root.append(h("div", { class: "cx-head" }, titleEl, actions), figures, h("div", { class: "cx-body" }, gv.box, panel.el), status.el, help);
  el.append(root);
  keepKeys(root);

  const header = () => renderHeader(model, titleEl, figures, g.layout);
  const setHeight = () => fitHeight(model, 200, 460, gv.box, panel.el);

  // ---- the panel -----------------------------------------------------------------------
  let ask = 0; // the latest panel request (older replies are dropped)
  const details = createCheckpointPanel({ panel, channel, status: status.show, ask: () => ask });

  function emptyPanel() {
    panel.empty(g.layout === "workspace" ? "Click a session to see its row." : "Click a checkpoint to see its state, recall its exact messages, or fork from it.");
  }

  /** @param {number} i */
  function select(i) {
    const old = gv.selected;
    gv.selected = g.nodes.id[i];
    drawing.restyleWhere(old, i);
    const ref = g.nodes.ref[i] || g.nodes.id[i];
    const mine = ++ask;
    panel.loading();
    const type = g.layout === "workspace" ? "session" : "checkpoint";
    channel.request(type, { ref }).then(
      (r) => { if (mine === ask) (type === "session" ? details.showSession(r) : details.showState(r)); },
      (err) => { if (mine === ask) panel.error(err); },
    );
  }

  function refresh() {
    status.show("re-reading…");
    channel.request("refresh").then(
      () => status.show("up to date", "ok"),
      (err) => status.show(`${err.type}: ${err.message}`, "error"),
    );
  }

  // ---- sync ----------------------------------------------------------------------------
  function onGraph() {
    const first = g.n === 0;
    g = readGraph(model.get("_graph"));
    if (gv.cursor >= g.n) gv.cursor = -1;
    header();
    drawing.redrawAll();
    if (first) gv.fit();
  }
  const handlers = [
    ["change:_graph", onGraph],
    ["change:summary", () => { header(); drawing.drawBands(); }],
    ["change:title", header],
    ["change:height", () => { setHeight(); drawing.schedule(); }],
  ];
  for (const [ev, fn] of handlers) model.on(ev, fn);

  setHeight();
  header();
  emptyPanel();
  drawing.drawBands();
  gv.apply();

  return () => {
    drawing.cancel();
    for (const [ev, fn] of handlers) model.off(ev, fn);
    gv.dispose();
    channel.dispose();
  };
}

export default { render };
