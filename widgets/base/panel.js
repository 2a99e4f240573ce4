// @ts-check
/**
 * The parts every widget has: the status line, header figures (`stat`), key / value rows, a
 * side panel that shows one thing at a time (loading, an error, an empty note), the buttons of
 * a header, and the rule that keys typed in a widget stay out of the notebook.
 */
import { h, put } from "./dom.js";
import { errorText } from "./format.js";
import { keyStaysInWidget } from "./keys.js";

/**
 * The status line under a widget: `show(text, kind)` replaces what it says.
 * @returns {{el: HTMLElement, show: (text: string, kind?: "info" | "error" | "ok") => void}}
 */
export function createStatus() {
  const el = h("div", { class: "cx-status", role: "status", "aria-live": "polite" });
  return {
    el,
    show(text, kind = "info") {
      el.textContent = text;
      el.dataset.kind = kind;
    },
  };
}

/**
 * One figure of a header: a small upper-case label and its value.
 * @param {string} name  its data-stat @param {string} label @param {string} value
 * @param {string} [hint]  a tooltip @param {Record<string, any>} [extra]  more attributes
 */
export function stat(name, label, value, hint = "", extra = {}) {
  return h(
    "span",
    { class: "cx-stat", "data-stat": name, title: hint || null, ...extra },
    h("span", { class: "cx-stat__label" }, label),
    h("span", { class: "cx-stat__value" }, value),
  );
}

/** A key / value row of a `.cx-kv` grid. @param {string} k @param {any} v */
export function kvRow(k, v) {
  return h("div", { class: "cx-kv__row", "data-k": k }, h("span", { class: "cx-kv__k" }, k), h("span", { class: "cx-kv__v" }, v));
}

/**
 * A header button. @param {string} label @param {() => void} onclick
 * @param {Record<string, any>} [extra]
 */
export function button(label, onclick, extra = {}) {
  return h("button", { type: "button", class: "cx-btn", onclick, ...extra }, label);
}

/**
 * The side panel: a scrolling box whose body shows one thing at a time.
 * @param {Record<string, any>} [bodyProps]  attributes of the body
 * @param {...HTMLElement} before  elements above the body (a search's hits)
 */
export function createPanel(bodyProps = {}, ...before) {
  const body = h("div", { class: "cx-panel__body", ...bodyProps });
  const el = h("div", { class: "cx-panel", role: "region", "aria-label": "details" }, ...before, body);
  return {
    el,
    body,
    /** @param {...(Node | string | null | undefined | false)} kids */
    show: (...kids) => put(body, ...kids),
    /** @param {string} [text] */
    loading: (text = "loading…") => put(body, h("div", { class: "cx-loading" }, text)),
    /** @param {any} err @param {Record<string, any>} [attrs] */
    error: (err, attrs = {}) => put(body, h("div", { class: "cx-note cx-note--error", ...attrs }, errorText(err))),
    /** @param {string} text */
    empty: (text) => put(body, h("div", { class: "cx-empty" }, text)),
  };
}

/**
 * Keep the keys typed in `root` from the notebook, where "a", "0" or "-" are commands.
 * @param {HTMLElement} root @param {import("./keys.js").KeyRule} [rule]
 */
export function keepKeys(root, rule = {}) {
  root.addEventListener("keydown", (e) => {
    const typing = e.target instanceof HTMLTextAreaElement || e.target instanceof HTMLInputElement;
    if (keyStaysInWidget(e, typing, rule)) e.stopPropagation();
  });
}

/**
 * Size `els` to the model's `height` trait (at least `min`, `fallback` when unset).
 * @param {any} model @param {number} min @param {number} fallback @param {...HTMLElement} els
 */
export function fitHeight(model, min, fallback, ...els) {
  const px = Math.max(min, Number(model.get("height")) || fallback);
  for (const el of els) el.style.height = `${px}px`;
  return px;
}
