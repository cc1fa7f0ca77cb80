/** Benchmark figures as the benchmark output contract prints them: one JSON object per line, then a readable table. */
import { writeFileSync } from 'node:fs';
import os from 'node:os';

export interface Figure {
  figure: string;
  /** The statistic (`median`, `p95`, `max`) or the case (`4 lanes`, `saga workflow`); short and stable. */
  stat: string;
  value: number;
  unit: string;
  /** null: no target is set for this figure; it is shown for information. */
  target: number | null;
  better: 'lower' | 'higher';
  ok: boolean | null;
  /** What was measured, in words: shown in the table, not part of the JSON line. */
  scenario: string;
}

export function figure(
  name: string,
  stat: string,
  value: number,
  unit: string,
  target: number | null,
  scenario = '',
  /** Which way is good: most figures are times and sizes; a throughput is better higher. */
  better: Figure['better'] = 'lower',
): Figure {
  const rounded = unit === 'ratio' ? Math.round(value * 1000) / 1000 : Math.round(value * 10) / 10;
  const ok = target === null ? null : better === 'lower' ? value < target : value > target;
  return { figure: name, stat, value: rounded, unit, target, better, ok, scenario };
}

/**
 * A figure that could not be measured here: no value (null in its JSON line), ok null, and why in its
 * scenario, so the table says it was skipped instead of leaving it out.
 */
export function skippedFigure(
  name: string,
  stat: string,
  unit: string,
  target: number | null,
  why: string,
): Figure {
  return {
    figure: name,
    stat,
    value: NaN,
    unit,
    target,
    better: 'lower',
    ok: null,
    scenario: `skipped: ${why}`,
  };
}

/** The JSON line of the benchmark output contract: exactly figure, stat, value, unit, target, better, ok. */
export function figureLine(f: Figure): string {
  const { scenario: _scenario, ...line } = f;
  return JSON.stringify(line);
}

/** The q-quantile by nearest rank (q = 0.5 median, 0.95 p95). */
export function quantile(values: number[], q: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil(q * sorted.length));
  return sorted[rank - 1]!;
}

export function table(figures: Figure[]): string {
  const rows = figures.map((f) => [
    f.figure,
    f.stat,
    f.scenario,
    Number.isNaN(f.value) ? 'skipped' : `${f.value} ${f.unit}`,
    f.target === null ? '-' : `${f.better === 'lower' ? '<' : '>'} ${f.target} ${f.unit}`,
    f.ok === null ? (Number.isNaN(f.value) ? 'skipped' : 'info') : f.ok ? 'ok' : 'MISSED',
  ]);
  const header = ['figure', 'stat', 'scenario', 'value', 'target', ''];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

/**
 * A benchmark's end: the machine's load at start and end and the wall time join the figures, then one JSON
 * line per figure and the table on stdout (and the lines in BENCH_OUT when set).
 */
export function printFigures(figures: Figure[], started: { at: number; load: number }): void {
  const cores = `${os.cpus().length} cores`;
  figures.push(figure('machine_load_1min', 'start', started.load, 'processes', null, cores));
  figures.push(figure('machine_load_1min', 'end', os.loadavg()[0]!, 'processes', null, cores));
  figures.push(figure('bench_wall_time_s', 'total', (Date.now() - started.at) / 1000, 's', null));
  for (const f of figures) process.stdout.write(`${figureLine(f)}\n`);
  process.stdout.write(`\n${table(figures)}\n`);
  if (process.env.BENCH_OUT) writeFileSync(process.env.BENCH_OUT, figures.map(figureLine).join('\n') + '\n');
}

/** Runs a benchmark's main and exits: 0, or 1 with the stack named by `label`. */
export function runBench(label: string, main: () => Promise<void>): void {
  main().then(
    () => process.exit(0),
    (error: unknown) => {
      process.stderr.write(`[${label}] failed: ${String((error as Error).stack ?? error)}\n`);
      process.exit(1);
    },
  );
}
