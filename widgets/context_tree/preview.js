// @ts-check
/** ContextTree's preview: the composition before and after the draft, and the message diff. */
import { badge, stackedBar } from "../base/components.js";
import { h } from "../base/dom.js";
import { formatTokens, noun } from "../base/format.js";

export function compositionCompare(before, after) {
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

export function diffView(diff) {
  return h(
    "ol",
    { class: "cx-diff" },
    ...diff.map((d) => {
      if (d.op === "=") {
        return h("li", { class: "cx-diff__same" }, `${formatTokens(d.count)} ${noun(d.count, "message")} unchanged`);
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
