// @ts-check
/** BeliefSlots' block panel: the packed block's tokens and trust, what it kept, what it dropped and why, its text. */
import { badge, setTokenBar } from "../base/components.js";
import { h, put } from "../base/dom.js";
import { formatTokens, plural } from "../base/format.js";

const LISTED = 100; // kept / dropped keys the block panel lists (the table filters show all)

/**
 * @param {{blockHead: HTMLElement, blockBar: HTMLElement, blockNote: HTMLElement, keptTitle: HTMLElement,
 *   keptList: HTMLElement, droppedTitle: HTMLElement, droppedList: HTMLElement, blockText: HTMLElement}} els
 * @param {any} model @param {(key: string) => void} reveal  show a slot's row
 */
export function renderBlock(els, model, reveal) {
  const { blockHead, blockBar, blockNote, keptTitle, keptList, droppedTitle, droppedList, blockText } = els;
  const b = model.get("_block") || {};
  const kept = b.kept || [];
  const dropped = b.dropped || [];
  put(
    blockHead,
    h("span", { class: "cx-block__name" }, "Packed block"),
    h("span", { class: "cx-block__tokens", "data-part": "block-tokens" }, `${formatTokens(b.tokens || 0)} / ${formatTokens(b.budget || 0)} tokens`),
    b.trust ? badge(`trust-${b.trust}`, b.trust) : null,
  );
  setTokenBar(blockBar, b.tokens || 0, b.budget || 0);
  const notes = [];
  if (b.reason) notes.push(`nothing injected: ${b.reason}`);
  if (b.withheld) notes.push(`${plural(b.withheld, "credential")} withheld by redaction`);
  const refused = (model.get("summary") || {}).refused || [];
  if (refused.length) notes.push(`${plural(refused.length, "ruling")} refused: ${refused.map((/** @type {[string, string]} */ [k, why]) => `${k} (${why})`).join("; ")}`);
  blockNote.textContent = notes.join(" · ");
  blockNote.hidden = !notes.length;
  keptTitle.textContent = `kept (${kept.length})`;
  put(
    keptList,
    ...kept.slice(0, LISTED).map((/** @type {string} */ k) => h("li", { class: "cx-block__item cx-block__item--kept", "data-key": k }, h("button", { type: "button", class: "cx-linkbtn", title: `show this slot: ${k}`, onclick: () => reveal(k) }, k))),
  );
  if (!kept.length) keptList.append(h("li", { class: "cx-empty" }, "nothing"));
  if (kept.length > LISTED) keptList.append(h("li", { class: "cx-note" }, `… ${formatTokens(kept.length - LISTED)} more: filter the table by “in the block”`));
  droppedTitle.textContent = `dropped (${dropped.length})`;
  put(
    droppedList,
    ...dropped.slice(0, LISTED).map((/** @type {[string, string]} */ [k, why]) =>
      h("li", { class: "cx-block__item cx-block__item--dropped", "data-key": k }, h("button", { type: "button", class: "cx-linkbtn", title: `show this slot: ${k}`, onclick: () => reveal(k) }, k), h("span", { class: "cx-block__why" }, why)),
    ),
  );
  if (!dropped.length) droppedList.append(h("li", { class: "cx-empty" }, "nothing"));
  if (dropped.length > LISTED) droppedList.append(h("li", { class: "cx-note", "data-part": "dropped-more" }, `… ${formatTokens(dropped.length - LISTED)} more: filter the table by “left out”`));
  blockText.textContent = b.text || "(empty: nothing is injected)";
}
