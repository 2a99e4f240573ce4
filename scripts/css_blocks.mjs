// @ts-check
// Blocks of CSS declarations written once: the build (build_widgets.mjs) expands them in every
// stylesheet it bundles. Plain node, no dependencies: tested by tests/js/css_blocks.test.mjs.

/**
 * A stylesheet with its blocks put in: `/* @define NAME ... @end *\/` holds declarations once
 * and each `/* @use NAME *\/` gets them (the theme's dark palette serves two rules; CSS
 * cannot share one declaration block between a selector and a media query).
 * @param {string} text @param {string} path
 */
export function expandBlocks(text, path) {
  /** @type {Map<string, string>} */
  const blocks = new Map();
  const defined = text.replace(/\/\* @define (\w+)\n([\s\S]*?)@end \*\/\n?/g, (_, name, body) => {
    blocks.set(name, body);
    return "";
  });
  return defined.replace(/\/\* @use (\w+) \*\//g, (_, name) => {
    const body = blocks.get(name);
    if (body == null) throw new Error(`${path}: @use ${name} without an @define ${name}`);
    return body.trim();
  });
}
