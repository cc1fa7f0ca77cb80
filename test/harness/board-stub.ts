/**
 * A stand-in for the board server (the saga board API contract: src/client/board/routes.ts, views.ts) so the
 * page can be tested in Chromium without it: serves src/client/board/public, the vendor files VENDOR.md
 * lists (and no others), and a stubbed /api with SagaStatus fixtures and live `agents`, an SSE endpoint the
 * test pushes to, and a recorded respond.
 */
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Interaction, SagaStatus, TaskState } from '../../src/domain/contract/state';

const ROOT = path.resolve(__dirname, '..', '..');
export const PUBLIC_DIR = path.join(ROOT, 'src', 'client', 'board', 'public');
const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
};

/** The `/vendor/...` paths VENDOR.md names: the server's allow-list must match it. */
export function vendorFiles(): string[] {
  return [...readFileSync(path.join(PUBLIC_DIR, 'VENDOR.md'), 'utf8').matchAll(/`(\/vendor\/[^`]+)`/g)].map(
    (m) => m[1],
  );
}

/** A task as the board shows it: the status's TaskState and the fields the board adds (dependencies, run times). */
export type BoardTask = TaskState & {
  dependsOn?: string[];
  startedAt?: string | null;
  endedAt?: string | null;
};

export interface ExitResult {
  id: string;
  result: 'passed' | 'failed' | 'not-checkable';
  evidence: string | null;
}

/** `saga status --json` with the saga-level additions (latest final validation, budget). */
export type BoardStatus = SagaStatus & {
  exitResults?: ExitResult[];
  budgetUsd?: number | null;
};

/** A running task's live agent, as the board's view carries it under `agents[ref]`. */
export interface AgentView {
  lastLine: string;
  elapsedMs: number | null;
  step: string | null;
  attempt: number | null;
  usage: { inputTokens: number; outputTokens: number; costUsd: number } | null;
}

export function task(id: string, status: TaskState['status'], extra: Partial<BoardTask> = {}): BoardTask {
  const [milestone, n] = id.split('.').map(Number);
  return {
    id,
    key: `m${milestone}t${n}`,
    milestone,
    task: n,
    slug: `task-${milestone}-${n}`,
    title: `Task ${id} title`,
    status,
    branch: `saga/demo/m${milestone}t${n}`,
    commit: null,
    attempts: 1,
    delegations: 1,
    evidence: [],
    workflowId: `saga-demo-m${milestone}t${n}`,
    runId: null,
    worktree: null,
    reason: null,
    changedFiles: [],
    usage: { inputTokens: 12_000, outputTokens: 3_400, costUsd: 0.42 },
    agent: { profile: 'claude', sessionId: null },
    ...extra,
  };
}

export function interaction(
  id: string,
  kind: Interaction['kind'],
  prompt: string,
  options: string[],
): Interaction {
  return {
    id,
    kind,
    prompt,
    options,
    recommended: 0,
    textRequiredFor: [],
    owner: 'saga-demo',
    openedAt: new Date().toISOString(),
  };
}

export function statusFixture(
  tasks: BoardTask[],
  pending: Interaction[],
  extra: Partial<BoardStatus> = {},
): BoardStatus {
  return {
    name: 'demo',
    workflowId: 'saga-demo',
    phase: 'implementation',
    goal: 'Add a greeting command',
    repo: '/repo',
    flags: {
      quality_locked: false,
      autonomous: false,
      subagents: false,
      parallel: true,
      goal: 'Add a greeting command',
      error: null,
      quality_locked_source: null,
      autonomous_source: null,
      subagents_source: null,
      parallel_source: 'flag',
      parallel_lanes: 2,
      parallel_note: null,
    },
    executionMode: 'local',
    pending,
    milestones: [1, 2].map((id) => ({
      id,
      slug: `m${id}`,
      title: `Milestone ${id}`,
      status: id === 1 ? 'running' : 'pending',
      tasks: tasks.filter((t) => t.milestone === id),
      integrationCommit: null,
    })),
    integrationBranch: 'saga/demo/integration',
    sagaDir: '/home/.saga/demo',
    uiUrl: 'http://localhost:8233',
    round: 1,
    usage: { inputTokens: 24_000, outputTokens: 6_800, costUsd: 0.84 },
    planSummary: null,
    log: ['task 1.1 started'],
    ...extra,
  };
}

export interface Respond {
  headers: http.IncomingHttpHeaders;
  body: unknown;
}

export class BoardStub {
  readonly responds: Respond[] = [];
  /** What the next POST /respond answers. */
  reply: { code: number; body: unknown } = { code: 200, body: { answer: { choice: 'confirm' } } };
  /** REPORT.md as GET /report gives it. */
  report: string | null = null;
  private readonly streams = new Set<http.ServerResponse>();
  private readonly server = http.createServer((req, res) => this.handle(req, res));
  private readonly vendor = new Set(vendorFiles());

  constructor(
    public status: BoardStatus,
    public sagas: unknown[],
    /** Each running task's live agent (`agents` of the view), by task ref. */
    public agents: Record<string, AgentView> = {},
  ) {}

  /** Event streams opened so far. */
  opened = 0;

  /** Sends one event as the board server writes it (a numbered `status`, a `status-delta`) to every stream. */
  sendEvent(event: string, data: unknown, id?: number): void {
    const idLine = id === undefined ? '' : `id: ${id}\n`;
    for (const s of this.streams) s.write(`event: ${event}\n${idLine}data: ${JSON.stringify(data)}\n\n`);
  }

  /** Event streams open now (one per visible page). */
  openStreams(): number {
    return this.streams.size;
  }

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    for (const s of this.streams) s.end();
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }

  detail() {
    return {
      status: this.status,
      agents: this.agents,
      links: { saga: 'http://ui/saga', list: 'http://ui/list', tasks: { '1.1': 'http://ui/t11' } },
    };
  }

  /** Sends `status` (one saga) to every open stream. */
  push(): void {
    for (const s of this.streams) s.write(`event: status\ndata: ${JSON.stringify(this.detail())}\n\n`);
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://stub');
    if (url.pathname.startsWith('/api/')) return this.api(req, res, url);
    if (url.pathname.startsWith('/vendor/')) {
      if (!this.vendor.has(url.pathname)) return send(res, 404, 'not in VENDOR.md');
      return file(res, path.join(ROOT, 'node_modules', url.pathname.slice('/vendor/'.length)));
    }
    const name = url.pathname === '/' ? 'index.html' : url.pathname.slice(1);
    if (!/^[a-z-]+\.(html|js|css)$/.test(name)) return send(res, 404, 'not found');
    return file(res, path.join(PUBLIC_DIR, name));
  }

  private api(req: http.IncomingMessage, res: http.ServerResponse, url: URL): void {
    const p = url.pathname;
    if (p === '/api/events') {
      res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
      this.streams.add(res);
      this.opened++;
      req.on('close', () => this.streams.delete(res));
      if (url.searchParams.get('saga'))
        res.write(`event: status\ndata: ${JSON.stringify(this.detail())}\n\n`);
      else res.write(`event: sagas\ndata: ${JSON.stringify({ sagas: this.sagas })}\n\n`);
      return;
    }
    if (p === '/api/sagas') return json(res, 200, { sagas: this.sagas });
    if (p === '/api/sagas/demo') return json(res, 200, this.detail());
    if (p === '/api/sagas/demo/respond' && req.method === 'POST') {
      let raw = '';
      req.on('data', (c) => (raw += c));
      req.on('end', () => {
        this.responds.push({ headers: req.headers, body: JSON.parse(raw) });
        json(res, this.reply.code, this.reply.body);
      });
      return;
    }
    if (p.endsWith('/transcript'))
      return json(res, 200, { lines: ['<b>agent line one</b>', 'agent line two'] });
    if (p.endsWith('/diff')) return json(res, 200, { diff: '--- a/x\n+++ b/x\n@@ -1 +1 @@\n-old\n+new' });
    if (p.endsWith('/report')) return json(res, 200, { markdown: this.report });
    json(res, 404, { error: 'no such route' });
  }
}

function send(res: http.ServerResponse, code: number, text: string): void {
  res.writeHead(code, { 'Content-Type': 'text/plain' }).end(text);
}

function json(res: http.ServerResponse, code: number, body: unknown): void {
  res.writeHead(code, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
}

function file(res: http.ServerResponse, full: string): void {
  try {
    const body = readFileSync(full);
    res.writeHead(200, { 'Content-Type': TYPES[path.extname(full)] ?? 'application/octet-stream' }).end(body);
  } catch {
    send(res, 404, 'not found');
  }
}
