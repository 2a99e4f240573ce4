// @ts-check
/** ContextTree's header: the session's title, its figures (visible, nodes, regions, folded, saved, the draft) and the context window's composition. */
import { legend, stackedBar } from "../base/components.js";
import { h } from "../base/dom.js";
import { formatTokens, noun, percent } from "../base/format.js";
import { stat } from "../base/panel.js";

/** @param {any} model @param {HTMLElement} title */
export function renderTitle(model, title) {
  const t = model.get("title") || {};
  title.replaceChildren(
    h("span", { class: "cx-title__name" }, t.name || "session"),
    h("span", { class: "cx-title__meta" }, [t.id, t.version != null ? `v${t.version}` : null, t.tokenizer].filter(Boolean).join(" · ")),
  );
}


/** @param {any} model @param {HTMLElement} stats @param {HTMLElement} actions */
export function renderStats(model, stats, actions) {
  const s = model.get("stats") || {};
  const items = [
    stat("visible", "visible", formatTokens(s.visible), "tokens of the messages the model receives now (the context window's 'used' adds the tool schemas)"),
    stat("nodes", "nodes", formatTokens(s.nodes), "messages on the surface"),
    stat("regions", "regions", formatTokens(s.regions), "replacements on the surface (collapses, compactions, prunes)"),
    stat("folded", "folded", formatTokens(s.folded), "tokens the replacements cost now"),
    stat("original", "original", formatTokens(s.original), "tokens of the events the replacements cover"),
    stat("saved", "saved", formatTokens(s.saved), "original − folded"),
  ];
  if (s.drafted) {
    const delta = s.after == null ? "" : ` (${s.after - s.visible >= 0 ? "+" : "−"}${formatTokens(Math.abs(s.after - s.visible))})`;
    items.push(
      stat("draft", "draft", `${formatTokens(s.drafted)} ${noun(s.drafted, "node")} → ${formatTokens(s.after)}${delta}`, s.persisted ? `saved in ${s.drafts_path}` : "not saved: pass drafts=DraftStore(...) to keep it across kernel restarts", { class: "cx-stat cx-stat--draft" }),
    );
  } else {
    items.push(stat("draft", "draft", "none"));
  }
  stats.replaceChildren(...items);
  const reset = actions.querySelector('[data-action="reset"]');
  if (reset) /** @type {HTMLButtonElement} */ (reset).disabled = !s.drafted;
}

/** @param {any} model @param {HTMLElement} comp */
export function renderComposition(model, comp) {
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
