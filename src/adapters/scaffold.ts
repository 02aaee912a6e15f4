/**
 * `kt init`: a working engine skeleton in the user's folder, from the package's examples (the
 * memory engine, its evaluation and service programs) and templates/ (the http servers, the Node
 * service): the program, an engine file with two example parameters, tiers and objectives, a plan
 * (kt_plan 2) and a next-steps README.
 */
import {existsSync, readFileSync} from 'node:fs'
import {join} from 'node:path'
import {InputError} from '../util/errors.js'
import {writeFileAtomic} from '../util/fs.js'
import {packageRoot} from '../util/paths.js'

export const ENGINE_KINDS = ['command', 'http', 'retrieval-service'] as const
type EngineKind = (typeof ENGINE_KINDS)[number]
export const ENGINE_LANGS = ['python', 'node'] as const
type EngineLang = (typeof ENGINE_LANGS)[number]

/** The port the http templates serve on unless told otherwise (any free port works). */
export const DEFAULT_INIT_PORT = 8765

/** The next-steps file kt init writes (not README.md: a project usually has one). */
const NEXT_STEPS_FILE = 'KT-README.md'

/** A valid engine name: it names studies and reports, so the study-name alphabet. */
const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/

export interface InitOptions {
  readonly kind: EngineKind
  readonly lang: EngineLang
  readonly name: string
  readonly dir: string
  readonly port?: number
}

interface Lang {
  readonly example: string
  readonly files: Record<EngineKind, ReadonlyArray<readonly [string, string]>>
  readonly envPrefix: string
  readonly run: string
}

/** Per language: the example it copies from and, per kind, [file written, source in the package]. */
const LANGS: Record<EngineLang, Lang> = {
  python: {
    example: 'examples/python-engine',
    envPrefix: 'MEMENGINE_',
    run: 'python3',
    files: {
      command: [
        ['memengine.py', 'examples/python-engine/memengine.py'],
        ['eval.py', 'examples/python-engine/eval.py'],
        ['conversations.json', 'examples/python-engine/conversations.json'],
      ],
      http: [
        ['memengine.py', 'examples/python-engine/memengine.py'],
        ['eval.py', 'examples/python-engine/eval.py'],
        ['conversations.json', 'examples/python-engine/conversations.json'],
        ['server.py', 'templates/python/server.py'],
      ],
      'retrieval-service': [
        ['memengine.py', 'examples/python-engine/memengine.py'],
        ['service.py', 'examples/python-engine/service.py'],
        ['memory.json', 'fixtures/memory_small.json'],
      ],
    },
  },
  node: {
    example: 'examples/node-engine',
    envPrefix: 'NODEMEM_',
    run: 'node',
    files: {
      command: [
        ['memengine.mjs', 'examples/node-engine/memengine.mjs'],
        ['eval.mjs', 'examples/node-engine/eval.mjs'],
        ['conversations.json', 'examples/node-engine/conversations.json'],
      ],
      http: [
        ['memengine.mjs', 'examples/node-engine/memengine.mjs'],
        ['eval.mjs', 'examples/node-engine/eval.mjs'],
        ['conversations.json', 'examples/node-engine/conversations.json'],
        ['server.mjs', 'templates/node/server.mjs'],
      ],
      'retrieval-service': [
        ['memengine.mjs', 'examples/node-engine/memengine.mjs'],
        ['service.mjs', 'templates/node/service.mjs'],
        ['memory.json', 'fixtures/memory_small.json'],
      ],
    },
  },
}

/** The engine file of a skeleton: two example parameters of memengine, its tiers and objectives. */
function engineFile(o: InitOptions, port: number): object {
  const lang = LANGS[o.lang]
  const service = o.kind === 'retrieval-service'
  const quality = service ? 'recall@10' : 'mrr'
  const evaluate =
    o.kind === 'command'
      ? {kind: 'command', command: [lang.run, o.lang === 'python' ? 'eval.py' : 'eval.mjs'], cwd: '.', timeout_s: 60}
      : o.kind === 'http'
        ? {kind: 'http', url: `http://127.0.0.1:${port}/`, timeout_s: 60}
        : o.lang === 'python'
          ? {
              kind: 'retrieval-service',
              transport: 'http',
              url: 'http://127.0.0.1:{port}',
              command: ['python3', 'service.py', '--port', '{port}', '--watch-stdin'],
              cwd: '.',
              timeout_s: 30,
              env: {PYTHONDONTWRITEBYTECODE: '1'},
              latency: 'cost_model',
            }
          : {kind: 'retrieval-service', transport: 'stdio', command: ['node', 'service.mjs'], cwd: '.', timeout_s: 30}
  return {
    kt_engine: 1,
    name: o.name,
    description: `${o.name}: a ${o.lang} memory engine (BM25 + recency), written by kt init --engine ${o.kind}; replace the program with yours`,
    parameters: [
      {
        name: 'bm25.k1',
        type: 'float',
        low: 0.3,
        high: 3.0,
        default: 1.2,
        env: `${lang.envPrefix}BM25_K1`,
        description: 'BM25 term-frequency saturation',
      },
      {
        name: 'candidates',
        type: 'int',
        low: 1,
        high: 32,
        log: true,
        default: 10,
        env: `${lang.envPrefix}CANDIDATES`,
        description: 'turns with the best BM25 score that the fusion re-ranks',
      },
    ],
    evaluate,
    tiers: [
      {name: 'smoke', budget: 1},
      {name: 'unit', budget: 3},
      {name: 'full', budget: 9},
    ],
    objectives: [
      {metric: quality, direction: 'maximize'},
      {metric: 'p99_ms', direction: 'minimize'},
    ],
    profiles: [
      {name: 'best-quality', description: `highest ${quality}`, order_by: quality},
      {
        name: 'high-throughput',
        description: `fastest P99 keeping ${quality} >= 0.9 x the best`,
        order_by: 'p99_ms',
        constraints: [{metric: quality, op: '>=', value_of_best: 0.9}],
      },
    ],
  }
}

/** Phase 4's budget in a command or http skeleton's plan (its `unit` tier, as the next steps' kt search). */
const METRICS_PLAN_BUDGET = 4

/**
 * The plan of a skeleton (kt_plan 2): for a retrieval service, the example's engine-only plan on the
 * bundled data; for a command or http engine, no data (it evaluates on its own) and its quality objective.
 */
function planFile(o: InitOptions): object {
  if (o.kind !== 'retrieval-service')
    return {
      kt_plan: 2,
      name: o.name,
      description: `${o.name} tuned with BOHB over its tiers on its own data; with no per-question results there is no held-out validation, so the verdict is "not validated".`,
      engine: 'engine.json',
      metric: 'mrr',
      search: {optimizer: 'bohb', budget: METRICS_PLAN_BUDGET},
      acceptance: {against: 'defaults'},
    }
  const example = JSON.parse(readFileSync(join(packageRoot, 'examples/python-engine/plan.json'), 'utf8')) as {
    data: Record<string, unknown>
  }
  return {
    ...example,
    name: o.name,
    description: `${o.name} tuned with BOHB over its tiers on half of the conversations of memory.json; the tuned profile ablated (its minimal profile) and validated against the engine's defaults on the other half, overall and per question category.`,
    engine: 'engine.json',
    data: {...example.data, conversations: 'memory.json'},
  }
}

function nextSteps(o: InitOptions, port: number): string {
  const start = o.lang === 'python' ? `python3 server.py --port ${port}` : `node server.mjs --port ${port}`
  const steps: Record<EngineKind, string[]> = {
    command: [
      `1. Try one evaluation by hand: \`${o.lang === 'python' ? 'KT_TIER=unit python3 eval.py' : 'KT_TIER=unit node eval.mjs'}\` (the last stdout line is the metrics).`,
      '2. Tune: `npx kt search --engine engine.json --budget 4` (BOHB over the tiers; the study and report go to reports/).',
      '3. The seven phases and the report: `npx kt run --plan plan.json` (phases needing per-question results are marked not applicable; the verdict is "not validated", exit 1).',
      '4. Replace the engine program with yours: keep the protocol (parameters from the environment, one JSON line of metrics) and declare your parameters in engine.json.',
    ],
    http: [
      `1. Start the server and leave it running: \`${start} &\` (kt POSTs one request per trial).`,
      '2. Tune: `npx kt search --engine engine.json --budget 4`.',
      '3. The seven phases and the report, with the server running: `npx kt run --plan plan.json` (the verdict is "not validated", exit 1: no per-question results).',
      '4. Put your engine behind the same endpoint: a JSON object of metrics per POST {config, budget, tier, trial_id, seed}.',
    ],
    'retrieval-service': [
      '1. Score the defaults: `npx kt eval --engine engine.json --data memory.json` (kt starts and stops the service).',
      '2. Tune: `npx kt search --engine engine.json --data memory.json --budget 4`.',
      '3. The seven phases and the report: `npx kt run --plan plan.json` (a run folder under reports/, with questions.json for kt compare).',
      '4. Compare two runs or evaluations (e.g. main against your branch): `npx kt compare BASE HEAD` (exit 1 on a regression).',
      '5. Replace memengine with your engine: keep the three messages (reset, ingest, search) and declare your parameters in engine.json.',
    ],
  }
  return [
    `# ${o.name}: tuning with kt`,
    '',
    `Written by \`kt init --engine ${o.kind} --lang ${o.lang}\`. The engine-file format: node_modules/kt/src/adapters/README.md.`,
    '',
    ...steps[o.kind],
    '',
  ].join('\n')
}

/** The files kt init writes, by name, with their contents. */
function scaffoldFiles(o: InitOptions): Array<[string, string]> {
  const port = o.port ?? DEFAULT_INIT_PORT
  const files: Array<[string, string]> = LANGS[o.lang].files[o.kind].map(([to, from]) => [
    to,
    readFileSync(join(packageRoot, from), 'utf8'),
  ])
  files.push(['engine.json', `${JSON.stringify(engineFile(o, port), null, 2)}\n`])
  files.push(['plan.json', `${JSON.stringify(planFile(o), null, 2)}\n`])
  files.push([NEXT_STEPS_FILE, nextSteps(o, port)])
  return files
}

/**
 * Writes the skeleton into `dir`; refuses (nothing written) when any of its files exists or the
 * name is not a valid engine name. Returns the files written.
 */
export function initEngine(o: InitOptions): string[] {
  if (!NAME_PATTERN.test(o.name))
    throw new InputError(
      '--name',
      'letters, digits, ".", "_" or "-" (at most 64, starting with a letter or digit)',
      JSON.stringify(o.name),
    )
  const files = scaffoldFiles(o)
  const taken = files.map(([name]) => name).filter((name) => existsSync(join(o.dir, name)))
  if (taken.length > 0)
    throw new InputError(
      join(o.dir, taken[0]),
      'a folder without the files kt init writes (nothing was written)',
      `${taken.join(', ')} already there`,
    )
  for (const [name, text] of files) writeFileAtomic(join(o.dir, name), text)
  return files.map(([name]) => name)
}
