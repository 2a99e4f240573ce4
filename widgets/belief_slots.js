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
import { createChannel } from "./base/channel.js";
import { h, badge, formatTokens, tokenBar, setTokenBar } from "./base/components.js";

const FLAG = { kept: 1, dropped: 2, superseded: 4, negated: 8 };
const COLUMNS = ["key", "type", "value", "status", "detail", "evidence", "trust", "sources", "claims", "flags", "why", "pos", "by"];
const STATUSES = ["resolved", "disputed", "adjudicated", "ruled", "retracted", "empty"];
const TRUST = ["untrusted", "external", "trusted"];
const LISTED = 100; // kept / dropped keys the block panel lists (the table filters show all)
const EVIDENCE = { 1: "speculative", 2: "inferred", 3: "tool-verified", 4: "user-stated" };

let views = 0;

/**
 * `el.replaceChildren(...)` without the null / false children.
 * @param {Element} el @param {...(Node | string | null | undefined | false)} kids
 */
function put(el, ...kids) {
  el.replaceChildren(.../** @type {(Node | string)[]} */ (kids.filter((k) => k != null && k !== false)));
}

/** @param {any} model */
function readRows(model) {
  const r = model.get("_rows") || {};
  for (const c of COLUMNS) if (!Array.isArray(r[c])) r[c] = [];
  return { cols: r, n: r.key.length };
}

/** Every offered strategy's decision per row, or null when not comparing. @param {any} model */
function readCompare(model) {
  const c = model.get("_compare") || {};
  if (!Array.isArray(c.names) || !c.names.length) return null;
  return { names: /** @type {string[]} */ (c.names), decisions: c.decisions || {}, differs: Array.isArray(c.differs) ? c.differs : [] };
}

/** @param {number} n @param {string} word */
function plural(n, word) {
  return `${formatTokens(n)} ${word}${n === 1 ? "" : "s"}`;
}

/** @param {{model: any, el: HTMLElement}} ctx */
function render({ model, el }) {
  const uid = `bs${++views}${Math.random().toString(36).slice(2, 7)}`;
  const channel = createChannel(model);
  const disposers = [];

  // ---- state ---------------------------------------------------------------------------
  let rows = readRows(model);
  let compared = readCompare(model);
  /** @type {number[]} */
  let shown = []; // row indices passing the filters
  let page = 0;
  let filterText = "";
  let filterStatus = "all";
  /** @type {Set<string>} */
  const expanded = new Set();
  /** @type {Map<string, any>} provenance by key, for this revision */
  let provenance = new Map();
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
  const statusLine = h("div", { class: "cx-status", role: "status", "aria-live": "polite" });
  root.append(head, controls, body, statusLine);
  el.append(root);

  /** @param {string} text @param {"info" | "error" | "ok"} [kind] */
  function status(text, kind = "info") {
    statusLine.textContent = text;
    statusLine.dataset.kind = kind;
  }

  /** @param {string} name @param {string} label @param {string} value @param {string} [hint] */
  function stat(name, label, value, hint = "") {
    return h("span", { class: "cx-stat", "data-stat": name, title: hint || null }, h("span", { class: "cx-stat__label" }, label), h("span", { class: "cx-stat__value" }, value));
  }

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
    const c = rows.cols;
    const q = filterText.trim().toLowerCase();
    shown = [];
    for (let i = 0; i < rows.n; i++) {
      if (filterStatus === "differs") {
        if (!compared || !compared.differs[i]) continue;
      } else if (filterStatus === "kept" ? !(c.flags[i] & FLAG.kept) : filterStatus === "dropped" ? !(c.flags[i] & FLAG.dropped) : filterStatus !== "all" && c.status[i] !== filterStatus) continue;
      if (q && !String(c.key[i]).toLowerCase().includes(q) && !String(c.value[i]).toLowerCase().includes(q)) continue;
      shown.push(i);
    }
    const size = pageSize();
    page = Math.min(page, Math.max(0, Math.ceil(shown.length / size) - 1));
  }

  function pageSize() {
    return Math.max(1, Number(model.get("page_size")) || 50);
  }

  /** @param {number} by */
  function turn(by) {
    const size = pageSize();
    const last = Math.max(0, Math.ceil(shown.length / size) - 1);
    page = Math.min(last, Math.max(0, page + by));
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

  /** @param {string} key */
  function provenanceEl(key) {
    const box = h("div", { class: "cx-prov", "data-part": "provenance", "data-key": key });
    const have = provenance.get(key);
    if (have) fillProvenance(box, have);
    else {
      put(box, h("div", { class: "cx-loading" }, "reading the claims…"));
      const rev = model.get("revision");
      channel.request("provenance", { key }).then(
        (p) => {
          if (model.get("revision") !== rev) return;
          provenance.set(key, p);
          fillProvenance(box, p);
        },
        (err) => put(box, h("div", { class: "cx-note cx-note--error" }, `${err.type}: ${err.message}`)),
      );
    }
    return box;
  }

  /** @param {HTMLElement} box @param {any} p */
  function fillProvenance(box, p) {
    const sel = model.get("selected_event") || {};
    const claims = (p.claims || []).map((/** @type {any} */ c) =>
      h(
        "li",
        {
          class: `cx-claim${c.superseded ? " cx-claim--superseded" : ""}${c.presented ? " cx-claim--presented" : ""}`,
          "data-source": c.source,
          "data-seq": c.seq,
        },
        h(
          "div",
          { class: "cx-claim__head" },
          h(
            "button",
            {
              type: "button",
              class: `cx-seq${sel.session === c.source && sel.seq === c.seq ? " cx-seq--selected" : ""}`,
              "data-action": "event",
              title: `select event ${c.seq} of session ${c.source}`,
              onclick: (/** @type {MouseEvent} */ e) => {
                e.stopPropagation();
                selectEvent(c.source, c.seq);
              },
            },
            `seq ${c.seq}`,
          ),
          h("span", { class: "cx-claim__src", title: c.source }, c.short),
          c.title ? h("span", { class: "cx-claim__title", title: c.title }, c.title) : null,
          badge(`ev${c.evidence}`, `E${c.evidence} ${c.evidence_label}`),
          c.origin ? badge(`origin-${c.origin}`, c.origin) : null,
          c.superseded ? badge("superseded", "superseded") : null,
          c.negated ? badge("negated", "negated") : null,
        ),
        h("div", { class: "cx-claim__value" }, h("span", { class: "cx-claim__arrow" }, "="), h("strong", null, c.value)),
        h("blockquote", { class: "cx-quote", "data-part": "quote" }, c.quote),
      ),
    );
    const res = p.resolution;
    const der = p.derivation;
    const ruled = p.status === "ruled";
    put(
      box,
      p.by ? h("div", { class: "cx-note", "data-part": "decided-by" }, `decided by ${p.by}`) : null,
      opinionsOf(p),
      strategiesOf(p.key),
      res && res.rationale ? h("div", { class: "cx-note" }, `${ruled ? "ruling" : "adjudication"} (${res.outcome}): ${res.rationale}`) : null,
      der && der.status === "retracted" ? h("div", { class: "cx-note cx-note--error" }, `retracted — unmet: ${(der.unmet || []).join(", ") || "none named"}${der.reason ? ` (${der.reason})` : ""}`) : null,
      h("ol", { class: "cx-claims" }, ...claims),
    );
  }

  /** The slot's opinions as labelled rows: each value, who holds it, at what evidence.
   * @param {any} p */
  function opinionsOf(p) {
    const ops = Array.isArray(p.opinions) ? p.opinions : [];
    if (!ops.length) return h("div", { class: "cx-note", "data-part": "opinions" }, "No session holds a value for this slot.");
    return h(
      "div",
      { class: "cx-opinions", "data-part": "opinions" },
      h("div", { class: "cx-opinions__title" }, `${ops.length === 1 ? "One value" : `${ops.length} values`} held`),
      ...ops.map((/** @type {any} */ o) =>
        h(
          "div",
          { class: `cx-opinion${o.presented ? " cx-opinion--presented" : ""}`, "data-value": o.value },
          h("span", { class: "cx-opinion__value" }, o.value),
          h(
            "span",
            { class: "cx-opinion__holders" },
            ...o.holders.map((/** @type {any} */ x) => h("span", { class: "cx-opinion__holder", title: `${x.source}${x.title ? ` · ${x.title}` : ""}` }, h("code", null, x.short), " ", badge(`ev${x.evidence}`, `E${x.evidence} ${x.evidence_label}`))),
          ),
        ),
      ),
    );
  }

  /** Each offered strategy's decision of this slot, the current one marked. @param {string} key */
  function strategiesOf(key) {
    if (!compared) return null;
    const i = rows.cols.key.indexOf(key);
    if (i < 0) return null;
    const current = (model.get("summary") || {}).score;
    return h(
      "div",
      { class: "cx-strategies", "data-part": "strategies" },
      h("div", { class: "cx-opinions__title" }, "under each strategy"),
      ...compared.names.map((n) =>
        h(
          "div",
          { class: `cx-strategy${n === current ? " cx-strategy--current" : ""}`, "data-strategy": n },
          h("span", { class: "cx-strategy__name" }, n),
          h("span", { class: "cx-strategy__decision" }, String((compared.decisions[n] || [])[i] || "—")),
        ),
      ),
    );
  }

  /** @param {string} session @param {number} seq */
  function selectEvent(session, seq) {
    channel.request("select_event", { session, seq }).then(
      () => {
        status(`selected seq ${seq} of ${session.slice(0, 8)}`, "ok");
        for (const b of root.querySelectorAll(".cx-seq")) {
          const li = /** @type {HTMLElement} */ (b.closest(".cx-claim"));
          b.classList.toggle("cx-seq--selected", li?.dataset.source === session && Number(li?.dataset.seq) === seq);
        }
      },
      (err) => status(`${err.type}: ${err.message}`, "error"),
    );
  }

  // ---- the block -------------------------------------------------------------------------
  function renderBlock() {
    const b = model.get("_block") || {};
    const kept = b.kept || [];
    const dropped = b.dropped || [];
    put(
      blockHead,
      h("span", { class: "cx-block__name" }, "Packed block"),
      h("span", { class: "cx-block__tokens", "data-part": "block-tokens" }, `${formatTokens(b.tokens || 0)} / ${formatTokens(b.budget || 0)} tokens`),
      b.trust ? badge(`trust-${b.trust}`, b.trust) : null,
    );
    setTokenBar(blockBar, b.tokens || 0, b.budget || 0);
    const notes = [];
    if (b.reason) notes.push(`nothing injected: ${b.reason}`);
    if (b.withheld) notes.push(`${plural(b.withheld, "credential")} withheld by redaction`);
    const refused = (model.get("summary") || {}).refused || [];
    if (refused.length) notes.push(`${plural(refused.length, "ruling")} refused: ${refused.map((/** @type {[string, string]} */ [k, why]) => `${k} (${why})`).join("; ")}`);
    blockNote.textContent = notes.join(" · ");
    blockNote.hidden = !notes.length;
    keptTitle.textContent = `kept (${kept.length})`;
    put(
      keptList,
      ...kept.slice(0, LISTED).map((/** @type {string} */ k) => h("li", { class: "cx-block__item cx-block__item--kept", "data-key": k }, h("button", { type: "button", class: "cx-linkbtn", title: `show this slot: ${k}`, onclick: () => reveal(k) }, k))),
    );
    if (!kept.length) keptList.append(h("li", { class: "cx-empty" }, "nothing"));
    if (kept.length > LISTED) keptList.append(h("li", { class: "cx-note" }, `… ${formatTokens(kept.length - LISTED)} more: filter the table by “in the block”`));
    droppedTitle.textContent = `dropped (${dropped.length})`;
    put(
      droppedList,
      ...dropped.slice(0, LISTED).map((/** @type {[string, string]} */ [k, why]) =>
        h("li", { class: "cx-block__item cx-block__item--dropped", "data-key": k }, h("button", { type: "button", class: "cx-linkbtn", title: `show this slot: ${k}`, onclick: () => reveal(k) }, k), h("span", { class: "cx-block__why" }, why)),
      ),
    );
    if (!dropped.length) droppedList.append(h("li", { class: "cx-empty" }, "nothing"));
    if (dropped.length > LISTED) droppedList.append(h("li", { class: "cx-note", "data-part": "dropped-more" }, `… ${formatTokens(dropped.length - LISTED)} more: filter the table by “left out”`));
    blockText.textContent = b.text || "(empty: nothing is injected)";
  }

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

  // Keys typed in the widget must not reach the notebook ("a", "b", "d d" are commands there).
  root.addEventListener("keydown", (e) => {
    if (e.key === "Tab" || e.key === "Escape" || e.ctrlKey || e.metaKey || e.altKey || e.shiftKey) return;
    e.stopPropagation();
  });

  // ---- sync ----------------------------------------------------------------------------
  function onRows() {
    rows = readRows(model);
    compared = readCompare(model);
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
    ["change:_compare", () => { compared = readCompare(model); renderHeader(); applyFilter(); renderList(); }],
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
