// @ts-check
/**
 * Pan and zoom for the graph widgets' SVG: a drag pans, the wheel zooms about the pointer, and
 * a press that did not move is a click. The widget keeps its view ({x, y, k}) and draws from it;
 * this module reads and replaces it through `get` / `set`.
 */
import { zoomAt } from "./view.js";

/** @typedef {import("./view.js").View} View */

/**
 * @param {SVGSVGElement} svg
 * @param {{
 *   get: () => View,
 *   set: (view: View) => void,
 *   minK: number,
 *   maxK: number,
 *   draggingClass: string,
 *   onClick: (e: PointerEvent) => void,
 * }} opts
 */
export function panZoom(svg, { get, set, minK, maxK, draggingClass, onClick }) {
  function size() {
    const r = svg.getBoundingClientRect();
    return { w: r.width || 600, h: r.height || 400 };
  }

  /** @param {number} factor @param {number} [cx] @param {number} [cy] screen point kept still */
  function zoomBy(factor, cx, cy) {
    const { w, h } = size();
    set(zoomAt(get(), factor, cx ?? w / 2, cy ?? h / 2, minK, maxK));
  }

  let drag = /** @type {{x: number, y: number, vx: number, vy: number, moved: boolean, id: number} | null} */ (null);
  svg.addEventListener("pointerdown", (e) => {
    if (e.button !== 0) return;
    const view = get();
    drag = { x: e.clientX, y: e.clientY, vx: view.x, vy: view.y, moved: false, id: e.pointerId };
  });
  svg.addEventListener("pointermove", (e) => {
    if (!drag || drag.id !== e.pointerId) return;
    const dx = e.clientX - drag.x, dy = e.clientY - drag.y;
    if (!drag.moved && Math.hypot(dx, dy) < 4) return;
    if (!drag.moved) {
      drag.moved = true;
      svg.setPointerCapture(e.pointerId);
      svg.classList.add(draggingClass);
    }
    set({ ...get(), x: drag.vx + dx, y: drag.vy + dy });
  });
  const endDrag = (/** @type {PointerEvent} */ e) => {
    if (!drag || drag.id !== e.pointerId) return;
    const moved = drag.moved;
    drag = null;
    svg.classList.remove(draggingClass);
    if (svg.hasPointerCapture(e.pointerId)) svg.releasePointerCapture(e.pointerId);
    if (moved || e.type === "pointercancel") return;
    onClick(e);
  };
  svg.addEventListener("pointerup", endDrag);
  svg.addEventListener("pointercancel", endDrag);
  svg.addEventListener(
    "wheel",
    (e) => {
      e.preventDefault();
      const r = svg.getBoundingClientRect();
      const factor = Math.exp(-(e.deltaMode === 1 ? e.deltaY * 16 : e.deltaY) * 0.0015);
      zoomBy(factor, e.clientX - r.left, e.clientY - r.top);
    },
    { passive: false },
  );
  return { size, zoomBy };
}
