// The build's CSS blocks: declarations written once, put in every rule that uses them.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { expandBlocks } from "../../scripts/css_blocks.mjs";

test("a defined block is removed and put in each place that uses it", () => {
  const css = "/* @define dark\n  --a: #000;\n  color-scheme: dark;\n@end */\n.x { /* @use dark */ }\n@media (p) { .y { /* @use dark */ } }\n";
  assert.equal(expandBlocks(css, "t.css"), ".x { --a: #000;\n  color-scheme: dark; }\n@media (p) { .y { --a: #000;\n  color-scheme: dark; } }\n");
});

test("using a block that was never defined names the file", () => {
  assert.throws(() => expandBlocks(".x { /* @use light */ }", "base/t.css"), /base\/t\.css: @use light without an @define light/);
});

test("the theme's dark palette serves both dark rules", () => {
  const url = new URL("../../widgets/base/theme.css", import.meta.url);
  const out = expandBlocks(readFileSync(url, "utf8"), "theme.css");
  assert.ok(!out.includes("@define") && !out.includes("@use"));
  assert.equal(out.match(/--cx-fb-bg: #0d1117;/g)?.length, 2);
  assert.equal(out.match(/color-scheme: dark;/g)?.length, 2);
});
