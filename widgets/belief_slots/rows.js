// @ts-check
/** BeliefSlots' rows: the synced columns, the comparison, the filters. Pure: tested under node. */

export const FLAG = { kept: 1, dropped: 2, superseded: 4, negated: 8 };
export const COLUMNS = ["key", "type", "value", "status", "detail", "evidence", "trust", "sources", "claims", "flags", "why", "pos", "by"];
export const STATUSES = ["resolved", "disputed", "adjudicated", "ruled", "retracted", "empty"];
export const TRUST = ["untrusted", "external", "trusted"];
export const EVIDENCE = { 1: "speculative", 2: "inferred", 3: "tool-verified", 4: "user-stated" };

/** @param {any} raw  the `_rows` trait */
export function readRows(raw) {
  const r = raw || {};
  for (const c of COLUMNS) if (!Array.isArray(r[c])) r[c] = [];
  return { cols: r, n: r.key.length };
}

/** @typedef {ReturnType<typeof readRows>} Rows */
/** @typedef {{names: string[], decisions: Record<string, string[]>, differs: boolean[]}} Compare */

/** Every offered strategy's decision per row, or null when not comparing. @param {any} raw  the `_compare` trait @returns {Compare | null} */
export function readCompare(raw) {
  const c = raw || {};
  if (!Array.isArray(c.names) || !c.names.length) return null;
  return { names: /** @type {string[]} */ (c.names), decisions: c.decisions || {}, differs: Array.isArray(c.differs) ? c.differs : [] };
}

/**
 * The rows that pass the filters, in order: `status` is a slot status, "all", "kept" (in the
 * block), "dropped" (left out) or "differs" (the strategies disagree); `text` matches the key
 * or the value, case-insensitively.
 * @param {Rows} rows @param {Compare | null} compared @param {string} text @param {string} status
 */
export function filterRows(rows, compared, text, status) {
  const c = rows.cols;
  const q = text.trim().toLowerCase();
  /** @type {number[]} */
  const shown = [];
  for (let i = 0; i < rows.n; i++) {
    if (status === "differs") {
      if (!compared || !compared.differs[i]) continue;
    } else if (status === "kept" ? !(c.flags[i] & FLAG.kept) : status === "dropped" ? !(c.flags[i] & FLAG.dropped) : status !== "all" && c.status[i] !== status) continue;
    if (q && !String(c.key[i]).toLowerCase().includes(q) && !String(c.value[i]).toLowerCase().includes(q)) continue;
    shown.push(i);
  }
  return shown;
}

/** The last page of `count` rows, `size` a page (0 when empty). @param {number} count @param {number} size */
export function lastPage(count, size) {
  return Math.max(0, Math.ceil(count / size) - 1);
}
