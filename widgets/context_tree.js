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
import { createChannel } from "./base/channel.js";
import { createVirtualizer } from "./base/virtualizer.js";
import {
  h,
  badge,
  setBadge,
  tokenBar,
  setTokenBar,
  modeSwitch,
  setModeSwitch,
  formatTokens,
  percent,
  stackedBar,
  legend,
} from "./base/components.js";

const ROW_HEIGHT = 28;
const INDENT = 14;
const MODE_OF = { f: "full", k: "key", o: "off", m: "mixed" };
const FLAG = { failed: 1, shadowed: 2, region: 4, subagent: 8, fixed: 16 };
const KEY_MODE = { f: "full", k: "key", o: "off" };
const PAGE = 100; // model-view messages per request

let views = 0;

/** @param {any} model @returns {any} */
function emptyRows(model) {
  const r = model.get("_rows") || {};
  const cols = ["id", "parent", "end", "depth", "kind", "label", "gist", "seq", "tokens", "flags", "tool"];
  for (const c of cols) if (!Array.isArray(r[c])) r[c] = [];
  return r;
}

/** @param {{model: any, el: HTMLElement}} ctx */
function render({ model, el }) {
  const uid = `cx${++views}`;
  const channel = createChannel(model);
  const disposers = [];

  // ---- state ---------------------------------------------------------------------------
  let rows = emptyRows(model);
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
  let tab = "message";
  let lastPreview = /** @type {any} */ (null);
  let applying = false;

  // ---- skeleton ------------------------------------------------------------------------
  function isOpenByDefault(i) {
    return (rows.flags[i] & (FLAG.region | FLAG.shadowed)) === 0;
  }

  function rebuildStructure() {
    rows = emptyRows(model);
    n = rows.id.length;
    expanded = new Uint8Array(n);
    for (let i = 0; i < n; i++) {
      const t = toggled.get(rows.id[i]);
      expanded[i] = (t === undefined ? isOpenByDefault(i) : t) ? 1 : 0;
    }
    scale = { turn: 1, step: 1, leaf: 1 };
    for (let i = 0; i < n; i++) {
      const k = rows.kind[i];
      const key = k === "turn" ? "turn" : k === "step" ? "step" : "leaf";
      if (rows.tokens[i] > scale[key]) scale[key] = rows.tokens[i];
    }
    bodies.clear();
  }

  function computeVisible() {
    const out = new Int32Array(n);
    let k = 0;
    for (let i = 0; i < n; ) {
      out[k++] = i;
      i = rows.end[i] > i + 1 && !expanded[i] ? rows.end[i] : i + 1;
    }
    visible = out.subarray(0, k);
  }

  function modeAt(i) {
    const c = modes[i] || "f";
    return { mode: MODE_OF[c.toLowerCase()] || "full", drafted: c !== c.toLowerCase() };
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
  const statusLine = h("div", { class: "cx-status", role: "status", "aria-live": "polite" });
  const btn = (label, onclick, extra = {}) =>
    h("button", { type: "button", class: "cx-btn", onclick, ...extra }, label);
  const actions = h(
    "div",
    { class: "cx-actions" },
    btn("Expand all", () => setAll(true), { title: "expand every row (folded regions too)" }),
    btn("Collapse all", () => setAll(false), { title: "collapse to turns" }),
    btn("Reset draft", () => resetDraft(), { class: "cx-btn", title: "drop every unapplied mode", "data-action": "reset" }),
    btn("↻", () => refresh(), { title: "re-read the assembly (after edits in Python)", "aria-label": "refresh" }),
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
  const tabs = h("div", { class: "cx-tabs", role: "tablist" });
  const panelBody = h("div", { class: "cx-panel__body", role: "tabpanel", tabindex: "-1" });
  const panel = h("div", { class: "cx-panel" }, tabs, panelBody);
  const body = h("div", { class: "cx-body" }, treeBox, panel);
  const help = h(
    "div",
    { class: "cx-help" },
    "↑ ↓ move · → ← open / close · Enter / Space expand · f k o set full / key / off · Tab moves between parts",
  );
  root.append(head, stats, comp, body, statusLine, help);
  el.append(root);

  const TABS = [
    ["message", "Message"],
    ["model", "Model view"],
    ["preview", "Preview"],
  ];
  /** @type {Record<string, HTMLElement>} */
  const tabButtons = {};
  for (const [key, label] of TABS) {
    const b = h(
      "button",
      {
        type: "button",
        class: "cx-tab",
        role: "tab",
        id: `${uid}-tab-${key}`,
        "data-tab": key,
        onclick: () => showTab(key),
      },
      label,
    );
    tabButtons[key] = b;
    tabs.append(b);
  }

  function setHeight() {
    const px = Math.max(160, Number(model.get("height")) || 420);
    list.style.height = `${px}px`;
    panel.style.height = `${px + columns.offsetHeight}px`;
  }

  // ---- rows ----------------------------------------------------------------------------
  function createRow() {
    const row = h("div", { class: "cx-row", role: "treeitem" });
    const indent = h("span", { class: "cx-row__indent" });
    const caret = h("span", { class: "cx-caret", "aria-hidden": "true" });
    const kind = badge("user");
    const gist = h("span", { class: "cx-row__gist" });
    const seq = h("span", { class: "cx-row__seq" });
    const bar = tokenBar();
    const tokens = h("span", { class: "cx-row__tokens" });
    const sw = modeSwitch((mode) => setMode(Number(row.dataset.i), mode));
    row.append(indent, caret, kind, gist, seq, bar, tokens, sw);
    return row;
  }

  /** @param {HTMLElement} row @param {number} vi */
  function updateRow(row, vi) {
    const i = visible[vi];
    const [indent, caret, kind, gist, seq, bar, tokens, sw] = /** @type {HTMLElement[]} */ (
      Array.from(row.children)
    );
    const flags = rows.flags[i];
    const k = rows.kind[i];
    const hasKids = rows.end[i] > i + 1;
    const { mode, drafted } = modeAt(i);
    row.dataset.i = String(i);
    row.id = `${uid}-r${i}`;
    row.setAttribute("aria-level", String(rows.depth[i] + 1));
    if (hasKids) row.setAttribute("aria-expanded", expanded[i] ? "true" : "false");
    else row.removeAttribute("aria-expanded");
    row.setAttribute("aria-selected", rows.id[i] === selectedId ? "true" : "false");
    row.className =
      "cx-row" +
      (vi === cursor ? " cx-row--cursor" : "") +
      (rows.id[i] === selectedId ? " cx-row--selected" : "") +
      (flags & FLAG.shadowed ? " cx-row--shadowed" : "") +
      (flags & FLAG.region ? " cx-row--region" : "") +
      (flags & FLAG.failed ? " cx-row--failed" : "") +
      (drafted ? " cx-row--drafted" : "") +
      ` cx-row--${k} cx-row--mode-${mode}`;
    indent.style.width = `${rows.depth[i] * INDENT}px`;
    caret.textContent = hasKids ? (expanded[i] ? "▾" : "▸") : "";
    const shownKind = flags & FLAG.failed && k === "tool" ? "failed" : k;
    setBadge(kind, shownKind === "failed" ? "failed" : k, k === "turn" || k === "step" ? rows.label[i] : k);
    kind.title = flags & FLAG.shadowed ? `${k}: in the log, not sent to the model` : k;
    gist.textContent = rows.gist[i] || (k === "turn" || k === "step" ? "" : "(empty)");
    gist.title = rows.gist[i] || "";
    const s = rows.seq[i];
    seq.textContent = s < 0 ? "" : flags & FLAG.shadowed ? `(${s})` : String(s);
    const key = k === "turn" ? "turn" : k === "step" ? "step" : "leaf";
    setTokenBar(bar, rows.tokens[i], scale[key]);
    tokens.textContent = flags & FLAG.shadowed ? "–" : formatTokens(rows.tokens[i]);
    const why =
      flags & FLAG.fixed
        ? k === "subagent"
          ? "a subagent session: its messages are not on this session's surface"
          : "not a surface node: it cannot be collapsed"
        : null;
    setModeSwitch(sw, mode, { disabled: why, pending: pending.has(rows.id[i]) });
    sw.setAttribute("aria-label", `mode of ${rows.label[i]}${drafted ? " (drafted)" : ""}`);
  }

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
    if (tab !== "message") showTab("message", false);
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
  root.addEventListener("keydown", (e) => {
    const typing = e.target instanceof HTMLTextAreaElement || e.target instanceof HTMLInputElement;
    if (e.key === "Tab" || e.key === "Escape") return;
    if (!typing && (e.ctrlKey || e.metaKey || e.altKey || e.shiftKey)) return;
    e.stopPropagation(); // in a text field every key is text ("M" is not merge-cells)
  });

  // ---- kernel requests ---------------------------------------------------------------------
  /** @param {string} text @param {"info" | "error" | "ok"} [kind] */
  function status(text, kind = "info") {
    statusLine.textContent = text;
    statusLine.dataset.kind = kind;
  }

  /** @param {any} err */
  function errorText(err) {
    return err && err.type ? `${err.type}: ${err.message}` : String(err && err.message ? err.message : err);
  }

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
      status(`${rows.label[indexOfId(id)] ?? id} → ${mode}: ${r.nodes} node${r.nodes === 1 ? "" : "s"} in the draft (${r.draft} drafted in all)`, "ok");
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

  // ---- header, stats, composition ----------------------------------------------------------
  function renderTitle() {
    const t = model.get("title") || {};
    title.replaceChildren(
      h("span", { class: "cx-title__name" }, t.name || "session"),
      h("span", { class: "cx-title__meta" }, [t.id, t.version != null ? `v${t.version}` : null, t.tokenizer].filter(Boolean).join(" · ")),
    );
  }

  function stat(label, value, extra = {}) {
    return h("span", { class: "cx-stat", ...extra }, h("span", { class: "cx-stat__label" }, label), h("span", { class: "cx-stat__value" }, value));
  }

  function renderStats() {
    const s = model.get("stats") || {};
    const items = [
      stat("visible", formatTokens(s.visible), { "data-stat": "visible", title: "tokens of the messages the model receives now (the context window's 'used' adds the tool schemas)" }),
      stat("nodes", formatTokens(s.nodes), { "data-stat": "nodes", title: "messages on the surface" }),
      stat("regions", formatTokens(s.regions), { "data-stat": "regions", title: "replacements on the surface (collapses, compactions, prunes)" }),
      stat("folded", formatTokens(s.folded), { "data-stat": "folded", title: "tokens the replacements cost now" }),
      stat("original", formatTokens(s.original), { "data-stat": "original", title: "tokens of the events the replacements cover" }),
      stat("saved", formatTokens(s.saved), { "data-stat": "saved", title: "original − folded" }),
    ];
    if (s.drafted) {
      const delta = s.after == null ? "" : ` (${s.after - s.visible >= 0 ? "+" : "−"}${formatTokens(Math.abs(s.after - s.visible))})`;
      items.push(
        stat("draft", `${formatTokens(s.drafted)} node${s.drafted === 1 ? "" : "s"} → ${formatTokens(s.after)}${delta}`, {
          "data-stat": "draft",
          class: "cx-stat cx-stat--draft",
          title: s.persisted ? `saved in ${s.drafts_path}` : "not saved: pass drafts=DraftStore(...) to keep it across kernel restarts",
        }),
      );
    } else {
      items.push(stat("draft", "none", { "data-stat": "draft" }));
    }
    stats.replaceChildren(...items);
    const reset = actions.querySelector('[data-action="reset"]');
    if (reset) /** @type {HTMLButtonElement} */ (reset).disabled = !s.drafted;
  }

  function renderComposition() {
    const c = model.get("composition") || {};
    const parts = Array.isArray(c.parts) ? c.parts : [];
    const used = c.used || 0;
    const kids = [];
    if (c.window) {
      const free = Math.max(0, c.window - used);
      kids.push(
        h(
          "div",
          { class: "cx-comp__line" },
          h("span", { class: "cx-comp__title" }, "Context window"),
          h("span", null, `${formatTokens(used)} of ${formatTokens(c.window)} tokens used (${percent(used, c.window)})`),
          h("span", { class: "cx-comp__threshold" }, `compacts at ${formatTokens(c.threshold)} (${percent(c.threshold, c.window)})`),
        ),
        stackedBar([...parts, { key: "free", label: "free", value: free }], c.window, [{ at: c.threshold, label: `the harness compacts at ${formatTokens(c.threshold)} tokens` }], "context window"),
      );
    } else {
      kids.push(h("div", { class: "cx-comp__line" }, h("span", { class: "cx-comp__title" }, "Context"), h("span", null, `${formatTokens(used)} tokens; the window is unknown (pass window=)`)));
    }
    kids.push(
      h("div", { class: "cx-comp__line cx-comp__line--parts" }, h("span", { class: "cx-comp__title" }, "Used, by part")),
      stackedBar(parts, Math.max(used, 1), [], "used tokens by part"),
      legend(parts, used),
    );
    comp.replaceChildren(...kids);
  }

  // ---- the panel ---------------------------------------------------------------------------
  function showTab(key, focus = false) {
    tab = key;
    for (const [k, b] of Object.entries(tabButtons)) {
      b.setAttribute("aria-selected", k === key ? "true" : "false");
      b.tabIndex = k === key ? 0 : -1;
    }
    panelBody.setAttribute("aria-labelledby", `${uid}-tab-${key}`);
    panelBody.dataset.tab = key;
    if (key === "message") showMessage();
    else if (key === "model") showModel();
    else showPreview();
    if (focus) tabButtons[key].focus();
  }
  tabs.addEventListener("keydown", (e) => {
    const keys = TABS.map((t) => t[0]);
    const at = keys.indexOf(tab);
    if (e.key === "ArrowRight" || e.key === "ArrowLeft") {
      e.preventDefault();
      showTab(keys[(at + (e.key === "ArrowRight" ? 1 : keys.length - 1)) % keys.length], true);
    }
  });

  function loading(text = "loading…") {
    panelBody.replaceChildren(h("div", { class: "cx-muted" }, text));
  }

  function failure(err) {
    panelBody.replaceChildren(h("div", { class: "cx-error" }, errorText(err)));
  }

  /** A text block; `mono` for tool output and arguments. */
  function textBlock(text, mono = false) {
    return h("pre", { class: mono ? "cx-text cx-text--mono" : "cx-text" }, text || "(empty)");
  }

  function reasoningBlock(parts) {
    if (!parts || !parts.length) return null;
    const text = parts.join("\n\n");
    return h("details", { class: "cx-reasoning" }, h("summary", null, `reasoning · ${formatTokens(text.length)} characters`), textBlock(text));
  }

  function prettyArgs(args) {
    try {
      return JSON.stringify(JSON.parse(args), null, 2);
    } catch {
      return args;
    }
  }

  /** A tool call and its result, side by side. */
  function pair(call, result) {
    return h(
      "div",
      { class: "cx-pair" },
      h(
        "div",
        { class: "cx-pair__call" },
        h("div", { class: "cx-pair__head" }, badge("assistant", "call"), h("b", null, call ? call.name : "(call not found)"), call && call.id ? h("span", { class: "cx-muted" }, call.id) : null),
        call ? textBlock(prettyArgs(call.arguments), true) : null,
      ),
      h(
        "div",
        { class: "cx-pair__result" },
        h(
          "div",
          { class: "cx-pair__head" },
          badge(result && result.is_error ? "failed" : "tool", result && result.is_error ? "error" : "result"),
          result && result.seq != null ? h("span", { class: "cx-muted" }, `seq ${result.seq}`) : null,
          result && result.shadowed ? h("span", { class: "cx-muted" }, "(folded)") : null,
        ),
        result ? textBlock(result.text, true) : h("div", { class: "cx-muted" }, "no result on the surface"),
      ),
    );
  }

  /** @param {any} m  a message as the kernel describes it */
  function messageView(m) {
    const out = [];
    if (m.text) out.push(textBlock(m.text, m.kind === "tool"));
    const r = reasoningBlock(m.reasoning);
    if (r) out.push(r);
    for (const c of m.calls || []) out.push(pair(c, c.result));
    if (m.result) out.push(pair(m.result.call, m.result));
    if (!out.length) out.push(h("div", { class: "cx-muted" }, "(no content)"));
    return out;
  }

  /** A key node's digest: what the model gets instead of it (empty: the automatic one). */
  function digestEditor(id, b) {
    const area = h("textarea", { class: "cx-digest__input", rows: "3", "data-part": "digest", "aria-label": "digest", placeholder: "What the model gets instead of this node. Empty: an automatic digest (its head and tail), which for a short node can be as long as the node." });
    area.value = b.digest || "";
    const save = h("button", { type: "button", class: "cx-btn", "data-action": "set-digest", onclick: async () => {
      try {
        const digest = area.value.trim() || null;
        await channel.request("set_mode", { row: id, mode: "key", digest });
        bodies.delete(id);
        status(digest ? `digest set (${digest.length} characters): preview to see its tokens` : "automatic digest", "ok");
      } catch (err) {
        status(errorText(err), "error");
      }
    } }, "Set digest");
    return h("div", { class: "cx-digest" }, h("div", { class: "cx-muted" }, "Digest (key mode)"), area, h("div", null, save));
  }

  async function showMessage() {
    const i = indexOfId(selectedId);
    if (i < 0) {
      panelBody.replaceChildren(h("div", { class: "cx-muted" }, "Select a row to read its message (click, or move with the arrow keys)."));
      return;
    }
    const id = rows.id[i];
    let b = bodies.get(id);
    if (!b) {
      loading();
      try {
        b = await channel.request("body", { row: id });
      } catch (err) {
        if (selectedId === id && tab === "message") failure(err);
        return;
      }
      bodies.set(id, b);
    }
    if (selectedId !== id || tab !== "message") return;
    const metaBits = [
      b.seq != null ? (b.state === "shadowed" ? `seq (${b.seq})` : `seq ${b.seq}`) : null,
      b.turn != null ? `turn ${b.turn}${b.step != null ? `, step ${b.step}` : ""}` : null,
      b.state === "shadowed" ? "in the log, not sent to the model" : `${formatTokens(b.tokens)} tokens`,
      b.role ? `role ${b.role}` : null,
      b.source ? `source ${b.source}` : null,
    ].filter(Boolean);
    const content = [
      h(
        "div",
        { class: "cx-msg__head" },
        badge(b.failed ? "failed" : b.kind, b.kind === "turn" || b.kind === "step" ? b.label : b.kind),
        h("span", { class: `cx-badge cx-badge--${b.mode}` }, b.mode),
        h("span", { class: "cx-muted" }, metaBits.join(" · ")),
      ),
    ];
    if (b.mode === "key" && b.seq != null && b.state !== "shadowed") content.push(digestEditor(id, b));
    if (b.covers) content.push(h("div", { class: "cx-note" }, `Stands for ${b.covers} event${b.covers === 1 ? "" : "s"} (${formatTokens(b.covers_tokens)} tokens) that stay in the log: expand the row to see them.`));
    if (b.message) content.push(...messageView(b.message));
    if (b.summary) content.push(h("div", { class: "cx-note" }, b.summary));
    if (b.children) {
      content.push(
        h(
          "ul",
          { class: "cx-children" },
          ...b.children.map((c) => h("li", null, badge(c.kind, c.kind === "step" ? c.label : c.kind), h("span", { class: "cx-children__gist" }, c.gist), h("span", { class: "cx-muted" }, formatTokens(c.tokens)))),
        ),
      );
    }
    if (b.subagent) {
      const s = b.subagent;
      content.push(h("div", { class: "cx-note" }, `Subagent session ${s.id}: ${s.title} · ${formatTokens(s.messages)} messages · ${formatTokens(s.tokens)} tokens`));
      if (s.prompt) content.push(textBlock(s.prompt));
    }
    panelBody.replaceChildren(h("div", { class: "cx-msg" }, ...content));
  }

  async function showModel(offset = 0, into = /** @type {HTMLElement | null} */ (null)) {
    if (!into) loading("deriving the messages the model would receive…");
    let r;
    try {
      r = await channel.request("model_view", { offset, limit: PAGE });
    } catch (err) {
      if (tab === "model") failure(err);
      return;
    }
    if (tab !== "model") return;
    const listEl =
      into ||
      h("ol", { class: "cx-model", start: "0" });
    for (const m of r.messages) {
      listEl.append(
        h(
          "li",
          { class: `cx-model__msg cx-model__msg--${m.role}`, value: String(m.index) },
          h(
            "div",
            { class: "cx-model__head" },
            h("span", { class: "cx-model__index" }, `#${m.index}`),
            badge(m.kind, m.role),
            m.fold ? badge("replacement", m.fold) : null,
            h("span", { class: "cx-muted" }, `${formatTokens(m.tokens)} tokens${m.seq != null ? ` · seq ${m.seq}` : " · new"}`),
          ),
          ...messageView(m),
        ),
      );
    }
    listEl.querySelector(".cx-more")?.remove();
    if (!into) {
      panelBody.replaceChildren(
        h(
          "div",
          { class: "cx-note" },
          r.drafted
            ? `Exactly what the model would receive after the draft: ${formatTokens(r.total)} messages, ${formatTokens(r.tokens)} tokens.`
            : `Exactly what the model receives (no draft): ${formatTokens(r.total)} messages, ${formatTokens(r.tokens)} tokens.`,
        ),
        listEl,
      );
    }
    const shown = offset + r.messages.length;
    if (shown < r.total) {
      const more = h("button", { type: "button", class: "cx-btn cx-more", onclick: () => { more.disabled = true; showModel(shown, listEl); } }, `Show ${Math.min(PAGE, r.total - shown)} more (${formatTokens(r.total - shown)} left)`);
      listEl.append(h("li", { class: "cx-more" }, more));
    }
  }

  function compositionCompare(before, after) {
    const keys = (before.parts || []).map((p) => p.key);
    const byKey = (c) => Object.fromEntries((c.parts || []).map((p) => [p.key, p]));
    const b = byKey(before);
    const a = byKey(after);
    const max = Math.max(before.used || 0, after.used || 0, 1);
    return h(
      "div",
      { class: "cx-compare" },
      h("div", { class: "cx-compare__row" }, h("span", { class: "cx-compare__label" }, "before"), h("div", { class: "cx-compare__bar", style: { width: `${(100 * (before.used || 0)) / max}%` } }, stackedBar(before.parts || [], Math.max(before.used, 1), [], "before")), h("span", { class: "cx-compare__n" }, formatTokens(before.used))),
      h("div", { class: "cx-compare__row" }, h("span", { class: "cx-compare__label" }, "after"), h("div", { class: "cx-compare__bar", style: { width: `${(100 * (after.used || 0)) / max}%` } }, stackedBar(after.parts || [], Math.max(after.used, 1), [], "after")), h("span", { class: "cx-compare__n" }, formatTokens(after.used))),
      h(
        "table",
        { class: "cx-table" },
        h("thead", null, h("tr", null, h("th", null, "part"), h("th", null, "before"), h("th", null, "after"), h("th", null, "change"))),
        h(
          "tbody",
          null,
          ...keys.map((k) => {
            const d = (a[k]?.value || 0) - (b[k]?.value || 0);
            return h("tr", { class: d ? "" : "cx-unchanged" }, h("td", null, h("span", { class: `cx-swatch cx-seg--${k}` }), " ", b[k].label), h("td", null, formatTokens(b[k].value)), h("td", null, formatTokens(a[k]?.value || 0)), h("td", { class: d < 0 ? "cx-minus" : d > 0 ? "cx-plus" : "" }, d ? `${d > 0 ? "+" : "−"}${formatTokens(Math.abs(d))}` : "0"));
          }),
        ),
      ),
    );
  }

  function diffView(diff) {
    return h(
      "ol",
      { class: "cx-diff" },
      ...diff.map((d) => {
        if (d.op === "=") {
          return h("li", { class: "cx-diff__same" }, `${formatTokens(d.count)} message${d.count === 1 ? "" : "s"} unchanged`);
        }
        if (d.op === "…") return h("li", { class: "cx-diff__same" }, `… ${formatTokens(d.count)} more changes`);
        return h(
          "li",
          { class: d.op === "+" ? "cx-diff__add" : "cx-diff__del" },
          h("span", { class: "cx-diff__op", "aria-label": d.op === "+" ? "added" : "removed" }, d.op === "+" ? "+" : "−"),
          badge(d.kind, d.role),
          h("span", { class: "cx-diff__gist" }, d.gist || "(empty)"),
          h("span", { class: "cx-muted" }, formatTokens(d.tokens)),
        );
      }),
    );
  }

  async function showPreview() {
    loading("planning the draft…");
    let p;
    try {
      p = await channel.request("preview");
    } catch (err) {
      if (tab === "preview") failure(err);
      return;
    }
    if (tab !== "preview") return;
    lastPreview = p;
    renderPreview(p);
  }

  function renderPreview(p) {
    const stale = p.revision !== model.get("revision");
    const parts = [];
    parts.push(
      h(
        "div",
        { class: "cx-preview__sum", "data-preview": "summary" },
        h("span", { class: "cx-stat__value" }, `${formatTokens(p.tokens_before)} → ${formatTokens(p.tokens_after)} tokens`),
        h("span", { class: p.saved > 0 ? "cx-minus" : p.saved < 0 ? "cx-plus" : "cx-muted" }, p.saved >= 0 ? `saves ${formatTokens(p.saved)}` : `adds ${formatTokens(-p.saved)}`),
        h("span", { class: "cx-muted" }, `${p.ops.length} op${p.ops.length === 1 ? "" : "s"} · ${formatTokens(p.messages_before)} → ${formatTokens(p.messages_after)} messages`),
      ),
    );
    if (stale) parts.push(h("div", { class: "cx-error" }, "The draft changed since this preview.", " ", h("button", { type: "button", class: "cx-btn", onclick: showPreview }, "Preview again")));
    if (!p.ops.length) {
      parts.push(h("div", { class: "cx-note" }, "The draft is empty or changes nothing: set rows to key or off (click a mode, or f / k / o), then preview."));
    } else {
      parts.push(
        h(
          "table",
          { class: "cx-table cx-ops" },
          h("thead", null, h("tr", null, h("th", null, "op"), h("th", null, "mode"), h("th", null, "seqs"), h("th", null, "nodes"), h("th", null, "tokens"))),
          h("tbody", null, ...p.ops.map((o) => h("tr", null, h("td", null, o.kind), h("td", null, h("span", { class: `cx-badge cx-badge--${o.mode}` }, o.mode)), h("td", null, o.start_seq === o.end_seq ? String(o.start_seq) : `${o.start_seq}–${o.end_seq}`), h("td", null, String(o.nodes)), h("td", null, `${formatTokens(o.tokens_before)} → ${formatTokens(o.tokens_after)}`)))),
        ),
      );
    }
    for (const note of p.notes || []) parts.push(h("div", { class: "cx-note" }, note));
    parts.push(h("h4", { class: "cx-h" }, "Composition"), compositionCompare(p.composition_before, p.composition_after));
    parts.push(h("h4", { class: "cx-h" }, "Messages"), diffView(p.diff));
    const box = h("div", { class: "cx-apply" });
    const applyBtn = h("button", { type: "button", class: "cx-btn cx-btn--primary", "data-action": "apply", disabled: !p.ops.length || stale || !!p.read_only, title: p.read_only || null, onclick: () => confirmApply(p, box) }, "Apply…");
    box.append(applyBtn);
    // a log that cannot take the apply (a shipped sample): said here, not after the confirm
    if (p.read_only) box.append(h("div", { class: "cx-note", "data-part": "read-only" }, p.read_only));
    parts.push(box);
    panelBody.replaceChildren(h("div", { class: "cx-preview" }, ...parts));
  }

  function confirmApply(p, box) {
    const where = p.path ? `to ${p.path}` : "in memory (this session has no file)";
    const cancel = h("button", { type: "button", class: "cx-btn", onclick: () => renderPreview(p) }, "Cancel");
    const ok = h("button", { type: "button", class: "cx-btn cx-btn--danger", "data-action": "confirm-apply", onclick: () => doApply(p, box) }, p.path ? "Append to the log" : "Apply");
    box.replaceChildren(
      h(
        "div",
        { class: "cx-confirm", role: "alertdialog", "aria-label": "confirm apply" },
        h("p", null, `Append ${p.ops.length} replace op${p.ops.length === 1 ? "" : "s"} ${where}? They are written as one batch under the log's lease; the events they replace stay in the log and can be expanded again.`),
        h("div", { class: "cx-confirm__buttons" }, cancel, ok),
      ),
    );
    cancel.focus();
  }

  async function doApply(p, box) {
    box.replaceChildren(h("div", { class: "cx-muted" }, "applying…"));
    applying = true;
    try {
      const r = await channel.request("apply", { revision: p.revision });
      const text = r.written
        ? `Applied: ${r.appended} event${r.appended === 1 ? "" : "s"} appended; the log now has ${formatTokens(r.events_after)} events (was ${formatTokens(r.events_before)}) · ${r.path}`
        : `Applied in memory: ${r.appended} event${r.appended === 1 ? "" : "s"} pending (the session has no file); ${formatTokens(r.events_after)} events`;
      lastPreview = null;
      if (tab === "preview") {
        panelBody.replaceChildren(
          h("div", { class: "cx-ok", "data-result": "apply" }, text),
          h("div", { class: "cx-note" }, "The tree shows the new session; its draft is empty."),
        );
      }
      status(text, "ok");
    } catch (err) {
      box.replaceChildren(h("div", { class: "cx-error", "data-result": "apply" }, errorText(err)));
      status(errorText(err), "error");
    } finally {
      applying = false;
    }
  }

  // ---- traits ------------------------------------------------------------------------------
  function onRows() {
    const keepId = visible.length ? rows.id[rowAtCursor()] : null;
    rebuildStructure();
    modes = String(model.get("_modes") || "");
    relayout(indexOfId(keepId));
    if (tab === "message") showMessage();
  }
  function onModes() {
    modes = String(model.get("_modes") || "");
    bodies.clear(); // a body shows its row's mode
    virt.refresh();
    if (tab === "message" && selectedId) showMessage();
  }
  function onRevision() {
    if (applying) return;
    if (tab === "preview" && lastPreview) renderPreview(lastPreview);
    if (tab === "model") showModel();
  }
  const handlers = [
    ["change:_rows", onRows],
    ["change:_modes", onModes],
    ["change:stats", renderStats],
    ["change:composition", renderComposition],
    ["change:title", renderTitle],
    ["change:height", () => { setHeight(); virt.refresh(); }],
    ["change:revision", onRevision],
  ];
  for (const [ev, fn] of handlers) model.on(ev, fn);
  disposers.push(() => { for (const [ev, fn] of handlers) model.off(ev, fn); });

  // ---- first paint ---------------------------------------------------------------------------
  renderTitle();
  renderStats();
  renderComposition();
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
