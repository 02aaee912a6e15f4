import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {loadEngineFile, parseEngineFile, engineTierForBudget} from '../../src/adapters/file.js'
import {
  activeConfig,
  configFromEnv,
  configToEnv,
  defaultConfig,
  onlineTuned,
  validateConfig,
} from '../../src/space/index.js'
import {spaceFingerprint} from '../../src/deploy/profile.js'
import {Encoding} from '../../src/search/encoding.js'
import {InputError} from '../../src/util/errors.js'
import {Rng} from '../../src/util/rng.js'

/** The example engine file. */
function example(): Record<string, any> {
  return {
    kt_engine: 1,
    name: 'myengine',
    parameters: [
      {name: 'bm25.k1', type: 'float', low: 0.5, high: 3.0, default: 1.2, env: 'MYENGINE_BM25_K1'},
      {name: 'lr', type: 'float', low: 1e-4, high: 1, log: true, default: 0.01, env: 'MYENGINE_LR'},
      {name: 'depth', type: 'int', low: 1, high: 5, default: 2, env: 'MYENGINE_DEPTH'},
      {name: 'mode', type: 'categorical', choices: ['fast', 'exact'], default: 'fast', env: 'MYENGINE_MODE'},
      {name: 'w.bm25', type: 'float', low: 0, high: 1, default: 0.6, env: 'MYENGINE_W_BM25'},
      {name: 'w.recency', type: 'float', low: 0, high: 1, default: 0.4, env: 'MYENGINE_W_RECENCY'},
    ],
    simplex: [{name: 'fusion', parameters: ['w.bm25', 'w.recency'], floor: 0.05}],
    evaluate: {kind: 'command', command: ['python3', 'eval.py'], cwd: '.', timeout_s: 60},
    tiers: [
      {name: 'smoke', budget: 1},
      {name: 'unit', budget: 3},
      {name: 'full', budget: 9},
    ],
    objectives: [
      {metric: 'recall@10', direction: 'maximize'},
      {metric: 'p99_ms', direction: 'minimize'},
    ],
    profiles: [
      {name: 'high-throughput', order_by: 'p99_ms', constraints: [{metric: 'recall@10', op: '>=', value_of_best: 0.8}]},
    ],
  }
}

function errorOf(mutate: (f: Record<string, any>) => void): string {
  const f = example()
  mutate(f)
  try {
    parseEngineFile(f, 'eng.json')
  } catch (error) {
    expect(error).toBeInstanceOf(InputError)
    expect((error as Error).message).not.toContain('\n')
    return (error as Error).message
  }
  throw new Error('no error')
}

describe('engine file', () => {
  it("maps the issue's example onto a ParamSpace: log, int, categorical, a floored simplex, tiers as BOHB fidelity", () => {
    const spec = parseEngineFile(example(), '/x/y/eng.json')
    expect(spec.space.id).toBe('engine:myengine')
    expect(spec.space.params.map((p) => p.kind)).toEqual(['float', 'float', 'int', 'categorical', 'simplex'])
    expect(spec.space.params[1]).toMatchObject({scale: 'log', low: 1e-4})
    expect(spec.space.params[4]).toMatchObject({
      name: 'fusion',
      floor: 0.05,
      members: [{name: 'w.bm25', env: 'MYENGINE_W_BM25'}, {name: 'w.recency'}],
    })
    expect(spec.fidelity).toEqual({min: 1, max: 9, eta: 3})
    expect(spec.evaluate).toMatchObject({kind: 'command', cwd: '/x/y'})
    expect(engineTierForBudget(spec.tiers, 3)?.name).toBe('unit')
    expect(engineTierForBudget(spec.tiers, 2)?.name).toBe('unit')
    // a budget a rounding error below a tier runs at that tier (successive halving computes in floating point)
    expect(engineTierForBudget(spec.tiers, 3 + 1e-12)?.name).toBe('unit')
    expect(engineTierForBudget([], 3)).toBeUndefined()
    const defaults = defaultConfig(spec.space)
    validateConfig(spec.space, defaults, 'defaults')
    // profiles round-trip through the engine's own env names
    const env = Object.fromEntries(configToEnv(spec.space, defaults))
    expect(env.MYENGINE_W_RECENCY).toBe('0.4')
    expect(configFromEnv(spec.space, env)).toEqual(defaults)
    // the encoding every optimiser uses accepts it
    const enc = new Encoding(spec.space)
    const c = enc.decode(enc.sampleUniform(new Rng(1)))
    validateConfig(spec.space, c, 'sample')
  })

  it('bool parameters are the categorical [false, true]; conditions keep inactive parameters at their default', () => {
    const spec = parseEngineFile(
      {
        ...example(),
        parameters: [
          ...example().parameters,
          {name: 'rerank', type: 'bool', default: false, env: 'MYENGINE_RERANK'},
          {
            name: 'rerank.depth',
            type: 'int',
            low: 5,
            high: 50,
            default: 10,
            env: 'MYENGINE_RERANK_DEPTH',
            when: {parameter: 'rerank', in: [true]},
          },
        ],
      },
      'eng.json',
    )
    expect(spec.space.params.find((p) => p.name === 'rerank')).toMatchObject({
      kind: 'categorical',
      choices: [false, true],
    })
    const config = {...defaultConfig(spec.space), 'rerank.depth': 40}
    expect(activeConfig(spec.space, config)['rerank.depth']).toBe(10)
    expect(activeConfig(spec.space, {...config, rerank: true})['rerank.depth']).toBe(40)
  })

  it.each<[string, (f: Record<string, any>) => void, string]>([
    [
      'unknown type',
      (f) => (f.parameters[0].type = 'double'),
      'eng.json: parameters[0].type: expected one of "float", "int", "categorical", "bool", got "double"',
    ],
    ['empty range', (f) => (f.parameters[0].high = 0.5), 'eng.json: parameters[0].high: expected a number > low (0.5)'],
    [
      'inverted range',
      (f) => Object.assign(f.parameters[2], {low: 5, high: 1}),
      'eng.json: parameters[2].high: expected a number > low (5)',
    ],
    [
      'default outside range',
      (f) => (f.parameters[0].default = 4),
      'eng.json: parameters[0].default: expected a number in [0.5, 3], got 4',
    ],
    [
      'log of a non-positive range',
      (f) => (f.parameters[1].low = 0),
      'eng.json: parameters[1].low: expected a positive lower bound',
    ],
    ['non-integer int', (f) => (f.parameters[2].default = 2.5), 'eng.json: parameters[2].default: expected integer'],
    [
      'simplex floors past 1',
      (f) => (f.simplex[0].floor = 0.6),
      'eng.json: simplex[0].floor: expected floors that sum to at most 1',
    ],
    [
      'simplex defaults not summing to 1',
      (f) => (f.parameters[5].default = 0.5),
      'eng.json: simplex[0].parameters: expected members whose defaults sum to 1, got 1.1',
    ],
    [
      'simplex of an unknown parameter',
      (f) => (f.simplex[0].parameters[1] = 'w.vec'),
      'eng.json: simplex[0].parameters[1]: expected the name of a float parameter, got "w.vec"',
    ],
    [
      'two parameters with one env name',
      (f) => (f.parameters[3].env = 'MYENGINE_LR'),
      'eng.json: parameters[3].env: expected an env name no other parameter uses (parameters[1] uses MYENGINE_LR)',
    ],
    [
      'a reserved env name',
      (f) => (f.parameters[3].env = 'KT_BUDGET'),
      'eng.json: parameters[3].env: expected a name other than',
    ],
    [
      'duplicate parameter name',
      (f) => (f.parameters[3].name = 'lr'),
      'eng.json: parameters[3].name: expected a name no other parameter has',
    ],
    [
      'missing command',
      (f) => delete f.evaluate.command,
      'eng.json: evaluate.command: expected array (the field is missing)',
    ],
    ['empty command', (f) => (f.evaluate.command = []), 'eng.json: evaluate.command: expected at least 1 items'],
    [
      'unknown evaluate kind',
      (f) => (f.evaluate.kind = 'grpc'),
      'eng.json: evaluate.kind: expected one of "command", "http", "retrieval-service"',
    ],
    [
      'unknown field',
      (f) => (f.parameters[0].step = 0.1),
      'eng.json: parameters[0]: expected no unknown fields (step)',
    ],
    ['wrong version', (f) => (f.kt_engine = 2), 'eng.json: kt_engine: expected 1, got 2'],
    [
      'tiers not geometric',
      (f) => (f.tiers[2].budget = 10),
      "eng.json: tiers[2].budget: expected budgets growing by one integer factor >= 2 (Hyperband's eta)",
    ],
    [
      'tiers not increasing',
      (f) => (f.tiers[2].budget = 3),
      "eng.json: tiers[2].budget: expected a budget above the previous tier's (3)",
    ],
    ['no objective', (f) => (f.objectives = []), 'eng.json: objectives: expected at least 1 items'],
    [
      'profile ordering by an unknown metric without direction',
      (f) => (f.profiles[0].order_by = 'cost'),
      'eng.json: profiles[0].direction',
    ],
    [
      'constraint with value and value_of_best',
      (f) => (f.profiles[0].constraints[0].value = 0.5),
      'eng.json: profiles[0].constraints[0]: expected exactly one of value or value_of_best, got both',
    ],
    [
      'condition on a later parameter',
      (f) => (f.parameters[2].when = {parameter: 'mode', in: ['exact']}),
      'eng.json: parameters[2].when.parameter: expected a parameter listed before depth',
    ],
    [
      'condition on a value the parameter cannot take',
      (f) => (
        (f.parameters[4 - 0].when = undefined),
        f.parameters.push({
          name: 'x',
          type: 'float',
          low: 0,
          high: 1,
          default: 0,
          env: 'X',
          when: {parameter: 'mode', in: ['slow']},
        })
      ),
      'eng.json: parameters[6].when.in[0]: expected a value mode can take ("fast", "exact"), got "slow"',
    ],
    [
      'http url that is not a url',
      (f) => (f.evaluate = {kind: 'http', url: 'localhost:9'}),
      'eng.json: evaluate.url: expected an http:// or https:// URL',
    ],
    [
      'online that is not a boolean',
      (f) => (f.parameters[1].online = 'yes'),
      'eng.json: parameters[1].online: expected boolean, got "yes"',
    ],
    [
      'online on a simplex group that is not a boolean',
      (f) => (f.simplex[0].online = 1),
      'eng.json: simplex[0].online: expected boolean, got 1',
    ],
    [
      'online on a simplex member',
      (f) => (f.parameters[4].online = true),
      'eng.json: parameters[4].online: expected no online on a simplex member (the bandits tune a group whole: set simplex[0].online), got true',
    ],
    // what a deployable profile would refuse at the end of a study is refused on load (review D#6)
    [
      'a categorical string a shell would read',
      (f) => (f.parameters[3].choices = ['fast', '$(touch /tmp/x)']),
      'eng.json: parameters[3].choices[1]: expected a number, a boolean or a value of letters, digits and . _ : / + @ % , - (at most 128) (profiles export it unquoted), got "$(touch /tmp/x)"',
    ],
    [
      'a categorical string with a quote',
      (f) => (f.parameters[3].choices = ['fast', "it's"]),
      `eng.json: parameters[3].choices[1]: expected a number, a boolean or a value of letters, digits and . _ : / + @ % , -`,
    ],
    [
      'a categorical default with a space',
      (f) => Object.assign(f.parameters[3], {choices: ['fast', 'a b'], default: 'a b'}),
      'eng.json: parameters[3].choices[1]: expected a number, a boolean or a value',
    ],
    [
      'an engine name starting with _',
      (f) => (f.name = '_toy'),
      'eng.json: name: expected a name of letters, digits, dot, dash or underscore starting with a letter or digit (at most 64), got "_toy"',
    ],
    [
      'an engine name too long for its space id',
      (f) => (f.name = 'e'.repeat(58)),
      'eng.json: name: expected a name of at most 57 characters (its space id engine:<name> is at most 64)',
    ],
    [
      'a profile rule name starting with -',
      (f) => (f.profiles[0].name = '-best'),
      'eng.json: profiles[0].name: expected a name of letters, digits, dot, dash or underscore starting with a letter or digit (at most 64), got "-best"',
    ],
    [
      'a parameter name starting with a dot',
      (f) => (f.parameters[0].name = '.k1'),
      'eng.json: parameters[0].name: expected a name of letters, digits, dot, dash or underscore, not starting with a dot or dash (at most 64), got ".k1"',
    ],
    [
      'an env name a shell acts on',
      (f) => (f.parameters[0].env = 'PATH'),
      'eng.json: parameters[0].env: expected an env var name that no shell, loader or runtime acts on',
    ],
    [
      'an env name starting with _',
      (f) => (f.parameters[0].env = '_K1'),
      'eng.json: parameters[0].env: expected an env var name of letters, digits and _, starting with a letter (at most 64), got "_K1"',
    ],
    [
      'an objective metric that is no profile key',
      (f) => (f.objectives[0].metric = 'my metric'),
      'eng.json: objectives[0].metric: expected a metric name that is also a profile key: a key of letters, digits and _ . @ : - (at most 64), starting with a letter, digit or _, got "my metric"',
    ],
    [
      'a profile rule ordering by a metric that is no profile key',
      (f) => Object.assign(f.profiles[0], {order_by: 'my metric', direction: 'maximize'}),
      'eng.json: profiles[0].order_by: expected a metric name that is also a profile key',
    ],
    [
      'a constraint on a metric that is no profile key',
      (f) => (f.profiles[0].constraints[0].metric = 'r'.repeat(65)),
      'eng.json: profiles[0].constraints[0].metric: expected a metric name that is also a profile key',
    ],
  ])('%s: one line naming file and field', (_, mutate, expected) => {
    expect(errorOf(mutate)).toContain(expected)
  })

  it('online marks what the bandits tune by default: carried into the table on parameters and groups, false left out', () => {
    const f = example()
    f.parameters[1].online = true
    f.parameters[2].online = false
    f.simplex[0].online = true
    const spec = parseEngineFile(f, 'eng.json')
    expect(onlineTuned(spec.space)).toEqual(['lr', 'fusion'])
    expect(spec.space.params.find((p) => p.name === 'fusion')).toMatchObject({kind: 'simplex', online: true})
    expect(Object.keys(spec.space.params.find((p) => p.name === 'depth')!)).not.toContain('online')
    // unmarked: the same table as before the column existed, so every parameter is tuned
    const plain = parseEngineFile(example(), 'eng.json')
    expect(onlineTuned(plain.space)).toBeUndefined()
    expect(JSON.stringify(plain.space)).not.toContain('online')
    expect(spaceFingerprint(spec.space)).toBe(spaceFingerprint(plain.space))
  })

  it('a missing or unparseable file names the file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kt-engine-'))
    expect(() => loadEngineFile(join(dir, 'none.json'))).toThrow(/none\.json: expected an existing file/)
    writeFileSync(join(dir, 'bad.json'), '{"kt_engine": 1,\n "name": }')
    expect(() => loadEngineFile(join(dir, 'bad.json'))).toThrow(/bad\.json:2:10: expected valid JSON/)
  })
})
