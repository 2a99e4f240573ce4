// @ts-check
/**
 * ContextTree's panel: three tabs. Message (the selected row's body, a key node's digest
 * editor), Model view (exactly what the model receives, a page at a time) and Preview (the
 * draft's ops, composition before / after, the diff, and Apply with a confirmation).
 */
import { badge } from "../base/components.js";
import { h } from "../base/dom.js";
import { errorText, formatTokens, noun } from "../base/format.js";
import { messageView, textBlock } from "./message.js";
import { compositionCompare, diffView } from "./preview.js";

const PAGE = 100; // model-view messages per request
const TABS = [
  ["message", "Message"],
  ["model", "Model view"],
  ["preview", "Preview"],
];

/**
 * @param {{
 *   model: any,
 *   uid: string,
 *   channel: ReturnType<typeof import("../base/channel.js").createChannel>,
 *   status: (text: string, kind?: "info" | "error" | "ok") => void,
 *   rows: () => any,
 *   selectedId: () => string | null,
 *   indexOfId: (id: string | null) => number,
 *   bodies: Map<string, any>,
 * }} c
 */
export function createTreePanel(c) {
  const { model, uid, channel, status, bodies } = c;
  let tab = "message";
  const tabs = h("div", { class: "cx-tabs", role: "tablist" });
  const panelBody = h("div", { class: "cx-panel__body", role: "tabpanel", tabindex: "-1" });
  const el = h("div", { class: "cx-panel" }, tabs, panelBody);
  /** @type {Record<string, HTMLElement>} */
  const tabButtons = {};
  for (const [key, label] of TABS) {
    const b = h("button", { type: "button", class: "cx-tab", role: "tab", id: `${uid}-tab-${key}`, "data-tab": key, onclick: () => showTab(key) }, label);
    tabButtons[key] = b;
    tabs.append(b);
  }
  tabs.addEventListener("keydown", (e) => {
    const keys = TABS.map((t) => t[0]);
    const at = keys.indexOf(tab);
    if (e.key === "ArrowRight" || e.key === "ArrowLeft") {
      e.preventDefault();
      showTab(keys[(at + (e.key === "ArrowRight" ? 1 : keys.length - 1)) % keys.length], true);
    }
  });
  let lastPreview = /** @type {any} */ (null);
  let applying = false;

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

  function loading(text = "loading…") {
    panelBody.replaceChildren(h("div", { class: "cx-muted" }, text));
  }

  function failure(err) {
    panelBody.replaceChildren(h("div", { class: "cx-error" }, errorText(err)));
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
    const i = c.indexOfId(c.selectedId());
    if (i < 0) {
      panelBody.replaceChildren(h("div", { class: "cx-muted" }, "Select a row to read its message (click, or move with the arrow keys)."));
      return;
    }
    const id = c.rows().id[i];
    let b = bodies.get(id);
    if (!b) {
      loading();
      try {
        b = await channel.request("body", { row: id });
      } catch (err) {
        if (c.selectedId() === id && tab === "message") failure(err);
        return;
      }
      bodies.set(id, b);
    }
    if (c.selectedId() !== id || tab !== "message") return;
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
    if (b.covers) content.push(h("div", { class: "cx-note" }, `Stands for ${b.covers} ${noun(b.covers, "event")} (${formatTokens(b.covers_tokens)} tokens) that stay in the log: expand the row to see them.`));
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
        h("span", { class: "cx-muted" }, `${p.ops.length} ${noun(p.ops.length, "op")} · ${formatTokens(p.messages_before)} → ${formatTokens(p.messages_after)} messages`),
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
        h("p", null, `Append ${p.ops.length} replace ${noun(p.ops.length, "op")} ${where}? They are written as one batch under the log's lease; the events they replace stay in the log and can be expanded again.`),
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
        ? `Applied: ${r.appended} ${noun(r.appended, "event")} appended; the log now has ${formatTokens(r.events_after)} events (was ${formatTokens(r.events_before)}) · ${r.path}`
        : `Applied in memory: ${r.appended} ${noun(r.appended, "event")} pending (the session has no file); ${formatTokens(r.events_after)} events`;
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

  return {
    el,
    showTab,
    showMessage,
    showModel,
    renderPreview,
    get tab() { return tab; },
    get lastPreview() { return lastPreview; },
    get applying() { return applying; },
  };
}
