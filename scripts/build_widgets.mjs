// Builds the notebook widgets' front end: each widget entry in widgets/ (NAME.js, which imports
// its modules and its stylesheet) becomes one ES module ctxsdk/widgets/_static/NAME.js and one
// stylesheet NAME.css beside it (anywidget's _esm and _css). It runs at build time only: from
// `make widgets` and from the hatch build hook (hatch_build.py); the package reads the output.
//
//   node scripts/build_widgets.mjs [--out DIR]
//
// A file is rewritten only when its bytes change, so an unchanged tree leaves mtimes alone.
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { expandBlocks } from "./css_blocks.mjs";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const WIDGETS = ["context_tree", "memory_graph", "checkpoint_graph", "belief_slots"];

/** The esbuild plugin that expands the blocks of every stylesheet it loads. */
const cssBlocks = {
  name: "css-blocks",
  setup(/** @type {import("esbuild").PluginBuild} */ b) {
    b.onLoad({ filter: /\.css$/ }, async (args) => ({
      contents: expandBlocks(await readFile(args.path, "utf8"), args.path),
      loader: "css",
    }));
  },
};

/** @param {string} path @param {string | Uint8Array} data */
async function writeIfChanged(path, data) {
  const bytes = typeof data === "string" ? Buffer.from(data) : Buffer.from(data);
  const old = await readFile(path).catch(() => null);
  if (old && old.equals(bytes)) return false;
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, bytes);
  return true;
}

/** @param {string} out */
async function buildWidgets(out) {
  const result = await build({
    absWorkingDir: ROOT,
    entryPoints: WIDGETS.map((name) => join("widgets", `${name}.js`)),
    outdir: out,
    bundle: true,
    format: "esm",
    target: "es2020",
    // no bare or URL imports: the widgets must work offline, with nothing from a CDN
    platform: "neutral",
    legalComments: "none",
    charset: "utf8",
    write: false,
    logLevel: "warning",
    plugins: [cssBlocks],
  });
  let changed = 0;
  for (const file of result.outputFiles) changed += Number(await writeIfChanged(file.path, file.contents));
  // the page `ctxsdk bench widgets` and tests/ui render a widget in
  const page = join(ROOT, "widgets", "harness", "page.html");
  changed += Number(await writeIfChanged(join(out, "harness", "page.html"), await readFile(page)));
  return changed;
}

const args = process.argv.slice(2);
const at = args.indexOf("--out");
const out = resolve(at >= 0 ? args[at + 1] : join(ROOT, "ctxsdk", "widgets", "_static"));
let changed = 0;
try {
  changed = await buildWidgets(out);
} catch {
  process.exit(1); // esbuild has printed the errors, with file and line
}
console.log(`widgets: ${WIDGETS.length} bundles in ${out} (${changed} file${changed === 1 ? "" : "s"} changed)`);
