// @ts-check
/**
 * MemoryGraph's panel: a node as `memory.read` returns it (text, aliases, deadline, sources
 * with their quotes and clickable event seqs, edges in and out) and its edits: rename, merge
 * another node into it, archive and restore.
 */
import { badge } from "../base/components.js";
import { h } from "../base/dom.js";
import { formatTokens } from "../base/format.js";
import { kvRow } from "../base/panel.js";

/**
 * @param {{
 *   model: any,
 *   root: HTMLElement,
 *   panel: ReturnType<typeof import("../base/panel.js").createPanel>,
 *   channel: ReturnType<typeof import("../base/channel.js").createChannel>,
 *   status: (text: string, kind?: "info" | "error" | "ok") => void,
 *   open: (id: string) => void,
 *   searched: () => void,
 * }} c  searched: after an edit, run the current search again
 */
export function createNodePanel(c) {
  const { model, root, panel, channel, status, open } = c;
  const panelBody = panel.body;

  /** @param {any} r */
  function showNode(r) {
    const sel = model.get("selected_event") || {};
    const errBox = h("div", { class: "cx-note cx-note--error", "data-part": "action-error", role: "alert" });
    errBox.hidden = true;
    const nameIn = /** @type {HTMLInputElement} */ (h("input", { class: "cx-input", type: "text", value: r.name, "data-control": "rename", "aria-label": "new name" }));
    const pick = /** @type {HTMLSelectElement} */ (
      h("select", { class: "cx-input", "data-control": "merge-pick", "aria-label": `another ${r.type} to merge into this one` }, h("option", { value: "" }, r.merge_choices.length ? `another ${r.type}…` : `no other ${r.type}`), ...r.merge_choices.map((/** @type {any} */ c) => h("option", { value: c.id }, c.name)))
    );
    const active = r.status === "active";
    const box = r.type === "episode"; // a session map box: renamed, never merged or archived here
    const edgeItem = (/** @type {any} */ e, /** @type {string} */ dir) =>
      h(
        "li",
        { class: `cx-medgeitem${e.active ? "" : " cx-medgeitem--archived"}`, "data-id": e.id, "data-label": e.label },
        h("span", { class: `cx-medgeitem__label cx-medge--${e.label}` }, dir === "in" ? `← ${e.label}` : `${e.label} →`),
        badge(`mt-${e.type}`, e.type),
        h("button", { type: "button", class: "cx-linkbtn", "data-action": "jump", title: e.active ? "go to this node" : "archived", disabled: !e.active, onclick: () => open(e.id) }, e.name),
      );
    const ins = r.incoming, outs = r.outgoing;
    panel.show(
      h("div", { class: "cx-panel__title" }, badge(`mt-${r.type}`, r.type), r.stale ? badge("failed", "stale") : null, r.status !== "active" ? badge("off", r.status) : null, h("span", { class: "cx-panel__name", "data-part": "name" }, r.name), h("code", { class: "cx-panel__id" }, r.id)),
      r.text && r.text !== r.name ? h("div", { class: "cx-mtext", "data-part": "text" }, r.text) : null,
      h(
        "div",
        { class: "cx-kv" },
        r.aliases.length ? kvRow("aliases", r.aliases.join(", ")) : null,
        r.until ? kvRow("until", h("span", null, r.until, r.until_at ? ` (${String(r.until_at).slice(0, 16).replace("T", " ")})` : "", r.stale ? h("strong", { class: "cx-stale-text" }, " · stale: the deadline passed") : "")) : null,
        r.fail ? kvRow("failed", h("code", null, r.fail)) : null,
        r.fix ? kvRow("fix", h("code", null, r.fix)) : null,
        kvRow("uri", h("code", null, r.uri)),
        kvRow("updated", String(r.updated || "").replace("T", " ").slice(0, 19)),
      ),
      h(
        "div",
        { class: "cx-section", "data-part": "sources" },
        h("h4", null, `sources (${r.sources.length})`),
        r.sources.length
          ? h(
              "ol",
              { class: "cx-sources" },
              ...r.sources.map((/** @type {any} */ src) =>
                h(
                  "li",
                  { class: "cx-source", "data-session": src.session || "", "data-seq": src.seq ?? "" },
                  h(
                    "div",
                    { class: "cx-source__head" },
                    src.session ? h("code", { class: "cx-source__session", title: src.session }, src.short) : h("span", { class: "cx-note" }, "typed in"),
                    src.seq != null && src.session
                      ? h("button", { type: "button", class: `cx-seq${sel.session === src.session && sel.seq === src.seq ? " cx-seq--selected" : ""}`, "data-action": "event", title: "select this event (selected_event)", onclick: (/** @type {MouseEvent} */ ev) => selectEvent(r.id, src, /** @type {HTMLElement} */ (ev.currentTarget)) }, `#${src.seq}`)
                      : null,
                    badge("off", src.via),
                  ),
                  src.quote ? h("blockquote", { class: "cx-quote" }, src.quote) : null,
                ),
              ),
            )
          : h("div", { class: "cx-empty" }, "no sources"),
      ),
      h(
        "div",
        { class: "cx-section", "data-part": "edges" },
        h("h4", null, `edges (${ins.length} in, ${outs.length} out)`),
        ins.length + outs.length ? h("ul", { class: "cx-medges" }, ...ins.map((/** @type {any} */ e) => edgeItem(e, "in")), ...outs.map((/** @type {any} */ e) => edgeItem(e, "out"))) : h("div", { class: "cx-empty" }, "no edges"),
      ),
      active
        ? h(
            "div",
            { class: "cx-section cx-medit", "data-part": "edit" },
            h("h4", null, "edit"),
            h("form", { class: "cx-medit__row", onsubmit: (/** @type {Event} */ e) => { e.preventDefault(); act("rename", { node: r.id, name: nameIn.value }, errBox, `renamed to “${nameIn.value.trim()}”`); } }, nameIn, h("button", { type: "submit", class: "cx-btn", "data-action": "rename" }, "Rename")),
            box ? null : h("div", { class: "cx-medit__row" }, pick, h("button", { type: "button", class: "cx-btn", "data-action": "merge", title: "merge the chosen node into this one (memory.merge)", onclick: () => act("merge", { keep: r.id, drop: pick.value }, errBox, "merged") }, "Merge into this")),
            !box && r.merge_total > r.merge_choices.length ? h("div", { class: "cx-note" }, `the first ${r.merge_choices.length} of ${formatTokens(r.merge_total)} are listed`) : null,
            box ? null : h("div", { class: "cx-medit__row" }, h("button", { type: "button", class: "cx-btn cx-btn--danger", "data-action": "archive", title: "hide it from search, the map and the graph (memory.archive; restorable)", onclick: () => act("archive", { node: r.id }, errBox, "archived") }, "Archive")),
            errBox,
          )
        : h("div", { class: "cx-section" }, h("div", { class: "cx-note", "data-part": "archived" }, "Archived: hidden from search, the map and the graph."), h("button", { type: "button", class: "cx-btn", "data-action": "restore", onclick: () => act("restore", { node: r.id }, errBox, "restored") }, "Restore"), errBox),
    );
  }

  /** @param {string} type @param {Record<string, any>} args @param {HTMLElement} errBox @param {string} done */
  function act(type, args, errBox, done) {
    errBox.hidden = true;
    root.classList.add("cx-pending");
    channel.request(type, args).then(
      (r) => {
        root.classList.remove("cx-pending");
        status(`${done} (${r.node})`, "ok");
        c.searched();
        open(r.node);
      },
      (err) => {
        root.classList.remove("cx-pending");
        errBox.hidden = false;
        errBox.textContent = `${err.type}: ${err.message}`;
        status(`${type} failed: ${err.message}`, "error");
      },
    );
  }

  /** @param {string} id @param {any} src @param {HTMLElement} button */
  function selectEvent(id, src, button) {
    channel.request("select_event", { node: id, session: src.session, seq: src.seq }).then(
      (r) => {
        for (const b of panelBody.querySelectorAll(".cx-seq--selected")) b.classList.remove("cx-seq--selected");
        button.classList.add("cx-seq--selected");
        status(`selected_event = {session: ${r.session.slice(0, 8)}…, seq: ${r.seq}}`, "ok");
      },
      (err) => status(`${err.type}: ${err.message}`, "error"),
    );
  }

  return { showNode };
}
