// @ts-check
/**
 * Small DOM components shared by the ctxsdk widgets: an element helper, token numbers and
 * bars, kind badges, the three-state mode switch and a stacked (composition) bar.
 * Class names are prefixed `cx-`; colours come from theme.css.
 */

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

const NUMBER = new Intl.NumberFormat("en-US");

/** @param {number | null | undefined} n  1234 -> "1,234" */
export function formatTokens(n) {
  return n == null ? "–" : NUMBER.format(n);
}

/** @param {number} n  1234 -> "1.2k", 1234567 -> "1.2M" */
export function formatShort(n) {
  if (Math.abs(n) >= 1e6) return `${(n / 1e6).toFixed(n % 1e6 === 0 ? 0 : 1)}M`;
  if (Math.abs(n) >= 1e4) return `${Math.round(n / 1e3)}k`;
  if (Math.abs(n) >= 1e3) return `${(n / 1e3).toFixed(1)}k`;
  return String(n);
}

/** @param {number} part @param {number} whole */
export function percent(part, whole) {
  if (!whole) return "0%";
  const p = (100 * part) / whole;
  return p > 0 && p < 0.1 ? "<0.1%" : `${p < 10 ? p.toFixed(1) : Math.round(p)}%`;
}

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
