// The shared graph view's math: fit, zoom about a point, pan, what is visible, revealing a node,
// and moving between nodes from the keyboard.
import assert from "node:assert/strict";
import { test } from "node:test";
import { graphKey, nearest } from "../../widgets/graph/navigate.js";
import { fitView, panView, revealBox, transformOf, visibleRect, zoomAt, zoomText } from "../../widgets/graph/view.js";

const close = (a, b) => assert.ok(Math.abs(a - b) < 1e-9, `${a} != ${b}`);

test("fit shows the whole graph centred, padded, within the zoom limits", () => {
  const v = fitView([0, 0, 1000, 500], { w: 548, h: 400 }, { pad: 24, minK: 0.01, maxK: 1 });
  close(v.k, 0.5); // (548 - 48) / 1000 is the binding side
  close(v.x, 24);
  close(v.y, (400 - 250) / 2);
  // a small graph is not blown up past maxK; a huge one not shrunk past minK
  assert.equal(fitView([0, 0, 10, 10], { w: 600, h: 400 }, { pad: 16, minK: 0.05, maxK: 1.4 }).k, 1.4);
  assert.equal(fitView([0, 0, 1e9, 1e9], { w: 600, h: 400 }, { pad: 16, minK: 0.05, maxK: 1.4 }).k, 0.05);
  // an empty graph (zero extent) still gives a finite view
  const e = fitView([0, 0, 0, 0], { w: 600, h: 400 }, { pad: 16, minK: 0.05, maxK: 1.4 });
  assert.ok(Number.isFinite(e.x) && Number.isFinite(e.y) && e.k === 1.4);
});

test("zoom keeps the point under the pointer still and clamps k", () => {
  const v = { x: 10, y: -20, k: 0.5 };
  const z = zoomAt(v, 2, 300, 200, 0.1, 3);
  close(z.k, 1);
  // the graph point under (300, 200) before is under it after
  close((300 - v.x) / v.k, (300 - z.x) / z.k);
  close((200 - v.y) / v.k, (200 - z.y) / z.k);
  assert.equal(zoomAt(v, 100, 0, 0, 0.1, 3).k, 3);
  assert.equal(zoomAt(v, 0.001, 0, 0, 0.1, 3).k, 0.1);
});

test("pan moves by screen pixels; the transform and label print the view", () => {
  assert.deepEqual(panView({ x: 1, y: 2, k: 3 }, -80, 0), { x: -79, y: 2, k: 3 });
  assert.equal(transformOf({ x: 1.005, y: -2, k: 0.123456 }), "translate(1.00,-2.00) scale(0.1235)");
  assert.equal(zoomText({ x: 0, y: 0, k: 0.914 }), "91%");
});

test("the visible rectangle is the screen in graph units plus the margin", () => {
  const r = visibleRect({ x: -100, y: 50, k: 2 }, { w: 600, h: 400 }, 10);
  assert.deepEqual(r, { x0: 40, y0: -35, x1: 360, y1: 185 });
});

test("reveal leaves a node that is inside alone and centres one that is not", () => {
  const v = { x: 0, y: 0, k: 1 };
  assert.equal(revealBox(v, { w: 600, h: 400 }, [100, 100, 286, 166], 0), null);
  const moved = revealBox(v, { w: 600, h: 400 }, [500, 100, 686, 166], 0);
  assert.ok(moved);
  close(moved.x, 300 - 593);
  close(moved.y, 200 - 133);
  assert.equal(moved.k, 1);
  // a point node must lie `inset` pixels inside the edges
  assert.equal(revealBox(v, { w: 600, h: 400 }, [10, 100, 10, 100], 20)?.x, 290);
  assert.equal(revealBox(v, { w: 600, h: 400 }, [30, 100, 30, 100], 20), null);
});

test("arrows move to the nearest node that way, preferring the same row", () => {
  //   0 (0,0)   1 (200,0)   2 (200,30)
  //   3 (0,200)
  const xs = [0, 200, 200, 0], ys = [0, 0, 30, 200];
  assert.equal(nearest(xs, ys, 0, 1, 0), 1);
  assert.equal(nearest(xs, ys, 0, 0, 1), 3);
  assert.equal(nearest(xs, ys, 1, 0, 1), 2);
  assert.equal(nearest(xs, ys, 0, -1, 0), -1); // nothing to the left
  assert.equal(nearest(xs, ys, -1, 1, 0), 0); // no cursor yet: the first node
  assert.equal(nearest([], [], -1, 1, 0), -1);
  // a node further along the row beats a nearer one off to the side
  assert.equal(nearest([0, 300, 200], [0, 0, 150], 0, 1, 0), 1);
});

test("keys map to graph actions; Shift+arrows pan and Home/End only where asked", () => {
  assert.deepEqual(graphKey({ key: "ArrowRight" }), { type: "move", dx: 1, dy: 0 });
  assert.deepEqual(graphKey({ key: "ArrowUp", shiftKey: true }, { pan: true }), { type: "pan", dx: -0, dy: 80 });
  assert.deepEqual(graphKey({ key: "ArrowUp", shiftKey: true }), { type: "move", dx: 0, dy: -1 });
  assert.deepEqual(graphKey({ key: "=" }), { type: "zoom", factor: 1.25 });
  assert.deepEqual(graphKey({ key: "_" }), { type: "zoom", factor: 0.8 });
  assert.deepEqual(graphKey({ key: "0" }), { type: "fit" });
  assert.deepEqual(graphKey({ key: "Home" }, { ends: true }), { type: "first" });
  assert.equal(graphKey({ key: "Home" }), null);
  assert.deepEqual(graphKey({ key: " " }), { type: "open" });
  assert.equal(graphKey({ key: "+", ctrlKey: true }), null);
  assert.equal(graphKey({ key: "a" }), null);
});
