// The words and numbers the widgets print, and which keys stay in a widget.
import assert from "node:assert/strict";
import { test } from "node:test";
import { errorText, formatShort, formatTokens, noun, percent, plural } from "../../widgets/base/format.js";
import { keyStaysInWidget } from "../../widgets/base/keys.js";

test("token counts are grouped; a missing count is a dash", () => {
  assert.equal(formatTokens(1234567), "1,234,567");
  assert.equal(formatTokens(0), "0");
  assert.equal(formatTokens(null), "–");
  assert.equal(formatTokens(undefined), "–");
});

test("short numbers round to k and M", () => {
  assert.deepEqual([999, 1234, 12345, 2000000, 2500000].map(formatShort), ["999", "1.2k", "12k", "2M", "2.5M"]);
});

test("a share is a percent with a decimal below ten, never a false zero", () => {
  assert.equal(percent(1, 3), "33%");
  assert.equal(percent(1, 30), "3.3%");
  assert.equal(percent(1, 10000), "<0.1%");
  assert.equal(percent(0, 10), "0.0%");
  assert.equal(percent(5, 0), "0%");
});

test("plural and noun agree with the count", () => {
  assert.equal(plural(1, "claim"), "1 claim");
  assert.equal(plural(2500, "source"), "2,500 sources");
  assert.equal(plural(0, "hit"), "0 hits");
  assert.equal(noun(1, "edge"), "edge");
  assert.equal(noun(3, "edge"), "edges");
});

test("a failed request reads as the kernel's exception type and message", () => {
  assert.equal(errorText({ type: "NotFound", message: "no node n1" }), "NotFound: no node n1");
  assert.equal(errorText(new Error("boom")), "boom");
  assert.equal(errorText("plain"), "plain");
});

test("Tab, Escape and chords reach the notebook; letters stay in the widget", () => {
  const key = (k, mods = {}) => ({ key: k, ...mods });
  for (const rule of [{}, { shiftPasses: true }, { shiftPasses: true, typingTakesAll: true }]) {
    assert.equal(keyStaysInWidget(key("Tab"), false, rule), false);
    assert.equal(keyStaysInWidget(key("Escape"), true, rule), false);
    assert.equal(keyStaysInWidget(key("a"), false, rule), true);
    assert.equal(keyStaysInWidget(key("c", { ctrlKey: true }), false, rule), false);
  }
  // the graphs keep Shift+arrows (they pan); the tree and the slots let Shift+Enter run the cell
  assert.equal(keyStaysInWidget(key("Enter", { shiftKey: true }), false, {}), true);
  assert.equal(keyStaysInWidget(key("Enter", { shiftKey: true }), false, { shiftPasses: true }), false);
  // in a text field of the tree every key is text, chords too ("M" is not merge-cells)
  const typing = { shiftPasses: true, typingTakesAll: true };
  assert.equal(keyStaysInWidget(key("M", { shiftKey: true }), true, typing), true);
  assert.equal(keyStaysInWidget(key("v", { ctrlKey: true }), true, typing), true);
  assert.equal(keyStaysInWidget(key("v", { ctrlKey: true }), true, { shiftPasses: true }), false);
});
