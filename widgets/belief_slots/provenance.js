// @ts-check
/**
 * A slot's provenance, as BeliefSlots shows it under an expanded row: what decided it, the
 * values held and by whom, each strategy's decision when comparing, the adjudication or
 * retraction, and every claim with its source, evidence, quote and a clickable event seq.
 */
import { badge } from "../base/components.js";
import { h, put } from "../base/dom.js";

/**
 * @param {{
 *   model: any,
 *   root: HTMLElement,
 *   channel: ReturnType<typeof import("../base/channel.js").createChannel>,
 *   status: (text: string, kind?: "info" | "error" | "ok") => void,
 *   rows: () => import("./rows.js").Rows,
 *   compared: () => import("./rows.js").Compare | null,
 * }} c
 */
export function createProvenance(c) {
  const { model, root, channel, status } = c;

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
    const compared = c.compared();
    if (!compared) return null;
    const i = c.rows().cols.key.indexOf(key);
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

  /** The provenance box of `key`, from `provenance` or asked for. @param {string} key @param {Map<string, any>} provenance */
  function provenanceEl(key, provenance) {
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

  return { provenanceEl };
}
