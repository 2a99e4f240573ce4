// @ts-check
/**
 * A fixed-row-height virtual list: only the rows in view (plus a few either side) are in the
 * DOM, so 10,000 rows cost what 30 do. Rows are recycled element by element.
 *
 *   const v = createVirtualizer({scroller, rowHeight: 26, create, update});
 *   v.setCount(n);        // after the data changed
 *   v.refresh();          // re-render the rows in view (same count)
 *   v.scrollToIndex(i);   // bring row i into view
 *
 * `create()` returns a new row element; `update(el, index)` fills it for `index`.
 */

/**
 * @param {{
 *   scroller: HTMLElement,
 *   rowHeight: number,
 *   create: () => HTMLElement,
 *   update: (el: HTMLElement, index: number) => void,
 *   overscan?: number,
 *   fallbackHeight?: number,
 * }} options
 */
export function createVirtualizer(options) {
  const { scroller, rowHeight, create, update } = options;
  const overscan = options.overscan ?? 8;
  const fallbackHeight = options.fallbackHeight ?? 400;
  const spacer = document.createElement("div");
  spacer.className = "cx-virtual-spacer";
  spacer.style.position = "relative";
  spacer.style.width = "100%";
  scroller.appendChild(spacer);

  let count = 0;
  /** @type {Map<number, HTMLElement>} rows in the DOM, by index */
  let live = new Map();
  /** @type {HTMLElement[]} */
  const free = [];
  let frame = 0;

  function viewHeight() {
    return scroller.clientHeight || fallbackHeight;
  }

  function range() {
    const top = scroller.scrollTop;
    const first = Math.max(0, Math.floor(top / rowHeight) - overscan);
    const last = Math.min(count, Math.ceil((top + viewHeight()) / rowHeight) + overscan);
    return [first, last];
  }

  /** @param {boolean} force re-render rows that stay in view too */
  function render(force) {
    frame = 0;
    const [first, last] = range();
    /** @type {Map<number, HTMLElement>} */
    const next = new Map();
    for (const [i, el] of live) {
      if (i >= first && i < last) next.set(i, el);
      else {
        el.remove();
        free.push(el);
      }
    }
    for (let i = first; i < last; i++) {
      let el = next.get(i);
      if (el && !force) continue;
      if (!el) {
        el = free.pop() || create();
        el.style.position = "absolute";
        el.style.left = "0";
        el.style.right = "0";
        el.style.height = `${rowHeight}px`;
        next.set(i, el);
        spacer.appendChild(el);
      }
      el.style.transform = `translateY(${i * rowHeight}px)`;
      update(el, i);
    }
    live = next;
  }

  function schedule() {
    if (!frame) frame = requestAnimationFrame(() => render(false));
  }

  scroller.addEventListener("scroll", schedule, { passive: true });
  const resize = typeof ResizeObserver === "function" ? new ResizeObserver(schedule) : null;
  resize?.observe(scroller);

  return {
    /** @param {number} n */
    setCount(n) {
      count = n;
      spacer.style.height = `${n * rowHeight}px`;
      render(true);
    },
    get count() {
      return count;
    },
    refresh() {
      render(true);
    },
    /** @param {number} index */
    scrollToIndex(index) {
      const top = index * rowHeight;
      const h = viewHeight();
      if (top < scroller.scrollTop) scroller.scrollTop = top;
      else if (top + rowHeight > scroller.scrollTop + h) scroller.scrollTop = top + rowHeight - h;
      render(false);
    },
    /** @param {number} index @returns {HTMLElement | undefined} */
    elementAt(index) {
      return live.get(index);
    },
    /** The rows in view, [first, last). */
    visibleRange() {
      const top = scroller.scrollTop;
      return [Math.floor(top / rowHeight), Math.min(count, Math.ceil((top + viewHeight()) / rowHeight))];
    },
    /** Rows a page holds (for PageUp / PageDown). */
    pageSize() {
      return Math.max(1, Math.floor(viewHeight() / rowHeight) - 1);
    },
    /** How many row elements exist (in the DOM and recycled). */
    get elements() {
      return live.size + free.length;
    },
    dispose() {
      if (frame) cancelAnimationFrame(frame);
      scroller.removeEventListener("scroll", schedule);
      resize?.disconnect();
      spacer.remove();
      live.clear();
      free.length = 0;
    },
  };
}
