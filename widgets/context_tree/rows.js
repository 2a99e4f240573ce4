// @ts-check
/** ContextTree's rows: one DOM row, made once and reused by the virtualizer for any visible row. */
import { badge, modeSwitch, setBadge, setModeSwitch, setTokenBar, tokenBar } from "../base/components.js";
import { h } from "../base/dom.js";
import { formatTokens } from "../base/format.js";
import { FLAG, barKind, modeAt } from "./skeleton.js";

const INDENT = 14;

/**
 * @param {{
 *   uid: string,
 *   rows: () => any,
 *   visible: () => Int32Array,
 *   expanded: () => Uint8Array,
 *   modes: () => string,
 *   scale: () => Record<string, number>,
 *   cursor: () => number,
 *   selectedId: () => string | null,
 *   pending: Set<string>,
 *   setMode: (i: number, mode: string) => void,
 * }} c
 */
export function createRows(c) {
  const { uid } = c;

  function createRow() {
    const row = h("div", { class: "cx-row", role: "treeitem" });
    const indent = h("span", { class: "cx-row__indent" });
    const caret = h("span", { class: "cx-caret", "aria-hidden": "true" });
    const kind = badge("user");
    const gist = h("span", { class: "cx-row__gist" });
    const seq = h("span", { class: "cx-row__seq" });
    const bar = tokenBar();
    const tokens = h("span", { class: "cx-row__tokens" });
    const sw = modeSwitch((mode) => c.setMode(Number(row.dataset.i), mode));
    row.append(indent, caret, kind, gist, seq, bar, tokens, sw);
    return row;
  }

  /** @param {HTMLElement} row @param {number} vi */
  function updateRow(row, vi) {
    const rows = c.rows(), expanded = c.expanded(), selectedId = c.selectedId();
    const i = c.visible()[vi];
    const [indent, caret, kind, gist, seq, bar, tokens, sw] = /** @type {HTMLElement[]} */ (
      Array.from(row.children)
    );
    const flags = rows.flags[i];
    const k = rows.kind[i];
    const hasKids = rows.end[i] > i + 1;
    const { mode, drafted } = modeAt(c.modes(), i);
    row.dataset.i = String(i);
    row.id = `${uid}-r${i}`;
    row.setAttribute("aria-level", String(rows.depth[i] + 1));
    if (hasKids) row.setAttribute("aria-expanded", expanded[i] ? "true" : "false");
    else row.removeAttribute("aria-expanded");
    row.setAttribute("aria-selected", rows.id[i] === selectedId ? "true" : "false");
    row.className =
      "cx-row" +
      (vi === c.cursor() ? " cx-row--cursor" : "") +
      (rows.id[i] === selectedId ? " cx-row--selected" : "") +
      (flags & FLAG.shadowed ? " cx-row--shadowed" : "") +
      (flags & FLAG.region ? " cx-row--region" : "") +
      (flags & FLAG.failed ? " cx-row--failed" : "") +
      (drafted ? " cx-row--drafted" : "") +
      ` cx-row--${k} cx-row--mode-${mode}`;
    indent.style.width = `${rows.depth[i] * INDENT}px`;
    caret.textContent = hasKids ? (expanded[i] ? "▾" : "▸") : "";
    const shownKind = flags & FLAG.failed && k === "tool" ? "failed" : k;
    setBadge(kind, shownKind === "failed" ? "failed" : k, k === "turn" || k === "step" ? rows.label[i] : k);
    kind.title = flags & FLAG.shadowed ? `${k}: in the log, not sent to the model` : k;
    gist.textContent = rows.gist[i] || (k === "turn" || k === "step" ? "" : "(empty)");
    gist.title = rows.gist[i] || "";
    const s = rows.seq[i];
    seq.textContent = s < 0 ? "" : flags & FLAG.shadowed ? `(${s})` : String(s);
    setTokenBar(bar, rows.tokens[i], c.scale()[barKind(k)]);
    tokens.textContent = flags & FLAG.shadowed ? "–" : formatTokens(rows.tokens[i]);
    const why =
      flags & FLAG.fixed
        ? k === "subagent"
          ? "a subagent session: its messages are not on this session's surface"
          : "not a surface node: it cannot be collapsed"
        : null;
    setModeSwitch(sw, mode, { disabled: why, pending: c.pending.has(rows.id[i]) });
    sw.setAttribute("aria-label", `mode of ${rows.label[i]}${drafted ? " (drafted)" : ""}`);
  }

  return { createRow, updateRow };
}
