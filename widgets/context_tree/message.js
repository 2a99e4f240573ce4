// @ts-check
/** How ContextTree's panel shows a message: its text, reasoning, and each tool call beside its result. */
import { badge } from "../base/components.js";
import { h } from "../base/dom.js";
import { formatTokens } from "../base/format.js";

/** A text block; `mono` for tool output and arguments. */
export function textBlock(text, mono = false) {
  return h("pre", { class: mono ? "cx-text cx-text--mono" : "cx-text" }, text || "(empty)");
}

export function reasoningBlock(parts) {
  if (!parts || !parts.length) return null;
  const text = parts.join("\n\n");
  return h("details", { class: "cx-reasoning" }, h("summary", null, `reasoning · ${formatTokens(text.length)} characters`), textBlock(text));
}

export function prettyArgs(args) {
  try {
    return JSON.stringify(JSON.parse(args), null, 2);
  } catch {
    return args;
  }
}

/** A tool call and its result, side by side. */
export function pair(call, result) {
  return h(
    "div",
    { class: "cx-pair" },
    h(
      "div",
      { class: "cx-pair__call" },
      h("div", { class: "cx-pair__head" }, badge("assistant", "call"), h("b", null, call ? call.name : "(call not found)"), call && call.id ? h("span", { class: "cx-muted" }, call.id) : null),
      call ? textBlock(prettyArgs(call.arguments), true) : null,
    ),
    h(
      "div",
      { class: "cx-pair__result" },
      h(
        "div",
        { class: "cx-pair__head" },
        badge(result && result.is_error ? "failed" : "tool", result && result.is_error ? "error" : "result"),
        result && result.seq != null ? h("span", { class: "cx-muted" }, `seq ${result.seq}`) : null,
        result && result.shadowed ? h("span", { class: "cx-muted" }, "(folded)") : null,
      ),
      result ? textBlock(result.text, true) : h("div", { class: "cx-muted" }, "no result on the surface"),
    ),
  );
}

/** @param {any} m  a message as the kernel describes it */
export function messageView(m) {
  const out = [];
  if (m.text) out.push(textBlock(m.text, m.kind === "tool"));
  const r = reasoningBlock(m.reasoning);
  if (r) out.push(r);
  for (const c of m.calls || []) out.push(pair(c, c.result));
  if (m.result) out.push(pair(m.result.call, m.result));
  if (!out.length) out.push(h("div", { class: "cx-muted" }, "(no content)"));
  return out;
}
