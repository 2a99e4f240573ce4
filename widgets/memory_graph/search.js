// @ts-check
/**
 * MemoryGraph's search: `memory.find` in the kernel, its hits listed above the panel (name,
 * type, score, the snippet with the query's words marked) and marked in the graph with the
 * path between them.
 */
import { badge } from "../base/components.js";
import { h, put } from "../base/dom.js";
import { noun } from "../base/format.js";
import { button } from "../base/panel.js";

/**
 * @param {{
 *   channel: ReturnType<typeof import("../base/channel.js").createChannel>,
 *   query: HTMLInputElement,
 *   hitsBox: HTMLElement,
 *   status: (text: string, kind?: "info" | "error" | "ok") => void,
 *   restyle: () => void,
 *   open: (id: string) => void,
 * }} c
 */
export function createSearch(c) {
  const { channel, query, hitsBox, status, restyle, open } = c;
  /** @type {import("./labels.js").Search | null} */
  let search = null;
  let lastHits = /** @type {any[]} */ ([]);

  let asked = 0;
  function runSearch() {
    const q = query.value.trim();
    const mine = ++asked;
    status(q ? `finding “${q}”…` : "search cleared");
    channel.request("search", { query: q }).then(
      (r) => {
        if (mine !== asked) return;
        if (!q) {
          search = null;
          lastHits = [];
          renderHits();
          restyle();
          return;
        }
        search = { hits: new Set(r.hits.map((/** @type {any} */ x) => x.id)), ends: new Set(r.nodes), edges: new Set(r.edges.map((/** @type {string[]} */ e) => e.join("|"))) };
        lastHits = r.hits;
        renderHits();
        restyle();
        status(`${r.hits.length} ${noun(r.hits.length, "hit")} for “${r.query}”, ${r.edges.length} path ${noun(r.edges.length, "edge")}`, "ok");
      },
      (err) => { if (mine === asked) status(`${err.type}: ${err.message}`, "error"); },
    );
  }
  query.addEventListener("search", () => { if (!query.value) runSearch(); });

  function renderHits() {
    if (!search) { put(hitsBox); hitsBox.hidden = true; return; }
    hitsBox.hidden = false;
    put(
      hitsBox,
      h("div", { class: "cx-hits__head" }, h("span", null, `${lastHits.length} ${noun(lastHits.length, "hit")}`), button("clear", () => { query.value = ""; runSearch(); }, { class: "cx-linkbtn", "data-action": "clear-search" })),
      lastHits.length
        ? h(
            "ol",
            { class: "cx-hits__list" },
            ...lastHits.map((x) =>
              h(
                "li",
                { class: "cx-hit", "data-id": x.id },
                h("button", { type: "button", class: "cx-linkbtn cx-hit__name", title: x.text, onclick: () => open(x.id) }, x.name),
                badge(`mt-${x.type}`, x.type),
                x.stale ? badge("failed", "stale") : null,
                h("span", { class: "cx-hit__score", title: `found by ${x.via}` }, `${x.score.toFixed(2)} · ${x.via}`),
                snippetOf(x),
              ),
            ),
          )
        : h("div", { class: "cx-empty" }, "No memory matches."),
    );
  }

  /** A hit's snippet: the matching text with the query's words marked. @param {any} x */
  function snippetOf(x) {
    const parts = Array.isArray(x.snippet) && x.snippet.length ? x.snippet : x.text ? [[x.text, false]] : [];
    if (!parts.length) return null;
    return h("div", { class: "cx-hit__snippet", "data-part": "snippet" }, ...parts.map((/** @type {[string, boolean]} */ [t, on]) => (on ? h("mark", null, t) : t)));
  }

  return { run: runSearch, renderHits, get current() { return search; } };
}
