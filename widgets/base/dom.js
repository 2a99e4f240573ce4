// @ts-check
/**
 * Building DOM: `h` for HTML elements, `s` for SVG elements, `put` to replace an element's
 * children. The only module that calls document.createElement*.
 */

export const SVG_NS = "http://www.w3.org/2000/svg";

/**
 * `h("div", {class: "cx-x", title: "t", onclick: fn}, child, "text", ...)`
 * @param {string} tag
 * @param {Record<string, any> | null} [props]
 * @param {...(Node | string | number | null | undefined | false)} children
 * @returns {HTMLElement}
 */
export function h(tag, props, ...children) {
  const el = document.createElement(tag);
  if (props) {
    for (const [k, v] of Object.entries(props)) {
      if (v == null || v === false) continue;
      if (k === "class") el.className = String(v);
      else if (k === "text") el.textContent = String(v);
      else if (k === "style" && typeof v === "object") Object.assign(el.style, v);
      else if (k.startsWith("on") && typeof v === "function") el.addEventListener(k.slice(2), v);
      else el.setAttribute(k, v === true ? "" : String(v));
    }
  }
  for (const c of children) {
    if (c == null || c === false) continue;
    el.append(typeof c === "string" || typeof c === "number" ? String(c) : c);
  }
  return el;
}

/**
 * An SVG element with attributes (null values are left out).
 * @param {string} tag @param {Record<string, any>} [attrs]
 * @returns {SVGElement}
 */
export function s(tag, attrs = {}) {
  const el = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) if (v != null) el.setAttribute(k, String(v));
  return el;
}

/**
 * `el.replaceChildren(...)` without the null / false children (which it would print).
 * @param {Element} el @param {...(Node | string | null | undefined | false)} kids
 */
export function put(el, ...kids) {
  el.replaceChildren(.../** @type {(Node | string)[]} */ (kids.filter((k) => k != null && k !== false)));
}
