/** Project detection from the repo's own files: contents in, findings out, nothing run. */
import { detectProject } from '../../../../src/domain/planning/discovery';

describe('detectProject', () => {
  const pkg = (extra: object) => JSON.stringify({ name: 'x', ...extra });

  it.each([
    [{ dependencies: { express: '4' } }, 'backend service', 'express'],
    [{ dependencies: { react: '18', 'react-dom': '18' } }, 'web app', 'react'],
    [{ dependencies: { ink: '4' } }, 'TUI', 'ink'],
    [{ devDependencies: { electron: '30' } }, 'native GUI', 'electron'],
  ])('reads the program type of a node project from its dependencies (%j)', (extra, type, reason) => {
    const found = detectProject({ 'package.json': pkg(extra), rootEntries: ['package.json'] });
    expect(found.programType).toBe(type);
    expect(found.programTypeReason).toContain(reason);
  });

  it('skips the npm placeholder test script and adds a tsc typecheck for TypeScript', () => {
    const found = detectProject({
      'package.json': pkg({
        scripts: { test: 'echo "Error: no test specified" && exit 1', build: 'tsc' },
        devDependencies: { typescript: '5' },
      }),
      'tsconfig.json': '{}',
      rootEntries: ['package.json', 'tsconfig.json', 'pnpm-lock.yaml'],
    });
    expect(found.languages).toEqual(['TypeScript']);
    expect(found.candidates.map((c) => [c.purpose, c.argv.join(' ')])).toEqual([
      ['build', 'pnpm run build'],
      ['typecheck', 'npx tsc --noEmit'],
    ]);
  });

  it('uses cargo for a Rust binary and go tooling for a Go module', () => {
    const rust = detectProject({
      'Cargo.toml': '[package]\nname = "x"\n\n[[bin]]\nname = "x"\n\n[dependencies]\nratatui = "0.28"\n',
      rootEntries: ['Cargo.toml'],
    });
    expect(rust).toMatchObject({ programType: 'TUI', languages: ['Rust'] });
    expect(rust.candidates.map((c) => c.argv.join(' '))).toEqual([
      'cargo test',
      'cargo build',
      'cargo clippy',
      'cargo check',
    ]);
    expect(rust.launch?.argv).toEqual(['cargo', 'run']);

    const go = detectProject({ 'go.mod': 'module x\n', rootEntries: ['go.mod', 'main.go'] });
    expect(go.candidates.map((c) => c.argv.join(' '))).toEqual([
      'go test ./...',
      'go build ./...',
      'go vet ./...',
    ]);
    expect(go.programTypeReason).toBe('Go module with a main package');
  });

  it('prefers a Makefile target over language defaults, and reads pytest from pyproject', () => {
    const found = detectProject({
      'pyproject.toml': '[project]\nname = "x"\ndependencies = ["fastapi"]\n\n[tool.pytest.ini_options]\n',
      Makefile: 'lint:\n\truff check .\n',
      rootEntries: ['pyproject.toml', 'Makefile'],
    });
    expect(found.programType).toBe('backend service');
    expect(found.candidates.map((c) => [c.purpose, c.argv.join(' ')])).toEqual([
      ['lint', 'make lint'],
      ['test', 'pytest'],
    ]);
  });
});
