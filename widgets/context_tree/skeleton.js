// @ts-check
/**
 * ContextTree's skeleton: the synced rows (pre-order, `end` one past a row's subtree), which
 * rows are open, which are visible, each row's mode. Pure: tested under node.
 */

export const FLAG = { failed: 1, shadowed: 2, region: 4, subagent: 8, fixed: 16 };
export const MODE_OF = /** @type {Record<string, string>} */ ({ f: "full", k: "key", o: "off", m: "mixed" });
export const KEY_MODE = /** @type {Record<string, string>} */ ({ f: "full", k: "key", o: "off" });
const COLUMNS = ["id", "parent", "end", "depth", "kind", "label", "gist", "seq", "tokens", "flags", "tool"];

/** @param {any} raw  the `_rows` trait @returns {any} */
export function readRows(raw) {
  const r = raw || {};
  for (const c of COLUMNS) if (!Array.isArray(r[c])) r[c] = [];
  return r;
}

/**
 * Which rows are open: the user's choice where there is one, else open unless a folded region
 * or shadowed. @param {any} rows @param {Map<string, boolean>} toggled
 */
export function openRows(rows, toggled) {
  const n = rows.id.length;
  const expanded = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    const t = toggled.get(rows.id[i]);
    expanded[i] = (t === undefined ? (rows.flags[i] & (FLAG.region | FLAG.shadowed)) === 0 : t) ? 1 : 0;
  }
  return expanded;
}

/** The kind of token bar a row has: turns, steps and leaves are scaled apart. @param {string} kind */
export const barKind = (kind) => (kind === "turn" ? "turn" : kind === "step" ? "step" : "leaf");

/** The largest tokens of each bar kind (at least 1). @param {any} rows */
export function tokenScale(rows) {
  const scale = /** @type {Record<string, number>} */ ({ turn: 1, step: 1, leaf: 1 });
  for (let i = 0; i < rows.id.length; i++) {
    const key = barKind(rows.kind[i]);
    if (rows.tokens[i] > scale[key]) scale[key] = rows.tokens[i];
  }
  return scale;
}

/** The rows shown, in order: a closed row hides its subtree. @param {any} rows @param {Uint8Array} expanded */
export function visibleRows(rows, expanded) {
  const n = rows.id.length;
  const out = new Int32Array(n);
  let k = 0;
  for (let i = 0; i < n; ) {
    out[k++] = i;
    i = rows.end[i] > i + 1 && !expanded[i] ? rows.end[i] : i + 1;
  }
  return out.subarray(0, k);
}

/** Row `i`'s mode and whether it is drafted (upper case). @param {string} modes @param {number} i */
export function modeAt(modes, i) {
  const c = modes[i] || "f";
  return { mode: MODE_OF[c.toLowerCase()] || "full", drafted: c !== c.toLowerCase() };
}
