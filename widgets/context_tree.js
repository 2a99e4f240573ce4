// @ts-check
/**
 * ContextTree: the context of a session as turn -> step -> node rows, with a full / key / off
 * switch on every row, a message viewer, the model view, a preview diff and apply.
 *
 * Synced traits (small, set by the kernel):
 *   _rows        the skeleton, by column: id, parent, end, depth, kind, label, gist, seq,
 *                tokens, flags, tool (one entry per row, pre-order; `end` is one past the
 *                row's subtree)
 *   _modes       one character per row: f / k / o (full / key / off), m (a container whose
 *                children differ); upper case when the row or a row under it is drafted
 *   stats, composition, title, height, revision
 * Everything else (message bodies, the model view, the preview, apply) is fetched over the
 * request/response channel (base/channel.js).
 */
import "./context_tree.css";
import { createChannel } from "./base/channel.js";
import { h } from "./base/dom.js";
import { errorText, noun } from "./base/format.js";
import { button, createStatus, keepKeys } from "./base/panel.js";
import { createVirtualizer } from "./base/virtualizer.js";
import { renderComposition, renderStats, renderTitle } from "./context_tree/header.js";
import { createTreePanel } from "./context_tree/panel.js";
import { createRows } from "./context_tree/rows.js";
import { FLAG, KEY_MODE, openRows, readRows, tokenScale, visibleRows } from "./context_tree/skeleton.js";

const ROW_HEIGHT = 28;

let views = 0;

/** @param {{model: any, el: HTMLElement}} ctx */
function render({ model, el }) {
  const uid = `cx${++views}`;
  const channel = createChannel(model);
  const disposers = [];

  // ---- state ---------------------------------------------------------------------------
  let rows = readRows(model.get("_rows"));
  let n = rows.id.length;
  let modes = String(model.get("_modes") || "");
  /** @type {Map<string, boolean>} the user's expand / collapse choices, by row id */
  const toggled = new Map();
  let expanded = new Uint8Array(0);
  let visible = new Int32Array(0);
  let cursor = 0; // position in `visible`
  let selectedId = /** @type {string | null} */ (null);
  /** @type {Set<string>} rows with a mode request in flight */
  const pending = new Set();
  let scale = { turn: 1, step: 1, leaf: 1 };
  /** @type {Map<string, any>} message bodies, by row id (cleared when the skeleton changes) */
  const bodies = new Map();

  // ---- skeleton ------------------------------------------------------------------------
  function rebuildStructure() {
    rows = readRows(model.get("_rows"));
    n = rows.id.length;
    expanded = openRows(rows, toggled);
    scale = tokenScale(rows);
    bodies.clear();
  }

  function computeVisible() {
    visible = visibleRows(rows, expanded);
  }

  function rowAtCursor() {
    return visible.length ? visible[Math.min(cursor, visible.length - 1)] : -1;
  }

  function indexOfId(id) {
    if (id == null) return -1;
    return rows.id.indexOf(id);
  }

  // ---- DOM -----------------------------------------------------------------------------
  const root = h("div", { class: "cx-root cx-tree", "data-cx-view": uid });
  const title = h("div", { class: "cx-title" });
  const statusLine = createStatus();
  const status = statusLine.show;
  const actions = h(
    "div",
    { class: "cx-actions" },
    button("Expand all", () => setAll(true), { title: "expand every row (folded regions too)" }),
    button("Collapse all", () => setAll(false), { title: "collapse to turns" }),
    button("Reset draft", () => resetDraft(), { class: "cx-btn", title: "drop every unapplied mode", "data-action": "reset" }),
    button("↻", () => refresh(), { title: "re-read the assembly (after edits in Python)", "aria-label": "refresh" }),
  );
  const head = h("div", { class: "cx-head" }, title, actions);
  const stats = h("div", { class: "cx-stats", "aria-label": "statistics" });
  const comp = h("div", { class: "cx-comp" });
  const columns = h(
    "div",
    { class: "cx-cols", "aria-hidden": "true" },
    h("span", { class: "cx-cols__gist" }, "row"),
    h("span", { class: "cx-cols__seq" }, "seq"),
    h("span", { class: "cx-cols__tokens" }, "tokens"),
    h("span", { class: "cx-cols__mode" }, "mode"),
  );
  const list = h("div", {
    class: "cx-list",
    role: "tree",
    tabindex: "0",
    "aria-label": "context tree (arrows move, Enter expands, f / k / o set the mode)",
    "aria-multiselectable": "false",
  });
  const treeBox = h("div", { class: "cx-treebox" }, columns, list);
  const tp = createTreePanel({ model, uid, channel, status, rows: () => rows, selectedId: () => selectedId, indexOfId, bodies });
  const panel = tp.el;
  const body = h("div", { class: "cx-body" }, treeBox, panel);
  const help = h(
    "div",
    { class: "cx-help" },
    "↑ ↓ move · → ← open / close · Enter / Space expand · f k o set full / key / off · Tab moves between parts",
  );
  root.append(head, stats, comp, body, statusLine.el, help);
  el.append(root);

  function setHeight() {
    const px = Math.max(160, Number(model.get("height")) || 420);
    list.style.height = `${px}px`;
    panel.style.height = `${px + columns.offsetHeight}px`;
  }

  // ---- rows ----------------------------------------------------------------------------
  const { createRow, updateRow } = createRows({
    uid,
    rows: () => rows,
    visible: () => visible,
    expanded: () => expanded,
    modes: () => modes,
    scale: () => scale,
    cursor: () => cursor,
    selectedId: () => selectedId,
    pending,
    setMode: (i, mode) => setMode(i, mode),
  });

  const virt = createVirtualizer({
    scroller: list,
    rowHeight: ROW_HEIGHT,
    create: createRow,
    update: updateRow,
    fallbackHeight: Number(model.get("height")) || 420,
  });

  function relayout(keepRow = -1) {
    computeVisible();
    if (keepRow >= 0) {
      const at = visible.indexOf(keepRow);
      if (at >= 0) cursor = at;
    }
    cursor = Math.max(0, Math.min(cursor, visible.length - 1));
    virt.setCount(visible.length);
    syncActive();
  }

  function syncActive() {
    const i = rowAtCursor();
    if (i >= 0) list.setAttribute("aria-activedescendant", `${uid}-r${i}`);
    else list.removeAttribute("aria-activedescendant");
  }

  function moveCursor(to, { select = true } = {}) {
    if (!visible.length) return;
    const prev = cursor;
    cursor = Math.max(0, Math.min(visible.length - 1, to));
    virt.scrollToIndex(cursor);
    if (prev !== cursor) virt.refresh();
    syncActive();
    if (select) selectSoon(rowAtCursor());
  }

  /** @param {number} i @param {boolean} [open] */
  function toggle(i, open) {
    if (!(rows.end[i] > i + 1)) return;
    const next = open === undefined ? !expanded[i] : open;
    expanded[i] = next ? 1 : 0;
    toggled.set(rows.id[i], next);
    relayout(i);
  }

  function setAll(open) {
    for (let i = 0; i < n; i++) {
      if (rows.end[i] <= i + 1) continue;
      expanded[i] = open ? 1 : 0;
      toggled.set(rows.id[i], open);
    }
    const keep = rowAtCursor();
    relayout(open ? keep : -1);
  }

  let selectTimer = 0;
  function selectSoon(i) {
    clearTimeout(selectTimer);
    selectTimer = setTimeout(() => select(i), 120);
  }

  function select(i) {
    if (i < 0) return;
    selectedId = rows.id[i];
    virt.refresh();
    if (tp.tab !== "message") showTab("message", false);
    else showMessage();
  }

  // ---- events on the list ----------------------------------------------------------------
  list.addEventListener("click", (e) => {
    const target = /** @type {HTMLElement} */ (e.target);
    const row = /** @type {HTMLElement | null} */ (target.closest(".cx-row"));
    if (!row) return;
    const i = Number(row.dataset.i);
    const vi = visible.indexOf(i);
    if (target.classList.contains("cx-caret")) {
      cursor = vi;
      toggle(i);
      return;
    }
    cursor = vi;
    virt.refresh();
    syncActive();
    clearTimeout(selectTimer);
    select(i);
  });
  list.addEventListener("dblclick", (e) => {
    const row = /** @type {HTMLElement | null} */ (/** @type {HTMLElement} */ (e.target).closest(".cx-row"));
    if (row && !/** @type {HTMLElement} */ (e.target).closest(".cx-mode")) toggle(Number(row.dataset.i));
  });
  list.addEventListener("keydown", (e) => {
    if (e.altKey || e.ctrlKey || e.metaKey || e.shiftKey) return;
    const i = rowAtCursor();
    let handled = true;
    switch (e.key) {
      case "ArrowDown":
        moveCursor(cursor + 1);
        break;
      case "ArrowUp":
        moveCursor(cursor - 1);
        break;
      case "PageDown":
        moveCursor(cursor + virt.pageSize());
        break;
      case "PageUp":
        moveCursor(cursor - virt.pageSize());
        break;
      case "Home":
        moveCursor(0);
        break;
      case "End":
        moveCursor(visible.length - 1);
        break;
      case "ArrowRight":
        if (i >= 0 && rows.end[i] > i + 1) {
          if (!expanded[i]) toggle(i, true);
          else moveCursor(cursor + 1);
        }
        break;
      case "ArrowLeft":
        if (i >= 0 && rows.end[i] > i + 1 && expanded[i]) toggle(i, false);
        else if (i >= 0 && rows.parent[i] >= 0) moveCursor(visible.indexOf(rows.parent[i]));
        break;
      case "Enter":
      case " ":
        if (i >= 0) {
          if (rows.end[i] > i + 1) toggle(i);
          clearTimeout(selectTimer);
          select(i);
        }
        break;
      default:
        if (KEY_MODE[e.key] && i >= 0) setMode(i, KEY_MODE[e.key]);
        else handled = false;
    }
    if (handled) {
      e.preventDefault();
      e.stopPropagation();
    }
  });
  // Keys typed in the widget must not reach the notebook, where "a", "k" or "o" are
  // commands; Tab, Escape and modified keys (Shift+Enter runs the cell) still do.
  keepKeys(root, { shiftPasses: true, typingTakesAll: true });

  // ---- kernel requests ---------------------------------------------------------------------
  async function setMode(i, mode) {
    if (i < 0 || i >= n) return;
    if (rows.flags[i] & FLAG.fixed) {
      status(`${rows.label[i]}: ${rows.kind[i] === "subagent" ? "a subagent session" : "not a surface node"}; it has no mode to set`, "error");
      return;
    }
    const id = rows.id[i];
    pending.add(id);
    virt.refresh();
    try {
      const r = await channel.request("set_mode", { row: id, mode });
      status(`${rows.label[indexOfId(id)] ?? id} → ${mode}: ${r.nodes} ${noun(r.nodes, "node")} in the draft (${r.draft} drafted in all)`, "ok");
    } catch (err) {
      status(errorText(err), "error");
    } finally {
      pending.delete(id);
      virt.refresh();
    }
  }

  async function resetDraft() {
    try {
      await channel.request("reset");
      status("draft cleared", "ok");
    } catch (err) {
      status(errorText(err), "error");
    }
  }

  async function refresh() {
    try {
      await channel.request("refresh");
      status("re-read from the assembly", "ok");
    } catch (err) {
      status(errorText(err), "error");
    }
  }

  // ---- header, stats, composition, the panel ------------------------------------------------
  const renderHead = () => renderTitle(model, title);
  const renderFigures = () => renderStats(model, stats, actions);
  const renderComp = () => renderComposition(model, comp);
  const showTab = tp.showTab;
  const showMessage = tp.showMessage;
  // ---- traits ------------------------------------------------------------------------------
  function onRows() {
    const keepId = visible.length ? rows.id[rowAtCursor()] : null;
    rebuildStructure();
    modes = String(model.get("_modes") || "");
    relayout(indexOfId(keepId));
    if (tp.tab === "message") showMessage();
  }
  function onModes() {
    modes = String(model.get("_modes") || "");
    bodies.clear(); // a body shows its row's mode
    virt.refresh();
    if (tp.tab === "message" && selectedId) showMessage();
  }
  function onRevision() {
    if (tp.applying) return;
    if (tp.tab === "preview" && tp.lastPreview) tp.renderPreview(tp.lastPreview);
    if (tp.tab === "model") tp.showModel();
  }
  const handlers = [
    ["change:_rows", onRows],
    ["change:_modes", onModes],
    ["change:stats", renderFigures],
    ["change:composition", renderComp],
    ["change:title", renderHead],
    ["change:height", () => { setHeight(); virt.refresh(); }],
    ["change:revision", onRevision],
  ];
  for (const [ev, fn] of handlers) model.on(ev, fn);
  disposers.push(() => { for (const [ev, fn] of handlers) model.off(ev, fn); });

  // ---- first paint ---------------------------------------------------------------------------
  renderHead();
  renderFigures();
  renderComp();
  setHeight();
  rebuildStructure();
  relayout();
  showTab("message");
  requestAnimationFrame(() => setHeight());

  return () => {
    clearTimeout(selectTimer);
    for (const d of disposers) d();
    virt.dispose();
    channel.dispose();
    root.remove();
  };
}

export default { render };
