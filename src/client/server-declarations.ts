/**
 * The declarations of the commands that serve (`saga dev`, `saga worker`, `saga board`, `saga codec serve`):
 * part of the one command table in declarations.ts, kept here so that table stays readable.
 */
import type { OptionDecl, TopCommandDecl } from './command-decl';

/** `saga board`'s options; `saga dev` takes them as `--board-port` etc. */
const BOARD_OPTIONS: OptionDecl[] = [
  { name: 'port', value: 'N', description: 'port to listen on (default 8234; 0: any free port)' },
  { name: 'host', value: 'ADDRESS', description: 'address to bind (default 127.0.0.1)' },
  {
    name: 'token-file',
    value: 'FILE',
    description:
      'the token reads and answers need, from this file (default SAGA_BOARD_TOKEN, else a random one printed at start)',
  },
  {
    name: 'token',
    value: 'TOKEN',
    description: 'the token, on the command line (every local user can read it there: prefer --token-file)',
  },
  { name: 'user', value: 'NAME', description: 'the user answers are recorded as (default $USER)' },
  {
    name: 'repo',
    value: 'PATH',
    repeatable: true,
    description:
      "a repository the board's new-saga form may start on (repeatable; besides the listed sagas')",
  },
];

/** `saga dev` and `saga worker`, first in `saga --help`. */
export const DEV_AND_WORKER_DECLS: readonly TopCommandDecl[] = [
  {
    name: 'dev',
    load: async () => (await import('./commands/server')).devCommand,
    runtime: true,
    summary: 'embedded Temporal dev server (persistent, with Web UI) + worker',
    options: [
      { name: 'ui-port', value: 'PORT', description: 'port of the Temporal Web UI' },
      {
        name: 'codec-port',
        value: 'PORT',
        description:
          'also serve the payload codec endpoint here (needs SAGA_CODEC_KEY or SAGA_CODEC_KEY_FILE) and point the Web UI at it',
      },
      ...BOARD_OPTIONS.map((o) => ({
        ...o,
        name: `board-${o.name}`,
        description: `saga board: ${o.description}`,
      })),
      { name: 'no-board', description: 'do not start the saga board' },
    ],
  },
  {
    name: 'worker',
    load: async () => (await import('./commands/server')).workerCommand,
    runtime: true,
    summary: 'worker only (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_API_KEY...)',
    options: [
      { name: 'host-id', value: 'ID', description: "this machine's id for its host-local task queue" },
      {
        name: 'deployment',
        value: 'NAME',
        description:
          'Worker Versioning: serve this build (SAGA_BUILD_ID, default the saga version) of deployment NAME; each saga stays on the build that started it',
      },
      { name: 'make-current', description: 'make this build the current version (new sagas start on it)' },
    ],
  },
];

/** `saga board` and `saga codec`, after `saga chat` in `saga --help`. */
export const BOARD_AND_CODEC_DECLS: readonly TopCommandDecl[] = [
  {
    name: 'board',
    load: async () => (await import('./commands/board')).boardCommand,
    summary: 'the saga board: a live web page of every saga, answering their questions',
    options: BOARD_OPTIONS,
    notes:
      'Answers are recorded as board:NAME. Reads and answers need the token; only its own page may call it.',
  },
  {
    name: 'codec',
    load: async () => (await import('./commands/codec')).codecCommand,
    summary: "the payload codec's endpoint for the Temporal Web UI",
    subcommands: [
      {
        name: 'serve',
        summary: 'decrypt (and encrypt) payloads for the Web UI: POST /decode, POST /encode',
        options: [
          { name: 'port', value: 'N', description: 'port to listen on (default 8888; 0: any free port)' },
          { name: 'host', value: 'ADDRESS', description: 'address to bind (default 127.0.0.1)' },
          {
            name: 'origin',
            value: 'URL',
            repeatable: true,
            description:
              "the Web UI's origin allowed to call it (repeatable; default http://localhost:8233 and http://127.0.0.1:8233)",
          },
          {
            name: 'token-file',
            value: 'FILE',
            description:
              'the secret the endpoint URL ends with (default SAGA_CODEC_ENDPOINT_TOKEN, else a random one printed at start)',
          },
        ],
        notes:
          "Configured by SAGA_CODEC_KEY or SAGA_CODEC_KEY_FILE (the workers' key), SAGA_CODEC_KEY_ID and\n" +
          'SAGA_CODEC_OLD_KEYS. It answers only under its secret path, to the UI origins given, JSON bodies only;\n' +
          'whoever has the URL can decrypt: keep it on 127.0.0.1.',
      },
    ],
  },
];
