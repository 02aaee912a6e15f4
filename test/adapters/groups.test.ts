import {describe, expect, it} from 'vitest'
import {parseEngineFile} from '../../src/adapters/file.js'
import {InputError} from '../../src/util/errors.js'

function engine(groups?: unknown): Record<string, unknown> {
  return {
    kt_engine: 1,
    name: 'grouped',
    parameters: [
      {name: 'bm25.k1', type: 'float', low: 0.5, high: 3.0, default: 1.2, env: 'G_BM25_K1'},
      {name: 'bm25.b', type: 'float', low: 0, high: 1, default: 0.75, env: 'G_BM25_B'},
      {name: 'depth', type: 'int', low: 1, high: 5, default: 2, env: 'G_DEPTH'},
      {name: 'stopwords', type: 'bool', default: false, env: 'G_STOPWORDS'},
    ],
    evaluate: {kind: 'command', command: ['python3', 'eval.py']},
    objectives: [{metric: 'recall@10', direction: 'maximize'}],
    ...(groups === undefined ? {} : {groups}),
  }
}

function errorOf(groups: unknown): string {
  try {
    parseEngineFile(engine(groups), 'eng.json')
  } catch (error) {
    expect(error).toBeInstanceOf(InputError)
    expect((error as Error).message).not.toContain('\n')
    return (error as Error).message
  }
  throw new Error('no error')
}

describe('engine file groups', () => {
  it('resolves names and prefix patterns to the parameters they name, in the file order', () => {
    const spec = parseEngineFile(
      engine([
        {name: 'bm25', parameters: ['bm25.*']},
        {name: 'mixed', parameters: ['stopwords', 'bm25.k1', 'stopwords']},
      ]),
      'eng.json',
    )
    expect(spec.groups).toEqual([
      {name: 'bm25', parameters: ['bm25.k1', 'bm25.b']},
      {name: 'mixed', parameters: ['bm25.k1', 'stopwords']},
    ])
    expect(parseEngineFile(engine(), 'eng.json').groups).toEqual([])
  })

  it('refuses a member that names no parameter and a repeated group name, naming the field', () => {
    expect(errorOf([{name: 'g', parameters: ['depth', 'nope.*']}])).toMatch(
      /^eng\.json: groups\[0\]\.parameters\[1\]: expected the name of a parameter, or a prefix ending in \* that matches one/,
    )
    expect(
      errorOf([
        {name: 'g', parameters: ['depth']},
        {name: 'g', parameters: ['stopwords']},
      ]),
    ).toMatch(/^eng\.json: groups\[1\]\.name: expected a name no other group has/)
  })
})
