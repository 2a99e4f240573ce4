// @ts-check
/** MemoryGraph's node shapes (one per memory type) and the legend drawn with them. */
import { h, s } from "../base/dom.js";
import { LABELS, TYPES } from "./read.js";

/** The node's shape, centred on (0, 0). @param {string} type @param {boolean} hub */
export function shape(type, hub) {
  if (type === "entity") return s("circle", { class: "cx-mnode__shape", r: hub ? 17 : 14 });
  if (type === "decision") return s("path", { class: "cx-mnode__shape", d: "M0,-13 L13,0 L0,13 L-13,0 Z" });
  if (type === "experience") return s("path", { class: "cx-mnode__shape", d: "M0,-13 L12.5,10 L-12.5,10 Z" });
  if (type === "observation") return s("circle", { class: "cx-mnode__shape", r: 6 });
  return s("rect", { class: "cx-mnode__shape", x: -10, y: -10, width: 20, height: 20, rx: 4 });
}

/** @param {string} t @param {string} [extra] */
function legendShape(t, extra = "") {
  const box = s("svg", { class: `cx-mlegend__swatch cx-mswatch cx-mswatch--${t}${extra ? ` cx-mswatch--${extra}` : ""}`, viewBox: "-16 -16 32 32", width: 16, height: 16, "aria-hidden": "true" });
  box.append(shape(t, false));
  return box;
}
function legendLine() {
  const box = s("svg", { class: "cx-mlegend__line", viewBox: "0 0 28 10", width: 28, height: 10, "aria-hidden": "true" });
  box.append(s("line", { x1: 1, y1: 5, x2: 27, y2: 5 }));
  return box;
}

/** The legend: a swatch per type, the stale decision, a line per edge label. */
export function legend() {
  return h(
    "div",
    { class: "cx-mlegend", "aria-label": "legend" },
    ...TYPES.map((t) => h("span", { class: `cx-mlegend__item cx-mlegend__item--${t}` }, legendShape(t), t)),
    h("span", { class: "cx-mlegend__item cx-mlegend__item--stale" }, legendShape("decision", "stale"), "stale decision"),
    ...LABELS.map((l) => h("span", { class: `cx-mlegend__item cx-mlegend__edge cx-medge--${l}` }, legendLine(), l)),
  );
}
