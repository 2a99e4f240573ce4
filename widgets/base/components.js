// @ts-check
/**
 * Small DOM components shared by the ctxsdk widgets: token bars, kind badges, the three-state
 * mode switch and a stacked (composition) bar with its legend.
 * Class names are prefixed `cx-`; colours come from theme.css.
 */

import { h } from "./dom.js";
import { formatTokens, percent } from "./format.js";

/** A thin horizontal bar whose fill is `value / max`. */
export function tokenBar() {
  return h("span", { class: "cx-tokenbar", "aria-hidden": "true" }, h("span", { class: "cx-tokenbar__fill" }));
}

/** @param {HTMLElement} bar @param {number} value @param {number} max */
export function setTokenBar(bar, value, max) {
  const fill = /** @type {HTMLElement} */ (bar.firstChild);
  const share = max > 0 ? Math.min(1, value / max) : 0;
  fill.style.width = `${(share * 100).toFixed(1)}%`;
}

/** @param {string} kind @param {string} [text] */
export function badge(kind, text) {
  return h("span", { class: `cx-badge cx-badge--${kind}` }, text ?? kind);
}

/** @param {HTMLElement} el @param {string} kind @param {string} [text] */
export function setBadge(el, kind, text) {
  el.className = `cx-badge cx-badge--${kind}`;
  el.textContent = text ?? kind;
}

export const MODES = /** @type {const} */ (["full", "key", "off"]);
const MODE_KEYS = { full: "f", key: "k", off: "o" };

/**
 * The three-state full / key / off switch. Its buttons are not tab stops: the row that owns
 * it takes `f`, `k` and `o` from the keyboard.
 * @param {(mode: string) => void} onSelect
 */
export function modeSwitch(onSelect) {
  const group = h("span", { class: "cx-mode", role: "radiogroup", "aria-label": "mode" });
  for (const mode of MODES) {
    group.append(
      h(
        "button",
        {
          type: "button",
          class: `cx-mode__btn cx-mode__btn--${mode}`,
          role: "radio",
          tabindex: "-1",
          "data-mode": mode,
          title: `${mode} (${MODE_KEYS[mode]})`,
          onclick: (/** @type {MouseEvent} */ e) => {
            e.stopPropagation();
            if (!group.hasAttribute("data-disabled")) onSelect(mode);
          },
        },
        mode,
      ),
    );
  }
  return group;
}

/**
 * @param {HTMLElement} group
 * @param {string} mode  full | key | off | mixed
 * @param {{disabled?: string | null, pending?: boolean}} [state]  disabled: why (a tooltip)
 */
export function setModeSwitch(group, mode, state = {}) {
  group.dataset.mode = mode;
  if (state.disabled) {
    group.setAttribute("data-disabled", "");
    group.title = state.disabled;
  } else {
    group.removeAttribute("data-disabled");
    if (mode === "mixed") group.title = "mixed: the nodes under this row have different modes";
    else group.removeAttribute("title");
  }
  group.classList.toggle("cx-pending", Boolean(state.pending));
  for (const btn of group.children) {
    const on = /** @type {HTMLElement} */ (btn).dataset.mode === mode;
    btn.setAttribute("aria-checked", on ? "true" : "false");
    if (state.disabled) btn.setAttribute("disabled", "");
    else btn.removeAttribute("disabled");
  }
}

/**
 * A stacked bar: segments `{key, label, value}` over `total`, with optional markers
 * `{at, label}` (a vertical line at `at / total`).
 * @param {{key: string, label: string, value: number}[]} segments
 * @param {number} total
 * @param {{at: number, label: string}[]} [markers]
 * @param {string} [label]  the bar's accessible name
 */
export function stackedBar(segments, total, markers = [], label = "") {
  const bar = h("div", { class: "cx-stack", role: "img", "aria-label": label });
  for (const s of segments) {
    if (s.value <= 0) continue;
    bar.append(
      h("span", {
        class: `cx-stack__seg cx-seg--${s.key}`,
        style: { width: `${((100 * s.value) / total).toFixed(3)}%` },
        title: `${s.label}: ${formatTokens(s.value)} tokens (${percent(s.value, total)})`,
      }),
    );
  }
  for (const m of markers) {
    bar.append(
      h("span", {
        class: "cx-stack__marker",
        style: { left: `${Math.min(100, (100 * m.at) / total).toFixed(3)}%` },
        title: m.label,
      }),
    );
  }
  return bar;
}

/**
 * The legend of a stacked bar: a swatch, the label and the number of each segment.
 * @param {{key: string, label: string, value: number}[]} segments
 * @param {number} total
 */
export function legend(segments, total) {
  return h(
    "ul",
    { class: "cx-legend" },
    ...segments.map((s) =>
      h(
        "li",
        { class: s.value > 0 ? "" : "cx-legend--zero" },
        h("span", { class: `cx-swatch cx-seg--${s.key}`, "aria-hidden": "true" }),
        h("span", { class: "cx-legend__label" }, s.label),
        h("span", { class: "cx-legend__value" }, formatTokens(s.value)),
        h("span", { class: "cx-legend__share" }, percent(s.value, total)),
      ),
    ),
  );
}
