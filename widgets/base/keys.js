// @ts-check
/** Which keys a widget keeps from the notebook. Pure: tested under node. */

/**
 * @typedef {{shiftPasses?: boolean, typingTakesAll?: boolean}} KeyRule
 * shiftPasses: Shift+key reaches the notebook (Shift+Enter runs the cell) unless typing;
 * typingTakesAll: in a text field every key is text, modified or not ("M" is not merge-cells).
 */

/**
 * Whether a keydown stays in the widget. Tab and Escape always reach the notebook (leaving the
 * widget, command mode), and so do Ctrl / Cmd / Alt chords unless typing takes them.
 * @param {{key: string, ctrlKey?: boolean, metaKey?: boolean, altKey?: boolean, shiftKey?: boolean}} e
 * @param {boolean} typing  the key was typed in a text field
 * @param {KeyRule} [rule]
 */
export function keyStaysInWidget(e, typing, rule = {}) {
  if (e.key === "Tab" || e.key === "Escape") return false;
  if (typing && rule.typingTakesAll) return true;
  if (e.ctrlKey || e.metaKey || e.altKey) return false;
  return !(rule.shiftPasses && e.shiftKey);
}
