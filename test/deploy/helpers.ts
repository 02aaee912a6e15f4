import {writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {IMPORTANCE_SPACE} from '../../src/engine/importance/space.js'
import {RETRIEVAL_SPACE} from '../../src/engine/retrieval/space.js'
import {
  makeProfile,
  profileJson,
  type Profile,
  type ProfileKind,
  type ProfileValidation,
} from '../../src/deploy/profile.js'
import {registerEngineSpaceResolver} from '../../src/deploy/spaces.js'
import {defaultConfig} from '../../src/space/space.js'
import type {ParamSpace} from '../../src/space/types.js'

/** A user's engine as an engine file's parameter table maps to it (src/space ParamSpace), with a string-valued parameter. */
export const TEST_ENGINE_SPACE: ParamSpace = {
  id: 'engine:toy', // as an engine file names its table (engineSpaceId)
  params: [
    {
      kind: 'float',
      name: 'alpha',
      env: 'TOY_ALPHA',
      low: 0,
      high: 1,
      scale: 'linear',
      default: 0.5,
      description: 'a float',
    },
    {kind: 'int', name: 'depth', env: 'TOY_DEPTH', low: 1, high: 8, scale: 'linear', default: 3, description: 'an int'},
    {
      kind: 'categorical',
      name: 'mode',
      env: 'TOY_MODE',
      choices: ['fast', 'exact/v2'],
      default: 'fast',
      description: 'a string choice',
    },
  ],
}
registerEngineSpaceResolver((engine) => (engine.name === 'toy' ? TEST_ENGINE_SPACE : undefined))

export const PASSED: ProfileValidation = {
  verdict: 'pass',
  validation_passed: true,
  data: ['heldout'],
  criteria: [
    {id: 'no-loss', metric: 'quality_delta_abs', op: '>=', threshold: 0, value: 0.01, passed: true, dataset: 'heldout'},
  ],
  note: null,
}
export const FAILED: ProfileValidation = {
  verdict: 'fail',
  validation_passed: false,
  data: ['heldout'],
  criteria: [
    {
      id: 'no-loss',
      metric: 'quality_delta_abs',
      op: '>=',
      threshold: 0,
      value: -0.087,
      passed: false,
      dataset: 'heldout',
    },
  ],
  note: null,
}

/** A valid, validated profile of each kind. */
export function sampleProfile(
  kind: ProfileKind,
  name = `${kind}-p`,
  validation: ProfileValidation = PASSED,
  config?: Record<string, number | string | boolean>,
): Profile {
  const space = kind === 'importance' ? IMPORTANCE_SPACE : kind === 'engine' ? TEST_ENGINE_SPACE : RETRIEVAL_SPACE
  return makeProfile({
    kind,
    space,
    name,
    config: config ?? defaultConfig(space),
    sourceRun: 'seed42-plan0123456789ab',
    metrics: {quality: 0.7},
    validation,
    ...(kind === 'engine' ? {engine: {name: 'toy', file: 'engines/toy.json'}} : {}),
    ...(kind === 'routed'
      ? {
          overrides: {temporal: {'bm25.k1': 2.5}},
          routing: {
            min_gain: 0.01,
            per_type: [
              {
                type: 'temporal',
                base_score: 0.5,
                best_score: 0.6,
                gain: 0.1,
                override: true,
                keys: ['bm25.k1'],
                reason: 'beats the base',
              },
            ],
          },
        }
      : {}),
    notes: ['a note'],
    description: 'a sample',
  })
}

export function writeProfile(dir: string, file: string, value: unknown): string {
  const path = join(dir, file)
  writeFileSync(path, typeof value === 'string' ? value : profileJson(value as Profile))
  return path
}
