// @ts-check
/**
 * BeliefSlots: a merge's slots (one row per key: presented value, status, evidence, trust,
 * kept or dropped by the budget), each row expandable to its provenance (every claim with its
 * source session, evidence, origin, verbatim quote and a clickable event seq), and beside it
 * the packed block (what the budget kept, what it dropped and why). The strategy and budget
 * controls ask the kernel to re-run the merge; the filter box and the status filter narrow the
 * rows. Rows are shown a page at a time, so a merge of thousands of slots keeps at most
 * `page_size` rows in the DOM.
 *
 * Synced traits (small, set by the kernel):
 *   _rows     slots by column (key, type, value, status, detail, evidence, trust, sources,
 *             claims, flags, why, pos, by: what decided the slot)
 *   _compare  when comparing: names, decisions ({name: [text per row]}), differs ([bool])
 *   _block    text, tokens, budget, kept (keys in layout order), dropped ([key, why]), reason,
 *             withheld, trust, tokenizer
 *   summary   score, budget, query, slots, counts (by status), sources, skipped, violations,
 *             strategy ({name, hooks, description}), refused ([key, why])
 *   _strategy_names, selected_event, error, height, page_size, revision
 * A slot's provenance, re-running (`rerun`) and selecting an event (`select_event`) go over
 * the request/response channel (base/channel.js).
 */
import "./belief_slots.css";
import { createChannel } from "./base/channel.js";
import { badge, tokenBar } from "./base/components.js";
import { h, put } from "./base/dom.js";
import { formatTokens, plural } from "./base/format.js";
import { createStatus, keepKeys, stat } from "./base/panel.js";
import { renderBlock as drawBlock } from "./belief_slots/block.js";
import { createProvenance } from "./belief_slots/provenance.js";
import { EVIDENCE, FLAG, STATUSES, TRUST, filterRows, lastPage, readCompare, readRows } from "./belief_slots/rows.js";

let views = 0;

/** @param {{model: any, el: HTMLElement}} ctx */
function render({ model, el }) {
  const uid = `bs${++views}${Math.random().toString(36).slice(2, 7)}`;
  const channel = createChannel(model);
  const disposers = [];

  // ---- state ---------------------------------------------------------------------------
  let rows = readRows(model.get("_rows"));
  let compared = readCompare(model.get("_compare"));
  /** @type {number[]} */
  let shown = []; // row indices passing the filters
  let page = 0;
  let filterText = "";
  let filterStatus = "all";
  /** @type {Set<string>} */
  const expanded = new Set();
  let busy = false;

  // ---- DOM -----------------------------------------------------------------------------
  const root = h("div", { class: "cx-root cx-slots", "data-cx-view": uid });
  const titleEl = h("div", { class: "cx-title" });
  const figures = h("div", { class: "cx-stats", "aria-label": "figures" });
  const head = h("div", { class: "cx-head" }, titleEl, figures);

  const strategy = /** @type {HTMLSelectElement} */ (h("select", { class: "cx-input", "data-control": "strategy", "aria-label": "scoring strategy", title: "how a slot's opinions are scored" }));
  const budget = /** @type {HTMLInputElement} */ (h("input", { class: "cx-input cx-input--num", type: "number", min: "0", step: "10", "data-control": "budget", "aria-label": "budget in tokens", title: "the block's token budget" }));
  const budgetRange = /** @type {HTMLInputElement} */ (h("input", { class: "cx-range", type: "range", min: "0", step: "10", "data-control": "budget-range", "aria-label": "budget slider" }));
  const filter = /** @type {HTMLInputElement} */ (h("input", { class: "cx-input cx-input--search", type: "search", placeholder: "filter key or value…", "data-control": "filter", "aria-label": "filter by key or value" }));
  const statusSel = /** @type {HTMLSelectElement} */ (
    h(
      "select",
      { class: "cx-input", "data-control": "status", "aria-label": "status filter" },
      h("option", { value: "all" }, "all statuses"),
      ...STATUSES.map((s) => h("option", { value: s }, s)),
      h("option", { value: "kept" }, "in the block"),
      h("option", { value: "dropped" }, "left out"),
    )
  );
  const strategyNote = h("span", { class: "cx-control__unit", "data-part": "strategy-hooks" });
  const controls = h(
    "div",
    { class: "cx-controls" },
    h("label", { class: "cx-control" }, h("span", { class: "cx-control__label" }, "strategy"), strategy, strategyNote),
    h("label", { class: "cx-control" }, h("span", { class: "cx-control__label" }, "budget"), budget, budgetRange, h("span", { class: "cx-control__unit" }, "tok")),
    h("span", { class: "cx-controls__gap" }),
    h("span", { class: "cx-control" }, h("label", { class: "cx-control" }, h("span", { class: "cx-control__label" }, "filter"), filter), statusSel),
  );

  const listHead = h(
    "div",
    { class: "cx-srow cx-srow--head", "aria-hidden": "true" },
    h("span", { class: "cx-srow__toggle" }),
    h("span", { class: "cx-srow__key" }, "key"),
    h("span", { class: "cx-srow__value" }, "value"),
    h("span", { class: "cx-srow__status" }, "status"),
    h("span", { class: "cx-srow__ev" }, "evidence"),
    h("span", { class: "cx-srow__trust" }, "trust"),
    h("span", { class: "cx-srow__block" }, "block"),
  );
  const list = h("div", { class: "cx-slots__list", role: "list", "aria-label": "slots" });
  const pagerAt = h("span", { class: "cx-pager__at" });
  const prev = h("button", { type: "button", class: "cx-btn", "data-action": "prev", onclick: () => turn(-1) }, "‹ prev");
  const next = h("button", { type: "button", class: "cx-btn", "data-action": "next", onclick: () => turn(1) }, "next ›");
  const pager = h("div", { class: "cx-pager" }, prev, pagerAt, next);
  const tableBox = h("div", { class: "cx-slots__table" }, listHead, list, pager);

  const blockHead = h("div", { class: "cx-block__head" });
  const blockBar = tokenBar();
  const keptList = h("ol", { class: "cx-block__kept", "aria-label": "kept slots" });
  const droppedList = h("ul", { class: "cx-block__dropped", "aria-label": "dropped slots" });
  const keptTitle = h("h4", { class: "cx-block__title" });
  const droppedTitle = h("h4", { class: "cx-block__title" });
  const blockText = h("pre", { class: "cx-pre cx-block__text", "data-part": "block-text" });
  const blockNote = h("div", { class: "cx-note" });
  const blockPanel = h(
    "div",
    { class: "cx-block", role: "region", "aria-label": "the packed block", "data-part": "block" },
    blockHead,
    blockBar,
    blockNote,
    keptTitle,
    keptList,
    droppedTitle,
    droppedList,
    h("details", { class: "cx-section" }, h("summary", null, "block text"), blockText),
  );
  const body = h("div", { class: "cx-body" }, tableBox, blockPanel);
  const statusLine = createStatus();
  const status = statusLine.show;
  root.append(head, controls, body, statusLine.el);
  el.append(root);
  // Keys typed in the widget must not reach the notebook ("a", "b", "d d" are commands there).
  keepKeys(root, { shiftPasses: true });
  const provenanceView = createProvenance({ model, root, channel, status, rows: () => rows, compared: () => compared });
  /** @type {Map<string, any>} provenance by key, for this revision */
  let provenance = new Map();
  /** @param {string} key */
  const provenanceEl = (key) => provenanceView.provenanceEl(key, provenance);

  // ---- header and controls ---------------------------------------------------------------
  function renderHeader() {
    const sm = model.get("summary") || {};
    const b = model.get("_block") || {};
    const sources = sm.sources || [];
    const counts = sm.counts || {};
    put(
      titleEl,
      h("span", { class: "cx-title__name" }, "Merged beliefs"),
      h(
        "span",
        { class: "cx-title__meta", title: sources.map((/** @type {any} */ s) => `${s.id}${s.title ? ` — ${s.title}` : ""}`).join("\n") },
        `${plural(sources.length, "source")}: ${sources.map((/** @type {any} */ s) => s.short).join(", ")}`,
      ),
    );
    put(
      figures,
      stat("slots", "slots", formatTokens(sm.slots || 0)),
      ...STATUSES.filter((s) => counts[s]).map((s) => stat(s, s, formatTokens(counts[s]))),
      stat("block", "block", `${formatTokens(b.tokens || 0)} / ${formatTokens(b.budget || 0)} tok`, `${(b.kept || []).length} kept, ${(b.dropped || []).length} dropped`),
    );
    const names = model.get("_strategy_names") || [];
    if (strategy.options.length !== names.length || names.some((/** @type {string} */ n, /** @type {number} */ i) => strategy.options[i].value !== n)) {
      put(strategy, ...names.map((/** @type {string} */ n) => h("option", { value: n }, n)));
    }
    strategy.value = sm.score || "";
    const st = sm.strategy || {};
    const hooks = Array.isArray(st.hooks) ? st.hooks : [];
    strategyNote.textContent = hooks.length ? `hooks: ${hooks.join(", ")}` : "";
    strategyNote.title = st.description || "";
    // "strategies differ" is offered only while comparing (a hidden option still widens the box)
    const diffOpt = statusSel.querySelector('option[value="differs"]');
    if (compared && !diffOpt) statusSel.append(h("option", { value: "differs" }, "strategies differ"));
    if (!compared && diffOpt) {
      diffOpt.remove();
      if (filterStatus === "differs") {
        filterStatus = "all";
        statusSel.value = "all";
        applyFilter();
        renderList();
      }
    }
    const current = Number(sm.budget || 0);
    if (document.activeElement !== budget) budget.value = String(current);
    budgetRange.max = String(Math.max(200, Math.ceil((current * 2) / 100) * 100, Number(budgetRange.max) || 0));
    budgetRange.value = String(current);
    const can = sm.can_rerun !== false;
    for (const c of [strategy, budget, budgetRange]) c.disabled = busy || !can;
    const err = model.get("error");
    if (err) status(err, "error");
  }

  // ---- the table -------------------------------------------------------------------------
  function applyFilter() {
    shown = filterRows(rows, compared, filterText, filterStatus);
    page = Math.min(page, lastPage(shown.length, pageSize()));
  }

  function pageSize() {
    return Math.max(1, Number(model.get("page_size")) || 50);
  }

  /** @param {number} by */
  function turn(by) {
    page = Math.min(lastPage(shown.length, pageSize()), Math.max(0, page + by));
    renderList();
    list.scrollTop = 0;
  }

  function renderList() {
    const size = pageSize();
    const from = page * size;
    const to = Math.min(shown.length, from + size);
    const items = [];
    for (let j = from; j < to; j++) items.push(rowEl(shown[j]));
    if (!items.length) items.push(h("div", { class: "cx-empty" }, rows.n ? "No slot matches the filter." : "This merge has no slots: no session stated a setting, decision or fact the merge could key. Check the sources above, or merge other sessions."));
    put(list, ...items);
    pagerAt.textContent = shown.length ? `slots ${formatTokens(from + 1)}–${formatTokens(to)} of ${formatTokens(shown.length)}${shown.length < rows.n ? ` (filtered from ${formatTokens(rows.n)})` : ""}` : `0 of ${formatTokens(rows.n)}`;
    /** @type {HTMLButtonElement} */ (prev).disabled = page === 0;
    /** @type {HTMLButtonElement} */ (next).disabled = to >= shown.length;
    pager.hidden = shown.length <= size;
    list.dataset.rows = String(to - from);
  }

  /** @param {number} i */
  function rowEl(i) {
    const c = rows.cols;
    const key = String(c.key[i]);
    const st = String(c.status[i]);
    const flags = Number(c.flags[i]);
    const open = expanded.has(key);
    const kept = (flags & FLAG.kept) !== 0;
    const ev = Number(c.evidence[i]);
    const trust = TRUST[Number(c.trust[i])] || "untrusted";
    const by = String(c.by[i] || "");
    const differs = !!(compared && compared.differs[i]);
    const toggle = () => {
      if (expanded.has(key)) expanded.delete(key);
      else expanded.add(key);
      const fresh = rowEl(i);
      wrap.replaceWith(fresh);
      if (expanded.has(key)) /** @type {HTMLElement} */ (fresh.querySelector(".cx-srow"))?.focus();
    };
    const line = h(
      "div",
      {
        class: `cx-srow cx-srow--${st}${kept ? " cx-srow--kept" : " cx-srow--dropped"}`,
        role: "button",
        tabindex: "0",
        "aria-expanded": open ? "true" : "false",
        "data-key": key,
        "data-status": st,
        "data-by": by,
        "data-differs": differs ? "true" : null,
        title: `${kept ? `in the block (#${Number(c.pos[i]) + 1})` : `left out: ${c.why[i]}`}${by ? `\ndecided by ${by}` : ""}`,
        onclick: toggle,
        onkeydown: (/** @type {KeyboardEvent} */ e) => {
          if (e.key === "Enter" || e.key === " ") {
            e.preventDefault();
            toggle();
          }
        },
      },
      h("span", { class: "cx-srow__toggle", "aria-hidden": "true" }, open ? "▾" : "▸"),
      h("code", { class: "cx-srow__key" }, key),
      h(
        "span",
        { class: "cx-srow__value" },
        String(c.value[i]) || "—",
        c.detail[i] ? h("span", { class: "cx-srow__detail" }, String(c.detail[i])) : null,
        by && !c.detail[i] ? h("span", { class: "cx-srow__detail cx-srow__by", "data-part": "decided-by" }, `decided by ${by}`) : null,
      ),
      h("span", { class: "cx-srow__status" }, badge(`status-${st}`, st), differs ? h("span", { class: "cx-srow__differs", title: "the strategies decide this slot differently (expand the row)", "data-part": "differs" }, "≠") : null),
      h("span", { class: "cx-srow__ev", title: `evidence ${ev}: ${EVIDENCE[/** @type {1|2|3|4} */ (ev)] || "none"}; ${plural(Number(c.sources[i]), "source")}, ${plural(Number(c.claims[i]), "claim")}` }, badge(`ev${ev}`, `E${ev}`), h("span", { class: "cx-srow__n" }, `×${c.sources[i]}`)),
      h("span", { class: "cx-srow__trust" }, badge(`trust-${trust}`, trust)),
      h("span", { class: "cx-srow__block" }, kept ? badge("kept", `kept #${Number(c.pos[i]) + 1}`) : badge("dropped", "out")),
    );
    const wrap = h("div", { class: "cx-slot", role: "listitem", "data-key": key }, line);
    if (open) wrap.append(provenanceEl(key));
    return wrap;
  }

  // ---- the block -------------------------------------------------------------------------
  const blockEls = { blockHead, blockBar, blockNote, keptTitle, keptList, droppedTitle, droppedList, blockText };
  const renderBlock = () => drawBlock(blockEls, model, reveal);

  /** Show the row of `key`: clear what hides it, go to its page, expand it. @param {string} key */
  function reveal(key) {
    let at = shown.findIndex((i) => rows.cols.key[i] === key);
    if (at < 0) {
      filterText = "";
      filter.value = "";
      filterStatus = "all";
      statusSel.value = "all";
      applyFilter();
      at = shown.findIndex((i) => rows.cols.key[i] === key);
    }
    if (at < 0) return;
    page = Math.floor(at / pageSize());
    expanded.add(key);
    renderList();
    const row = /** @type {HTMLElement | null} */ (list.querySelector(`.cx-srow[data-key="${CSS.escape(key)}"]`));
    row?.scrollIntoView({ block: "nearest" });
    row?.focus();
  }

  // ---- re-running ------------------------------------------------------------------------
  /** @param {Record<string, any>} args */
  function rerun(args) {
    const sm = model.get("summary") || {};
    const payload = { score: sm.score, budget: Number(sm.budget), ...args };
    if (!Number.isInteger(payload.budget) || payload.budget < 0) {
      status(`a budget is a whole number of tokens ≥ 0, not ${budget.value}`, "error");
      renderHeader();
      return;
    }
    busy = true;
    root.classList.add("cx-pending");
    renderHeader();
    status(`re-running: ${payload.score}, budget ${formatTokens(payload.budget)} tokens…`);
    channel.request("rerun", payload).then(
      (r) => {
        busy = false;
        root.classList.remove("cx-pending");
        renderHeader();
        status(`${r.score} · budget ${formatTokens(r.budget)} tokens`, "ok");
      },
      (err) => {
        busy = false;
        root.classList.remove("cx-pending");
        renderHeader();
        status(`${err.type}: ${err.message}`, "error");
      },
    );
  }
  strategy.addEventListener("change", () => rerun({ score: strategy.value }));
  budget.addEventListener("change", () => rerun({ budget: Number(budget.value) }));
  budgetRange.addEventListener("input", () => { budget.value = budgetRange.value; });
  budgetRange.addEventListener("change", () => rerun({ budget: Number(budgetRange.value) }));

  let filterTimer = 0;
  filter.addEventListener("input", () => {
    clearTimeout(filterTimer);
    filterTimer = window.setTimeout(() => {
      filterText = filter.value;
      page = 0;
      applyFilter();
      renderList();
    }, 120);
  });
  statusSel.addEventListener("change", () => {
    filterStatus = statusSel.value;
    page = 0;
    applyFilter();
    renderList();
  });

  // ---- sync ----------------------------------------------------------------------------
  function onRows() {
    rows = readRows(model.get("_rows"));
    compared = readCompare(model.get("_compare"));
    provenance = new Map();
    const keys = new Set(rows.cols.key);
    for (const k of [...expanded]) if (!keys.has(k)) expanded.delete(k);
    applyFilter();
    renderList();
  }
  function setHeight() {
    list.style.maxHeight = `${Math.max(120, Number(model.get("height")) || 440)}px`;
  }
  const handlers = [
    ["change:_rows", onRows],
    ["change:_block", () => { renderBlock(); renderHeader(); }],
    ["change:summary", renderHeader],
    ["change:_compare", () => { compared = readCompare(model.get("_compare")); renderHeader(); applyFilter(); renderList(); }],
    ["change:_strategy_names", renderHeader],
    ["change:error", renderHeader],
    ["change:height", setHeight],
    ["change:page_size", () => { applyFilter(); renderList(); }],
  ];
  for (const [ev, fn] of handlers) model.on(ev, fn);
  disposers.push(() => { for (const [ev, fn] of handlers) model.off(ev, fn); });

  setHeight();
  renderHeader();
  renderBlock();
  applyFilter();
  renderList();

  return () => {
    clearTimeout(filterTimer);
    for (const d of disposers) d();
    channel.dispose();
  };
}

export default { render };
