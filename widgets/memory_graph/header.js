// @ts-check
/**
 * MemoryGraph's header and session map: the memory's figures (drawn / total per type, edges,
 * stale), what max_nodes left out, a note when nothing is linked, and a row of boxes per
 * session (checkpoints, tail, fork), each opening in the panel.
 */
import { h, put } from "../base/dom.js";
import { formatTokens } from "../base/format.js";
import { stat } from "../base/panel.js";
import { TYPES } from "./read.js";

/**
 * @param {{
 *   model: any,
 *   titleEl: HTMLElement,
 *   figures: HTMLElement,
 *   hiddenNote: HTMLElement,
 *   graphNote: HTMLElement,
 *   obsBox: HTMLInputElement,
 *   mapBox: HTMLElement,
 *   selected: () => string | null,
 *   open: (id: string) => void,
 * }} c
 */
export function createHeader(c) {
  const { model, titleEl, figures, hiddenNote, graphNote, obsBox, mapBox, open } = c;

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

  function renderMap() {
    const rows = /** @type {any[]} */ (model.get("session_map") || []);
    mapBox.hidden = rows.length === 0;
    const chip = (/** @type {any} */ b) =>
      h(
        "button",
        { type: "button", class: `cx-smap__box cx-smap__box--${b.kind}${b.id === c.selected() ? " cx-smap__box--selected" : ""}`, "data-id": b.id, "data-kind": b.kind, title: b.text || b.name, onclick: () => open(b.id) },
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

  return { renderHeader, renderMap };
}
