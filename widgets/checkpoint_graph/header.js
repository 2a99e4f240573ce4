// @ts-check
/**
 * CheckpointGraph's header: the session's name and policy, the figures (surface, checkpoints,
 * folds, frontier; or a workspace's sessions, lineages, forks, subagents) and the surface bar
 * split at the frontier.
 */
import { legend, stackedBar } from "../base/components.js";
import { h, put } from "../base/dom.js";
import { formatTokens, noun } from "../base/format.js";
import { stat } from "../base/panel.js";

/**
 * @param {any} model @param {HTMLElement} titleEl @param {HTMLElement} figures
 * @param {string} layout  "fold" | "workspace"
 */
export function renderHeader(model, titleEl, figures, layout) {
  const t = model.get("title") || {};
  const sm = model.get("summary") || {};
  put(
    titleEl,
    h("span", { class: "cx-title__name", title: t.name || "" }, t.name || ""),
    h("span", { class: "cx-title__meta" }, [t.id, t.policy && `policy ${t.policy}`, t.kind === "workspace" ? "workspace" : sm.tokenizer].filter(Boolean).join(" · ")),
  );
  if (layout === "workspace") {
    put(
      figures,
      h(
        "div",
        { class: "cx-stats" },
        stat("sessions", "sessions", formatTokens(sm.sessions)),
        stat("roots", "lineages", formatTokens(sm.roots)),
        stat("forks", "forks", formatTokens(sm.forks)),
        stat("subagents", "subagents", formatTokens(sm.subagents)),
        sm.store != null ? stat("checkpoints", "checkpoints", `${formatTokens(sm.checkpoints)} in ${formatTokens(sm.folded)} sessions`, `fold store ${sm.store}`) : null,
      ),
    );
    return;
  }
  const segs = [
    { key: "system", label: "system head", value: sm.head || 0 },
    { key: "folds", label: "frozen checkpoints", value: sm.frozen || 0 },
    { key: "open", label: "open tail", value: sm.open || 0 },
  ];
  const total = Math.max(1, sm.surface || 0);
  put(
      figures,
    h(
      "div",
      { class: "cx-stats" },
      stat("surface", "surface", `${formatTokens(sm.surface)} tok`),
      stat("checkpoints", "on the surface", `${formatTokens(sm.checkpoints)} ${noun(sm.checkpoints, "checkpoint")}`),
      stat("folds", "folds", formatTokens(sm.folds), "every fold over the session's life"),
      stat("frontier", "frontier", `${formatTokens(sm.frozen_nodes)} frozen | ${formatTokens(sm.open_nodes)} open`, "frozen prefix nodes | open nodes a leaf fold may take"),
    ),
    h("div", { class: "cx-frontierbar" }, stackedBar(segs, total, [{ at: (sm.head || 0) + (sm.frozen || 0), label: "the frontier" }], "surface tokens by part"), legend(segs, total)),
    sm.problem ? h("div", { class: "cx-note cx-note--error", "data-problem": "" }, sm.problem) : null,
  );
}
