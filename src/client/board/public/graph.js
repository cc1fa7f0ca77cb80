/**
 * The dependency graph of tasks, laid out by dagre and drawn as SVG. Edges come from `task.dependsOn`
 * when the status carries it; otherwise from the milestones' order (each milestone's tasks feed a gate
 * the next milestone's tasks start from). Layout is cached by shape, so a state change only recolours.
 */
import { html } from './html.js';
import dagre from '/vendor/@dagrejs/dagre/dist/dagre.esm.js';

const MAX_NODES = 400;
const NODE = { width: 64, height: 28 };
let cached = { key: '', layout: null };

function edgesOf(milestones) {
  const tasks = milestones.flatMap((m) => m.tasks);
  if (tasks.some((t) => Array.isArray(t.dependsOn))) {
    const ids = new Set(tasks.map((t) => t.id));
    return {
      gates: [],
      edges: tasks.flatMap((t) => (t.dependsOn || []).filter((d) => ids.has(d)).map((d) => [d, t.id])),
    };
  }
  const gates = [];
  const edges = [];
  milestones.forEach((m, i) => {
    if (i === milestones.length - 1) return;
    const gate = `M${m.id}`;
    gates.push(gate);
    m.tasks.forEach((t) => edges.push([t.id, gate]));
    milestones[i + 1].tasks.forEach((t) => edges.push([gate, t.id]));
  });
  return { gates, edges };
}

function layoutOf(milestones) {
  const { gates, edges } = edgesOf(milestones);
  const key = JSON.stringify([milestones.map((m) => m.tasks.map((t) => t.id)), edges]);
  if (cached.key === key) return cached.layout;
  const g = new dagre.graphlib.Graph();
  g.setGraph({ rankdir: 'LR', nodesep: 10, ranksep: 36, marginx: 8, marginy: 8 });
  g.setDefaultEdgeLabel(() => ({}));
  milestones.forEach((m) => m.tasks.forEach((t) => g.setNode(t.id, { ...NODE })));
  gates.forEach((gate) => g.setNode(gate, { width: 36, height: 20, gate: true }));
  edges.forEach(([from, to]) => g.setEdge(from, to));
  dagre.layout(g);
  const layout = {
    width: g.graph().width,
    height: g.graph().height,
    nodes: g.nodes().map((id) => ({ id, ...g.node(id) })),
    edges: g.edges().map((e) => ({ from: e.v, to: e.w, points: g.edge(e).points })),
  };
  cached = { key, layout };
  return layout;
}

const path = (points) =>
  points.map((p, i) => `${i ? 'L' : 'M'}${p.x.toFixed(1)},${p.y.toFixed(1)}`).join(' ');

export function DependencyGraph({ milestones, onSelect }) {
  const tasks = milestones.flatMap((m) => m.tasks);
  if (!tasks.length) return '';
  if (tasks.length > MAX_NODES) {
    return html`<section class="graph">
      <h2>Dependencies</h2>
      <p class="graph-note muted">
        ${tasks.length} tasks, more than ${MAX_NODES}: too many to draw as a graph. The lanes list every task
        and the agent runs show when each ran.
      </p>
    </section>`;
  }
  const status = new Map(tasks.map((t) => [t.id, t.status]));
  const { width, height, nodes, edges } = layoutOf(milestones);
  return html`<section class="graph">
    <h2>Dependencies</h2>
    <svg
      class="dag"
      width=${width}
      height=${height}
      viewBox=${`0 0 ${width} ${height}`}
      role="img"
      aria-label="task dependency graph"
    >
      ${edges.map(
        (e) =>
          html`<path
            key=${`${e.from}>${e.to}`}
            class="edge"
            data-edge=${`${e.from}>${e.to}`}
            d=${path(e.points)}
          />`,
      )}
      ${nodes.map(
        (n) =>
          html`<g
            key=${n.id}
            class=${n.gate ? 'node gate' : `node state-${status.get(n.id)}`}
            data-node=${n.id}
            transform=${`translate(${n.x - n.width / 2},${n.y - n.height / 2})`}
            onClick=${n.gate ? undefined : () => onSelect(n.id)}
          >
            <rect width=${n.width} height=${n.height} rx="5" />
            <text x=${n.width / 2} y=${n.height / 2 + 4} text-anchor="middle">${n.id}</text>
          </g>`,
      )}
    </svg>
  </section>`;
}
