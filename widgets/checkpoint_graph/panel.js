// @ts-check
/**
 * CheckpointGraph's side panel: a checkpoint's state with "recall exact messages" (paged,
 * verified bundles only) and "fork from here", the system head and the open tail, a
 * compaction, or a workspace session's row.
 */
import { badge } from "../base/components.js";
import { h, put } from "../base/dom.js";
import { formatTokens } from "../base/format.js";
import { kvRow } from "../base/panel.js";

const PAGE = 20; // recalled messages per request (the engine's MAX_PAGE)

/**
 * @param {{
 *   panel: ReturnType<typeof import("../base/panel.js").createPanel>,
 *   channel: ReturnType<typeof import("../base/channel.js").createChannel>,
 *   status: (text: string, kind?: "info" | "error" | "ok") => void,
 *   ask: () => number,
 * }} c  ask: the number of the latest panel request (an older reply is dropped)
 */
export function createCheckpointPanel(c) {
  const { panel, channel } = c;

  /** @param {any} r */
  function showState(r) {
    if (r.kind === "head" || r.kind === "open") {
      panel.show(
        h("div", { class: "cx-panel__title" }, badge(r.kind === "head" ? "system" : "user", r.kind === "head" ? "system head" : "open tail"), ` ${r.count} nodes · ${formatTokens(r.tokens)} tokens`),
        h("div", { class: "cx-note" }, r.kind === "head" ? "Sent with every request; a fold never covers it." : "The open nodes after the frontier: a leaf fold takes the oldest of them, never the verbatim tail."),
        r.text ? h("pre", { class: "cx-pre" }, r.text) : null,
        h("ol", { class: "cx-nodes" }, ...r.nodes.map((n) => h("li", null, h("span", { class: "cx-nodes__seq" }, String(n.seq)), badge(n.role), h("span", { class: "cx-nodes__gist" }, n.gist || "(empty)"), h("span", { class: "cx-nodes__tok" }, formatTokens(n.tokens))))),
        r.count > r.nodes.length ? h("div", { class: "cx-note" }, `… ${r.count - r.nodes.length} more`) : null,
      );
      return;
    }
    if (r.kind === "compaction") {
      panel.show(
        h("div", { class: "cx-panel__title" }, badge("replacement", "compaction"), ` seq ${r.seq}`),
        h("div", { class: "cx-note" }, r.why),
        h("div", { class: "cx-section" }, h("h4", null, "State"), h("pre", { class: "cx-pre", "data-part": "state" }, r.text)),
      );
      return;
    }
    const statusBadge = h("span", { class: `cx-verify cx-verify--${r.status}`, "data-verify": r.status, title: r.reason || "" }, r.status);
    const recallBox = h("div", { class: "cx-recall", "data-part": "recall" });
    const forkBox = h("div", { class: "cx-forkbox", "data-part": "fork" });
    const canFork = r.fork && r.fork.at_seq != null;
    panel.show(
      h("div", { class: "cx-panel__title" }, badge(r.mode === "mask" ? "tool" : "replacement", r.mode), h("span", { class: "cx-panel__id" }, r.ref), statusBadge),
      h(
        "div",
        { class: "cx-kv" },
        kvRow("archived", `${formatTokens(r.shadowed)} nodes${r.first_seq != null ? `, seq ${r.first_seq}–${r.last_seq}` : ""}`),
        kvRow("tokens", `${formatTokens(r.shadowed_tokens)} → ${formatTokens(r.checkpoint_tokens)} (${r.tokenizer})`),
        kvRow("where", r.on_surface ? "on the surface (frozen prefix)" : r.mode === "mask" ? "a masking pass" : "superseded: merged into a later checkpoint"),
        r.children.length ? kvRow("merged", r.children.join(", ")) : null,
        kvRow("bundle", `${formatTokens(r.messages)} messages · ${formatTokens(r.bytes)} bytes · sha256 ${String(r.file_sha256).slice(0, 12)}…`),
        r.reason ? kvRow("problem", r.reason) : null,
        r.inherited ? kvRow("inherited", `from session ${String(r.bundle_session).slice(0, 8)}`) : null,
      ),
      h(
        "div",
        { class: "cx-actions" },
        h("button", { type: "button", class: "cx-btn cx-btn--primary", "data-action": "recall", onclick: () => recall(r.ref, 0, recallBox) }, "Recall exact messages"),
        h(
          "button",
          { type: "button", class: "cx-btn", "data-action": "fork", disabled: !canFork, title: canFork ? `session.fork(at_seq=${r.fork.at_seq})` : r.fork?.why, onclick: () => fork(r.ref, forkBox) },
          canFork ? `Fork from here (seq ${r.fork.at_seq})` : "Fork from here",
        ),
      ),
      !canFork && r.fork?.why ? h("div", { class: "cx-note", "data-why": "fork" }, r.fork.why) : null,
      forkBox,
      recallBox,
      h("details", { class: "cx-section", open: true }, h("summary", null, "State (the checkpoint text)"), h("pre", { class: "cx-pre", "data-part": "state" }, r.text || "(no text)")),
    );
  }

  /** @param {string} ref @param {number} offset @param {HTMLElement} box */
  function recall(ref, offset, box) {
    const mine = c.ask();
    put(box, h("div", { class: "cx-loading" }, "recalling…"));
    channel.request("recall", { ref, offset, limit: PAGE }).then(
      (r) => {
        if (mine !== c.ask()) return;
        if (r.status !== "verified") {
          put(box, 
            h("div", { class: `cx-note cx-note--error`, "data-recall": r.status }, h("span", { class: `cx-verify cx-verify--${r.status}` }, r.status), ` ${r.reason || ""}`),
            h("div", { class: "cx-note" }, "No messages are shown: bytes that fail verification are never read. Restore the bundle file from a backup, or treat the checkpoint as unrecoverable."),
          );
          return;
        }
        const last = r.offset + r.messages.length;
        const pager = h(
          "div",
          { class: "cx-pager" },
          h("button", { type: "button", class: "cx-btn", "data-action": "prev", disabled: r.offset === 0, onclick: () => recall(ref, Math.max(0, r.offset - PAGE), box) }, "‹ Previous"),
          h("span", { class: "cx-pager__at" }, `messages ${r.offset + 1}–${last} of ${r.total}`),
          h("button", { type: "button", class: "cx-btn", "data-action": "next", disabled: r.next_offset == null, onclick: () => recall(ref, r.next_offset, box) }, "Next ›"),
        );
        put(box, 
          h("div", { class: "cx-recall__head", "data-recall": "verified" }, h("span", { class: "cx-verify cx-verify--verified" }, "verified"), ` exact messages, logical hash ${String(r.logical_hash).slice(0, 16)}…`),
          pager,
          h("ol", { class: "cx-msgs", start: r.offset + 1 }, ...r.messages.map(messageItem)),
        );
      },
      (err) => { if (mine === c.ask()) put(box, h("div", { class: "cx-note cx-note--error" }, `${err.type}: ${err.message}`)); },
    );
  }

  /** @param {any} m */
  function messageItem(m) {
    return h(
      "li",
      { class: `cx-msg cx-msg--${m.kind}`, "data-seq": m.seq },
      h("div", { class: "cx-msg__head" }, badge(m.kind), h("span", { class: "cx-msg__seq" }, `seq ${m.seq}`)),
      ...(m.reasoning || []).map((t) => h("pre", { class: "cx-pre cx-pre--reasoning" }, t)),
      m.text ? h("pre", { class: "cx-pre" }, m.text) : null,
      ...(m.calls || []).map((c) => h("div", { class: "cx-call" }, h("span", { class: "cx-call__name" }, `→ ${c.name}`), h("pre", { class: "cx-pre" }, c.arguments))),
      ...(m.results || []).map((x) => h("pre", { class: `cx-pre cx-result${x.is_error ? " cx-result--error" : ""}` }, x.text)),
    );
  }

  /** @param {string} ref @param {HTMLElement} box */
  function fork(ref, box) {
    put(box, h("div", { class: "cx-loading" }, "forking…"));
    channel.request("fork", { ref }).then(
      (r) => {
        put(box, h("div", { class: "cx-note cx-note--ok", "data-result": "fork" }, `Forked after seq ${r.at_seq}: child ${r.child_id}`, h("br"), h("code", null, r.path || "")));
        c.status(`forked ${ref} → ${r.child_id.slice(0, 8)}`, "ok");
      },
      (err) => put(box, h("div", { class: "cx-note cx-note--error", "data-result": "fork" }, `${err.type}: ${err.message}`)),
    );
  }

  /** @param {any} r */
  function showSession(r) {
    panel.show(
      h("div", { class: "cx-panel__title" }, badge(r.parent ? (r.origin === "subagent" ? "subagent" : "turn") : "session", r.parent ? (r.origin === "subagent" ? "subagent" : "fork") : "session"), h("span", { class: "cx-panel__id" }, String(r.id).slice(0, 8))),
      h(
        "div",
        { class: "cx-kv" },
        kvRow("title", r.title || "—"),
        kvRow("events", formatTokens(r.events)),
        kvRow("format", `v${r.version ?? "?"}`),
        r.parent ? kvRow("parent", String(r.parent)) : null,
        r.fork_seq != null ? kvRow("forked after", `seq ${r.fork_seq}`) : null,
        r.checkpoints != null ? kvRow("checkpoints", `${r.checkpoints} on the surface · ${r.folds} folds`) : null,
        kvRow("updated", r.updated || "—"),
        kvRow("path", h("code", null, r.path || "")),
        r.error ? kvRow("error", r.error) : null,
      ),
    );
  }

  return { showState, showSession };
}
