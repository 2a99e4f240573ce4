// The widgets' pure pieces: reading the synced columns, edge geometry and what is in view
// (CheckpointGraph), label placement (MemoryGraph), the tree's visible rows (ContextTree) and
// the slot filters (BeliefSlots).
import assert from "node:assert/strict";
import { test } from "node:test";
import { filterRows, lastPage, readCompare, readRows as readSlots } from "../../widgets/belief_slots/rows.js";
import { edgeGeometry, inView, readGraph as readCheckpoints } from "../../widgets/checkpoint_graph/read.js";
import { modeAt, openRows, readRows as readTree, tokenScale, visibleRows } from "../../widgets/context_tree/skeleton.js";
import { labelOrder, placeLabels } from "../../widgets/memory_graph/labels.js";
import { clustersOf, edgeEnds, readGraph as readMemory } from "../../widgets/memory_graph/read.js";

const checkpoints = () =>
  readCheckpoints({
    nodes: { id: ["head", "a", "b", "tail"], kind: [], label: [], sub: [], mode: [], tokens: [], flags: [], ref: [], x: [0, 222, 222, 444], y: [0, 0, 104, 0] },
    edges: { source: ["head", "a", "a", "a", "ghost"], target: ["a", "b", "tail", "b", "a"], kind: ["surface", "merged", "surface", "merged", "surface"], label: [] },
    bounds: [0, 0, 630, 170],
    frontier: 430,
  });

test("an empty graph trait reads as empty columns", () => {
  const g = readCheckpoints(undefined);
  assert.equal(g.n, 0);
  assert.deepEqual(g.bounds, [0, 0, 0, 0]);
  assert.deepEqual(g.size, [186, 66]);
  assert.equal(g.frontier, null);
  assert.equal(g.layout, "fold");
  const m = readMemory(null);
  assert.equal(m.n, 0);
  assert.deepEqual(m.clusters.hub, []);
});

test("checkpoint edges resolve to node indices; an unknown end is -1", () => {
  const g = checkpoints();
  assert.deepEqual([...g.from], [0, 1, 1, 1, -1]);
  assert.deepEqual([...g.to], [1, 2, 3, 2, 1]);
  assert.equal(g.mergedFrom.get(1), 2);
});

test("edges run across a row and down between rows; a merged group is labelled aside", () => {
  const g = checkpoints();
  const across = edgeGeometry(g, 0);
  assert.equal(across.d, "M186,33 C204,33 204,33 222,33");
  assert.equal(across.anchor, "middle");
  const down = edgeGeometry(g, 1);
  assert.equal(down.d, "M315,66 C315,85 315,85 315,104");
  // a's two merged edges form a group: one label below a's left corner, right-aligned
  assert.deepEqual([down.lx, down.ly, down.anchor], [218, 78, "end"]);
});

test("only what overlaps the view is drawn, and the cursor's node always", () => {
  const g = checkpoints();
  const got = inView(g, { x0: 300, y0: 0, x1: 500, y1: 60 }, 0);
  assert.deepEqual([...got.nodes].sort(), [0, 1, 3]); // 0 is the cursor, off the view
  assert.ok(got.edges.has(2) && !got.edges.has(4)); // an edge with an unknown end is never drawn
  assert.ok(!inView(g, { x0: 300, y0: 0, x1: 500, y1: 60 }, -1).nodes.has(0));
});

const memory = () =>
  readMemory({
    nodes: { id: ["hub", "p", "q", "far"], type: ["entity", "preference", "decision", "preference"], label: [], tip: [], x: [0, 60, -60, 150], y: [0, 0, 0, 150], flags: [2, 0, 0, 0], deg: [2, 1, 1, 0] },
    edges: { s: [1], t: [0], label: ["about"] },
    clusters: { x: [0], y: [0], r: [100], hub: [0] },
    bounds: [-200, -200, 250, 250],
  });

test("satellites belong to the cluster around them; edges end at the nodes' rims", () => {
  const g = memory();
  assert.deepEqual([...clustersOf(g)], [[1, 0], [2, 0]]);
  const [x1, y1, x2, y2] = edgeEnds(g, 0);
  assert.deepEqual([x1, y1, x2, y2], [45, 0, 20, 0]); // 15 from p, 20 from the hub
});

test("labels go by rank, keep their own side when free, and never overlap", () => {
  const g = memory();
  assert.deepEqual(labelOrder(g, "q", null), [2, 0, 1, 3]);
  assert.deepEqual(labelOrder(g, null, { hits: new Set(["far"]), ends: new Set(), edges: new Set() }), [3, 0, 1, 2]);
  const home = /** @type {[string, number, number][]} */ ([["middle", 0, 32], ["start", 16, 4], ["end", -16, 4], ["start", 16, 4]]);
  const texts = ["hub label", "a preference with a very long label", "q", "far"];
  const where = placeLabels(g, labelOrder(g, null, null), (i) => ({ full: texts[i], home: home[i], size: 10 }), (i, t) => t.length * 6);
  assert.deepEqual(where.get(0), { place: ["middle", 0, 32], text: "hub label", cut: false });
  assert.deepEqual(where.get(3), { place: ["start", 16, 4], text: "far", cut: false });
  // the long label does not fit beside p in full (it would leave the bounds): cut short there
  const p = where.get(1);
  assert.ok(p && p.cut && p.text === "a preference wit…", JSON.stringify(p));
  // a label with no free place at all is hidden (null)
  const crowded = placeLabels(g, [0, 1], (i) => ({ full: "x".repeat(40), home: ["middle", 0, 0], size: 400 }), () => 5000);
  assert.equal(crowded.get(0), null);
});

const tree = () =>
  readTree({
    id: ["t1", "s1", "n1", "n2", "t2", "r", "n3"],
    parent: [-1, 0, 1, 1, -1, 4, 5],
    end: [4, 4, 3, 4, 7, 7, 7],
    depth: [0, 1, 2, 2, 0, 1, 2],
    kind: ["turn", "step", "user", "tool", "turn", "replacement", "tool"],
    tokens: [50, 40, 10, 30, 90, 80, 70],
    flags: [0, 0, 0, 0, 0, 4, 2],
  });

test("the tree opens everything but folded regions and shadowed rows, unless toggled", () => {
  const rows = tree();
  const open = openRows(rows, new Map());
  assert.deepEqual([...open], [1, 1, 1, 1, 1, 0, 0]);
  assert.deepEqual([...visibleRows(rows, open)], [0, 1, 2, 3, 4, 5]);
  const toggled = openRows(rows, new Map([["t1", false], ["r", true]]));
  assert.deepEqual([...visibleRows(rows, toggled)], [0, 4, 5, 6]);
});

test("bars scale per kind and modes read with their draft mark", () => {
  assert.deepEqual(tokenScale(tree()), { turn: 90, step: 40, leaf: 80 });
  assert.deepEqual(modeAt("fKm", 1), { mode: "key", drafted: true });
  assert.deepEqual(modeAt("fKm", 2), { mode: "mixed", drafted: false });
  assert.deepEqual(modeAt("", 5), { mode: "full", drafted: false });
});

test("slot filters: status, in or out of the block, strategies differ, text", () => {
  const rows = readSlots({ key: ["db.host", "db.port", "ci", "lang"], value: ["pg1", "5432", "github", "Python"], status: ["resolved", "disputed", "resolved", "ruled"], flags: [1, 2, 1, 2] });
  const cmp = readCompare({ names: ["a", "b"], decisions: {}, differs: [false, true, false, true] });
  assert.deepEqual(filterRows(rows, null, "", "all"), [0, 1, 2, 3]);
  assert.deepEqual(filterRows(rows, null, "", "resolved"), [0, 2]);
  assert.deepEqual(filterRows(rows, null, "", "kept"), [0, 2]);
  assert.deepEqual(filterRows(rows, null, "", "dropped"), [1, 3]);
  assert.deepEqual(filterRows(rows, cmp, "", "differs"), [1, 3]);
  assert.deepEqual(filterRows(rows, null, "", "differs"), []);
  assert.deepEqual(filterRows(rows, null, " DB ", "all"), [0, 1]);
  assert.deepEqual(filterRows(rows, null, "python", "ruled"), [3]);
  assert.equal(readCompare({ names: [] }), null);
  assert.deepEqual([lastPage(0, 50), lastPage(50, 50), lastPage(51, 50)], [0, 0, 1]);
});
