/**
 * How parallel the fleet really was: every task's latest run as a bar from `startedAt` to `endedAt` (a
 * running task's bar reaches now and grows each second), packed greedily into rows (a run takes the first
 * row free at its start), so the number of rows is the most agents that ran at once. Plain SVG rects and
 * text nodes, one click handler for the chart, so a thousand runs stay cheap to redraw.
 */
import { Component, createRef, html } from './html.js';
import { duration } from './format.js';

const ROW = 22;
const SLIM_ROW = 8; // rows this thin when there are more than SLIM_ABOVE of them (no labels then)
const SLIM_ABOVE = 24;
const AXIS = 18;
const PAD = 4;
const CHAR_PX = 7; // label width estimate per character (11px monospace-ish digits)
const STEPS_S = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400];
const MAX_TICKS = 8;

/**
 * The runs to draw: tasks with a start; a running one ends now (or later, when its agent's own elapsed
 * time says so, as the page's clock may lag the server's); a stopped one at `endedAt`, and without it,
 * it is not drawn.
 */
export function runsOf(milestones, agents, now) {
  const runs = [];
  for (const m of milestones) {
    for (const t of m.tasks) {
      const start = t.startedAt ? Date.parse(t.startedAt) : NaN;
      if (!Number.isFinite(start)) continue;
      const running = t.status === 'running';
      const end = running
        ? Math.max(now, start + (agents?.[t.id]?.elapsedMs ?? 0))
        : t.endedAt
          ? Date.parse(t.endedAt)
          : NaN;
      if (!Number.isFinite(end)) continue;
      runs.push({ ref: t.id, status: t.status, running, start, end: Math.max(start, end), row: 0 });
    }
  }
  return runs;
}

/** Sorts the runs by start and gives each the first row free at its start; returns the number of rows. */
export function pack(runs) {
  runs.sort((a, b) => a.start - b.start || a.end - b.end);
  const ends = []; // each row's latest end
  for (const run of runs) {
    let row = ends.findIndex((end) => end <= run.start);
    if (row < 0) row = ends.push(0) - 1;
    ends[row] = run.end;
    run.row = row;
  }
  return ends.length;
}

/** "0", "30s", "5m", "1h 30m": an axis label for seconds since the first start. */
function tickLabel(s) {
  if (s === 0) return '0';
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (s < 3600) return s % 60 ? `${m}m ${s % 60}s` : `${m}m`;
  return m % 60 ? `${Math.floor(m / 60)}h ${m % 60}m` : `${m / 60}h`;
}

/** Tick positions in seconds, at most MAX_TICKS + 1 of them, on a round step. */
function ticksOf(spanMs) {
  const s = spanMs / 1000;
  const step = STEPS_S.find((x) => s / x <= MAX_TICKS) ?? Math.ceil(s / MAX_TICKS / 86400) * 86400;
  const ticks = [];
  for (let t = 0; t <= s; t += step) ticks.push(t);
  return ticks;
}

const plural = (n, one, many) => `${n} ${n === 1 ? one : many}`;

class RunChart extends Component {
  constructor(props) {
    super(props);
    this.state = { width: 900, tick: 0 };
    this.section = createRef(); // measured: the chart is drawn in pixels
  }

  componentDidMount() {
    this.measure();
    if (window.ResizeObserver) {
      this.observer = new window.ResizeObserver(() => this.measure());
      this.observer.observe(this.section.current);
    }
    // Drawn only while near the viewport: a thousand runs redrawn on every event (and each second) in
    // every open tab is what made ten tabs slow; shown again, it draws the latest at once.
    this.inView = true;
    this.seen = new globalThis.IntersectionObserver(
      ([entry]) => {
        this.inView = entry.isIntersecting;
        if (this.inView && this.stale) this.forceUpdate();
      },
      { rootMargin: '50% 0px' },
    );
    this.seen.observe(this.section.current);
    // Only a running bar changes between events: redraw each second while one runs.
    this.timer = window.setInterval(() => {
      if (!this.inView) return;
      if (this.props.milestones.some((m) => m.tasks.some((t) => t.status === 'running' && t.startedAt)))
        this.setState({ tick: this.state.tick + 1 });
    }, 1000);
  }

  componentWillUnmount() {
    window.clearInterval(this.timer);
    this.observer?.disconnect();
    this.seen?.disconnect();
  }

  shouldComponentUpdate() {
    if (!this.inView) this.stale = true;
    return this.inView;
  }

  measure() {
    const width = Math.floor(this.section.current?.clientWidth || 0);
    if (width > 0 && width !== this.state.width) this.setState({ width });
  }

  select(event) {
    const ref = event.target.closest?.('[data-run]')?.getAttribute('data-run');
    if (ref) this.props.onSelect(ref);
  }

  render({ milestones, agents, selected }, { width }) {
    this.stale = false;
    const runs = runsOf(milestones, agents, Date.now());
    const rows = pack(runs);
    const t0 = runs.length ? runs[0].start : 0;
    const last = runs.reduce((max, r) => Math.max(max, r.end), t0);
    const span = Math.max(last - t0, 1000);
    const live = runs.some((r) => r.running);
    const row = rows > SLIM_ABOVE ? SLIM_ROW : ROW;
    const barH = rows > SLIM_ABOVE ? SLIM_ROW - 2 : ROW - 6;
    const plot = Math.max(width - 2 * PAD, 50);
    const x = (ms) => PAD + ((ms - t0) / span) * plot;
    const chartH = rows * row;
    const ticks = ticksOf(span);
    return html`<section
      ref=${this.section}
      class="runs"
      data-rows=${rows}
      data-runs=${runs.length}
      data-live=${live}
    >
      <h2>Agent runs</h2>
      <p class="runs-caption muted">
        ${`peak ${plural(rows, 'agent', 'agents')} at once · ${plural(runs.length, 'run', 'runs')} · ${duration(span)}${live ? ' so far' : ''}`}
      </p>
      <svg
        class="runs-chart"
        width=${width}
        height=${chartH + AXIS}
        role="img"
        aria-label=${`agent runs over time: ${rows} rows`}
        onClick=${(e) => this.select(e)}
      >
        ${ticks.map(
          (s) =>
            html`<line
              key=${`g${s}`}
              class="grid"
              x1=${x(t0 + s * 1000)}
              x2=${x(t0 + s * 1000)}
              y1="0"
              y2=${chartH}
            />`,
        )}
        ${runs.map((run) => {
          const left = x(run.start);
          const w = Math.max(x(run.end) - left, 2);
          const y = run.row * row + (row - barH) / 2;
          const label = barH >= 12 && w >= run.ref.length * CHAR_PX + 8;
          return html`<g
            key=${run.ref}
            class=${`run state-${run.status}${selected === run.ref ? ' selected' : ''}`}
            data-run=${run.ref}
            data-row=${run.row}
          >
            <rect x=${left.toFixed(1)} y=${y} width=${w.toFixed(1)} height=${barH} rx="3">
              <title>
                ${`${run.ref} · ${run.status} · ${duration(run.end - run.start)}${run.running ? ' so far' : ''}`}
              </title>
            </rect>
            ${label && html`<text x=${(left + 4).toFixed(1)} y=${y + barH - 4}>${run.ref}</text>`}
          </g>`;
        })}
        ${ticks.map((s, i) => {
          const at = x(t0 + s * 1000);
          const anchor = i === 0 ? 'start' : at > width - 30 ? 'end' : 'middle';
          return html`<text key=${`t${s}`} class="tick" x=${at} y=${chartH + AXIS - 5} text-anchor=${anchor}>
            ${tickLabel(s)}
          </text>`;
        })}
      </svg>
    </section>`;
  }
}

/** The chart, or nothing while no task has started. */
export function RunTimeline({ milestones, agents, selected, onSelect }) {
  if (!milestones.some((m) => m.tasks.some((t) => t.startedAt))) return '';
  return html`<${RunChart}
    milestones=${milestones}
    agents=${agents}
    selected=${selected}
    onSelect=${onSelect}
  />`;
}
