/**
 * Environment discovery, the part that runs nothing (docs/PROCEDURE.md §2.2): from the contents of the repo's
 * own files (package.json, pyproject.toml, Cargo.toml, go.mod, Makefile, Dockerfile) learn the program type
 * and the candidate test/build/lint/typecheck commands. Pure; activities/planning/discovery.ts reads the files and
 * confirms each command by running it.
 */
import { z } from 'zod';
import type { DiscoveredCommand, Environment } from './environment';

/** The files whose contents detection reads, when the repo root has them. */
export const MANIFESTS = [
  'package.json',
  'tsconfig.json',
  'pyproject.toml',
  'setup.cfg',
  'setup.py',
  'tox.ini',
  'pytest.ini',
  'mypy.ini',
  'Cargo.toml',
  'go.mod',
  'Makefile',
  'Dockerfile',
] as const;

export type RepoFiles = Partial<Record<(typeof MANIFESTS)[number], string>> & { rootEntries: string[] };

type Purpose = DiscoveredCommand['purpose'];
export interface CommandCandidate {
  purpose: Purpose;
  argv: string[];
  source: string;
}

export interface ProjectFindings {
  programType: Environment['programType'];
  programTypeReason: string;
  languages: string[];
  candidates: CommandCandidate[];
  launch: CommandCandidate | null;
  notes: string[];
}

const PackageJsonSchema = z
  .object({
    scripts: z.record(z.string()).default({}),
    dependencies: z.record(z.string()).default({}),
    devDependencies: z.record(z.string()).default({}),
    bin: z.union([z.string(), z.record(z.string())]).optional(),
    main: z.string().optional(),
  })
  .passthrough();

const firstMatch = (names: string[], wanted: string[]) => wanted.find((w) => names.includes(w));

/** Package names mentioned in a TOML/go.mod/Python manifest (rough, but enough for hints). */
const mentions = (text: string | undefined, name: string) =>
  !!text &&
  new RegExp(`(^|[^A-Za-z0-9_-])${name.replace(/[/.]/g, '\\$&')}([^A-Za-z0-9_-]|$)`, 'mi').test(text);

function makeTargets(makefile: string | undefined): string[] {
  if (!makefile) return [];
  const targets = [...makefile.matchAll(/^([A-Za-z0-9_][A-Za-z0-9_.-]*)\s*:(?!=)/gm)].map((m) => m[1]);
  return [...new Set(targets)];
}

function detectNode(files: RepoFiles, found: ProjectFindings): boolean {
  if (!files['package.json']) return false;
  let json: unknown;
  try {
    json = JSON.parse(files['package.json']);
  } catch {
    json = null;
  }
  const parsed = PackageJsonSchema.safeParse(json);
  if (!parsed.success) {
    found.notes.push('package.json could not be read as a package manifest');
    return false;
  }
  const pkg = parsed.data;
  const deps = Object.keys({ ...pkg.dependencies, ...pkg.devDependencies });
  found.languages.push(deps.includes('typescript') || files['tsconfig.json'] ? 'TypeScript' : 'JavaScript');

  const kinds: [Environment['programType'], string[]][] = [
    ['native GUI', ['electron']],
    ['TUI', ['ink', 'blessed', 'neo-blessed', 'react-blessed', 'terminal-kit']],
    [
      'web app',
      ['next', 'react', 'vue', 'nuxt', 'svelte', '@sveltejs/kit', '@angular/core', 'vite', 'solid-js'],
    ],
    ['backend service', ['express', 'fastify', 'koa', '@nestjs/core', '@hapi/hapi', 'hono']],
  ];
  const kind = kinds.find(([, names]) => firstMatch(deps, names));
  if (kind) {
    found.programType = kind[0];
    found.programTypeReason = `package.json depends on ${firstMatch(deps, kind[1])}`;
  } else if (pkg.bin) {
    found.programType = 'CLI/library';
    found.programTypeReason = 'package.json has a bin field';
  } else {
    found.programType = 'CLI/library';
    found.programTypeReason = 'package.json without UI or server dependencies';
  }

  const pm = files.rootEntries.includes('pnpm-lock.yaml')
    ? 'pnpm'
    : files.rootEntries.includes('yarn.lock')
      ? 'yarn'
      : 'npm';
  const script = (purpose: Purpose, names: string[]) => {
    const name = names.find((n) => pkg.scripts[n]);
    if (!name) return;
    // `npm init` writes a test script that always fails: it is not a test runner.
    if (name === 'test' && /no test specified/.test(pkg.scripts.test)) {
      found.notes.push('package.json test script is the npm placeholder');
      return;
    }
    const argv = name === 'test' ? [pm, 'test'] : [pm, 'run', name];
    found.candidates.push({ purpose, argv, source: `package.json scripts.${name}` });
  };
  script('test', ['test']);
  script('build', ['build']);
  script('lint', ['lint']);
  script('typecheck', ['typecheck', 'type-check', 'check-types', 'tsc']);
  if (files['tsconfig.json'] && deps.includes('typescript')) {
    found.candidates.push({
      purpose: 'typecheck',
      argv: ['npx', 'tsc', '--noEmit'],
      source: 'tsconfig.json',
    });
  }
  if (pkg.scripts.start)
    found.launch = { purpose: 'launch', argv: [pm, 'start'], source: 'package.json scripts.start' };
  else if (pkg.scripts.dev) {
    found.launch = { purpose: 'launch', argv: [pm, 'run', 'dev'], source: 'package.json scripts.dev' };
  } else if (pkg.bin) {
    const bin = typeof pkg.bin === 'string' ? pkg.bin : Object.values(pkg.bin)[0];
    if (bin) found.launch = { purpose: 'launch', argv: ['node', bin], source: 'package.json bin' };
  }
  return true;
}

function detectPython(files: RepoFiles, found: ProjectFindings): boolean {
  const manifest = [files['pyproject.toml'], files['setup.cfg'], files['setup.py']]
    .filter(Boolean)
    .join('\n');
  if (!manifest) return false;
  found.languages.push('Python');
  const has = (name: string) => mentions(manifest, name);
  const kinds: [Environment['programType'], string[]][] = [
    ['native GUI', ['PyQt5', 'PyQt6', 'PySide6', 'kivy', 'wxPython']],
    ['TUI', ['textual', 'urwid', 'npyscreen', 'prompt_toolkit']],
    ['web app', ['django', 'flask', 'streamlit']],
    ['backend service', ['fastapi', 'aiohttp', 'tornado', 'starlette']],
  ];
  const kind = kinds.find(([, names]) => names.some(has));
  found.programType = kind?.[0] ?? 'CLI/library';
  found.programTypeReason = kind
    ? `Python project depends on ${kind[1].find(has)}`
    : 'Python project without UI or server dependencies';
  const pytestConfigured =
    has('pytest') ||
    !!files['pytest.ini'] ||
    /\[tool:pytest\]|\[pytest\]/.test(manifest + (files['tox.ini'] ?? ''));
  if (pytestConfigured)
    found.candidates.push({ purpose: 'test', argv: ['pytest'], source: 'pytest configuration' });
  if (files['tox.ini']) found.candidates.push({ purpose: 'test', argv: ['tox'], source: 'tox.ini' });
  if (has('ruff'))
    found.candidates.push({ purpose: 'lint', argv: ['ruff', 'check', '.'], source: 'ruff configuration' });
  else if (has('flake8'))
    found.candidates.push({ purpose: 'lint', argv: ['flake8'], source: 'flake8 configuration' });
  if (has('mypy') || files['mypy.ini']) {
    found.candidates.push({ purpose: 'typecheck', argv: ['mypy', '.'], source: 'mypy configuration' });
  }
  const script = /\[project\.scripts\]\s*\n\s*([A-Za-z0-9_.-]+)\s*=/.exec(files['pyproject.toml'] ?? '')?.[1];
  if (script)
    found.launch = { purpose: 'launch', argv: [script], source: 'pyproject.toml [project.scripts]' };
  return true;
}

function detectRust(files: RepoFiles, found: ProjectFindings): boolean {
  const cargo = files['Cargo.toml'];
  if (!cargo) return false;
  found.languages.push('Rust');
  const kinds: [Environment['programType'], string[]][] = [
    ['native GUI', ['tauri', 'eframe', 'egui', 'iced', 'gtk', 'slint']],
    ['TUI', ['ratatui', 'tui', 'cursive']],
    ['backend service', ['actix-web', 'axum', 'rocket', 'warp']],
  ];
  const kind = kinds.find(([, names]) => names.some((n) => mentions(cargo, n)));
  const isBin = /^\[\[bin\]\]/m.test(cargo) || files.rootEntries.includes('src/main.rs');
  found.programType = kind?.[0] ?? 'CLI/library';
  found.programTypeReason = kind
    ? `Cargo.toml depends on ${kind[1].find((n) => mentions(cargo, n))}`
    : isBin
      ? 'Cargo.toml declares a binary'
      : 'Cargo library crate';
  found.candidates.push(
    { purpose: 'test', argv: ['cargo', 'test'], source: 'Cargo.toml' },
    { purpose: 'build', argv: ['cargo', 'build'], source: 'Cargo.toml' },
    { purpose: 'lint', argv: ['cargo', 'clippy'], source: 'Cargo.toml' },
    { purpose: 'typecheck', argv: ['cargo', 'check'], source: 'Cargo.toml' },
  );
  if (isBin) found.launch = { purpose: 'launch', argv: ['cargo', 'run'], source: 'Cargo.toml binary' };
  return true;
}

function detectGo(files: RepoFiles, found: ProjectFindings): boolean {
  const mod = files['go.mod'];
  if (!mod) return false;
  found.languages.push('Go');
  const kinds: [Environment['programType'], string[]][] = [
    ['native GUI', ['fyne.io/fyne', 'gioui.org']],
    ['TUI', ['github.com/charmbracelet/bubbletea', 'github.com/rivo/tview', 'github.com/gdamore/tcell']],
    ['backend service', ['github.com/gin-gonic/gin', 'github.com/labstack/echo', 'github.com/gofiber/fiber']],
  ];
  const kind = kinds.find(([, names]) => names.some((n) => mod.includes(n)));
  const hasMain = files.rootEntries.includes('main.go') || files.rootEntries.includes('cmd');
  found.programType = kind?.[0] ?? 'CLI/library';
  found.programTypeReason = kind
    ? `go.mod requires ${kind[1].find((n) => mod.includes(n))}`
    : hasMain
      ? 'Go module with a main package'
      : 'Go library module';
  found.candidates.push(
    { purpose: 'test', argv: ['go', 'test', './...'], source: 'go.mod' },
    { purpose: 'build', argv: ['go', 'build', './...'], source: 'go.mod' },
    { purpose: 'lint', argv: ['go', 'vet', './...'], source: 'go.mod' },
  );
  if (files.rootEntries.includes('main.go')) {
    found.launch = { purpose: 'launch', argv: ['go', 'run', '.'], source: 'main.go' };
  }
  return true;
}

const blankFindings = (): ProjectFindings => ({
  programType: 'unknown',
  programTypeReason: 'no manifest the saga recognises (package.json, pyproject.toml, Cargo.toml, go.mod)',
  languages: [],
  candidates: [],
  launch: null,
  notes: [],
});

/** Everything that can be learned without running anything. Earlier sources win per purpose. */
export function detectProject(files: RepoFiles): ProjectFindings {
  let found = blankFindings();
  let known = false;
  for (const detect of [detectNode, detectPython, detectRust, detectGo]) {
    const scratch = blankFindings();
    if (!detect(files, scratch)) {
      found.notes.push(...scratch.notes);
    } else if (!known) {
      found = { ...scratch, notes: [...found.notes, ...scratch.notes] };
      known = true;
    } else {
      // The first project kind decides type and commands; later ones only add languages.
      found.languages.push(...scratch.languages);
    }
  }
  const manifestCandidates = found.candidates;

  // The Makefile is the project's own front door: its targets come before language defaults.
  const targets = makeTargets(files.Makefile);
  const makeCandidates: CommandCandidate[] = [];
  const target = (purpose: Purpose, names: string[]) => {
    const name = firstMatch(targets, names);
    if (name) makeCandidates.push({ purpose, argv: ['make', name], source: `Makefile target ${name}` });
  };
  target('test', ['test', 'check', 'tests']);
  target('build', ['build', 'all']);
  target('lint', ['lint']);
  target('typecheck', ['typecheck', 'type-check', 'types']);
  const fromScripts = manifestCandidates.filter((c) => c.source.startsWith('package.json'));
  const defaults = manifestCandidates.filter((c) => !c.source.startsWith('package.json'));
  found.candidates = [...fromScripts, ...makeCandidates, ...defaults];

  const runTarget = firstMatch(targets, ['run', 'start', 'serve', 'dev']);
  if (!found.launch && runTarget) {
    found.launch = { purpose: 'launch', argv: ['make', runTarget], source: `Makefile target ${runTarget}` };
  }
  if (!known && files.Dockerfile) {
    const exposes = /^EXPOSE\s+\S+/m.test(files.Dockerfile);
    found.programType = exposes ? 'backend service' : 'unknown';
    found.programTypeReason = exposes ? 'Dockerfile exposes a port' : found.programTypeReason;
  } else if (!known && targets.length > 0) {
    found.programTypeReason = 'only a Makefile: program type not evident';
    found.notes.push(`Makefile targets: ${targets.join(', ')}`);
  }
  return found;
}
