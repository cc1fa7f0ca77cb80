#!/usr/bin/env node
// `npm run build`, last step: the CLI's client side as one file, dist/cli.js, so `saga status`, `saga respond`
// and the other short commands load one script (with a V8 code cache, see bin/saga) instead of some 400
// modules. The commands that run a worker (declared with `runtime` in src/client/declarations.ts) keep loading
// dist/src/ (bin/saga), so the worker modules (the native runtime, paths relative to their own file) are left
// out: required from dist/src/.
const fs = require('node:fs');
const path = require('node:path');

const root = path.join(__dirname, '..');
const dist = path.join(root, 'dist');
const leftOut = [path.join(dist, 'src', 'worker') + path.sep];

let esbuild;
try {
  esbuild = require('esbuild');
} catch {
  // A production install without dev dependencies: bin/saga runs dist/src/ as it is.
  process.stderr.write('esbuild is not installed: dist/cli.js not built (bin/saga runs dist/src/).\n');
  process.exit(0);
}

/** Modules left out of the bundle are required from dist/src/ by a path relative to dist/cli.js. */
const keepOut = {
  name: 'keep-out',
  setup(build) {
    build.onResolve({ filter: /^\.\.?\// }, (args) => {
      const resolved = require.resolve(path.resolve(args.resolveDir, args.path));
      if (!leftOut.some((dir) => resolved.startsWith(dir))) return undefined;
      return { path: `./${path.relative(dist, resolved).split(path.sep).join('/')}`, external: true };
    });
  },
};

/**
 * The Temporal API's protobuf definitions, less what a client never decodes: every `saga` command builds
 * their reflection at start (~45 ms), and the Cloud operations API (`temporal.api.cloud`) and the Core SDK's
 * worker messages (`coresdk`) are a third of them. Neither @temporalio/client nor this project uses them at
 * run time; the worker commands load the full definitions from node_modules. The services keep only the
 * methods the bundle calls (`calledMethods`): the client makes a function and two message constructors for
 * every method of every service at each start (~7 ms for the 200-odd). Left as it is (with a note) when
 * the file is not laid out as expected.
 */
const DROPPED_PROTO_NAMESPACES = [['coresdk'], ['temporal', 'api', 'cloud']];
/** Each service the client creates: its path in the definitions, and the Connection property that calls it. */
const SERVICES = [
  { path: ['temporal', 'api', 'workflowservice', 'v1', 'WorkflowService'], property: 'workflowService' },
  { path: ['temporal', 'api', 'operatorservice', 'v1', 'OperatorService'], property: 'operatorService' },
  { path: ['temporal', 'api', 'testservice', 'v1', 'TestService'], property: 'testService' },
  { path: ['grpc', 'health', 'v1', 'Health'], property: 'healthService' },
];

/** `connection.workflowService.startWorkflowExecution(...)` and the like in `code`: the methods it calls. */
function calledMethods(code) {
  const called = new Map(SERVICES.map((service) => [service.property, new Set()]));
  const pattern = new RegExp(
    `\\b(${SERVICES.map((service) => service.property).join('|')})\\.(\\w+)\\(`,
    'g',
  );
  for (const [, property, method] of code.matchAll(pattern)) called.get(property).add(method);
  return called;
}

const nestedAt = (definitions, names) =>
  names.reduce((node, name) => node?.nested?.[name], { nested: definitions });

function slimProtos(called) {
  return {
    name: 'slim-protos',
    setup(build) {
      build.onLoad({ filter: /@temporalio[\\/]proto[\\/]protos[\\/]json-module\.js$/ }, (args) => {
        const source = fs.readFileSync(args.path, 'utf8');
        const start = source.indexOf('.addJSON(') + '.addJSON('.length;
        const end = source.lastIndexOf('});') + 1;
        try {
          const definitions = JSON.parse(source.slice(start, end));
          for (const names of DROPPED_PROTO_NAMESPACES) {
            const parent = nestedAt(definitions, names.slice(0, -1));
            if (!parent?.nested?.[names.at(-1)]) throw new Error(`no namespace ${names.join('.')}`);
            delete parent.nested[names.at(-1)];
          }
          for (const service of called ? SERVICES : []) {
            const methods = nestedAt(definitions, service.path)?.methods;
            if (!methods) throw new Error(`no service ${service.path.join('.')}`);
            const kept = called.get(service.property);
            for (const name of Object.keys(methods)) {
              if (!kept.has(name[0].toLowerCase() + name.slice(1))) delete methods[name];
            }
          }
          return {
            contents: source.slice(0, start) + JSON.stringify(definitions) + source.slice(end),
            loader: 'js',
          };
        } catch (error) {
          process.stderr.write(`bundle-cli: the Temporal protos are bundled whole (${error.message}).\n`);
          return undefined;
        }
      });
    },
  };
}

const options = {
  entryPoints: [path.join(dist, 'src', 'client', 'main.js')],
  outfile: path.join(dist, 'cli.js'),
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  // Native code, or large and used by one command only (@linear/sdk: `saga start --from linear:…`, `saga
  // watch`, `saga doctor` with a Linear tracker; the MCP SDK: `saga mcp`, ~0.8 MB), required from
  // node_modules when that command runs.
  external: [
    '@temporalio/worker',
    '@temporalio/core-bridge',
    '@slack/bolt',
    '@linear/sdk',
    '@modelcontextprotocol/sdk',
  ],
  logLevel: 'warning',
  // A smaller file to read and a smaller code cache (~5 → 2.9 MB); names are kept for readable stacks.
  minifyWhitespace: true,
  minifySyntax: true,
};

/** ASCII or exit: bin/saga reads the bundle as latin1 (see below). */
function checkAscii(code) {
  const at = code.findIndex((byte) => byte > 0x7f);
  if (at < 0) return;
  const line = code.subarray(Math.max(0, at - 60), at + 20).toString('utf8');
  process.stderr.write(`dist/cli.js is not ASCII (escape the character, e.g. \\u2022, in): ${line}\n`);
  process.exit(1);
}

// Twice: the first build finds the service methods the code calls, the second keeps only those.
esbuild
  .build({ ...options, plugins: [keepOut, slimProtos(null)], write: false })
  .then((first) => {
    const called = calledMethods(first.outputFiles[0].text);
    if (called.get('workflowService').size === 0)
      throw new Error('the bundle calls no workflowService method');
    return esbuild.build({ ...options, plugins: [keepOut, slimProtos(called)] });
  })
  .then(() => {
    // bin/saga reads the bundle as latin1, V8's fast one-byte string (utf8 decoding of 3 MB took ~10 ms):
    // esbuild escapes non-ASCII in strings but not in regular expressions, so those must escape it by hand.
    checkAscii(fs.readFileSync(path.join(dist, 'cli.js')));
  })
  .catch((error) => {
    process.stderr.write(`bundle-cli: ${error.message}\n`);
    process.exit(1);
  });
