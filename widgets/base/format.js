// @ts-check
/** Numbers and words as the widgets print them. Pure: no DOM, tested under node. */

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

/** @param {number} n @param {string} word  (3, "source") -> "3 sources", (1, "claim") -> "1 claim" */
export function plural(n, word) {
  return `${formatTokens(n)} ${word}${n === 1 ? "" : "s"}`;
}

/** `word` with an "s" unless `n` is 1: (2, "hit") -> "hits". @param {number} n @param {string} word */
export function noun(n, word) {
  return `${word}${n === 1 ? "" : "s"}`;
}

/**
 * What the status line says about a failed request: the kernel's exception type and message.
 * @param {any} err
 */
export function errorText(err) {
  return err && err.type ? `${err.type}: ${err.message}` : String(err && err.message ? err.message : err);
}
