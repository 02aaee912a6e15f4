/**
 * What a study of an engine file yields beyond its trials: the Pareto front over the file's
 * objectives with its hypervolume, the file's own domain profiles (its `profiles` rules), and each
 * chosen profile as deployable files in the engine's own variable names (`profiles/<name>.json`,
 * `.env`, `.sh`), plus the engine's defaults as the `defaults` profile to roll back to.
 */
import {join} from 'node:path'
import {analyzeObjectiveStudy, type ObjectiveStudyAnalysis} from '../search/analysis.js'
import type {EngineSpec} from '../engines/file.js'
import type {Objective} from '../search/types.js'
import {activeConfig, configKeys, defaultConfig, type Config} from '../space/index.js'
import {writeFileAtomic} from '../util/fs.js'
import type {TrialRow} from './store.js'

/** Name of the profile that restores the engine's defaults. */
export const DEFAULTS_PROFILE = 'defaults'

/** The held-out side of a study tuned on a split (src/eval/split.ts): the same objective on held-out data. */
export interface EngineHoldout {
  readonly objective: Objective
  readonly description: string
  readonly seed: number
}

/** A front point or chosen profile scored on both parts: each objective's metric, tuning vs held-out. */
export interface EngineHoldoutRow {
  readonly trial: number
  readonly roles: string[]
  readonly tuning: Record<string, number | null>
  readonly holdout: Record<string, number | null> | null
  readonly error?: string
}

export interface EngineStudyOutputs extends ObjectiveStudyAnalysis {
  readonly files: string[]
  readonly holdout?: {readonly split: string; readonly rows: EngineHoldoutRow[]}
}

/**
 * Scores every front point and chosen profile once more, at the full budget, on the held-out
 * side; tuning and held-out values of each objective side by side (trial order).
 */
export async function engineHoldout(spec: EngineSpec, analysis: ObjectiveStudyAnalysis, trials: readonly TrialRow[], side: EngineHoldout): Promise<{split: string; rows: EngineHoldoutRow[]}> {
  const roles = new Map<number, string[]>()
  const add = (id: number, role: string): void => {
    const list = roles.get(id) ?? []
    if (!list.includes(role)) list.push(role)
    roles.set(id, list)
  }
  for (const p of analysis.front?.front ?? []) add(p.trialId, 'front')
  for (const p of analysis.profiles) if (p.trialId !== null) add(p.trialId, `profile ${p.profile}`)
  const byId = new Map(trials.map((t) => [t.id, t]))
  const budget = side.objective.fidelity?.max ?? 1
  const pick = (m: Readonly<Record<string, number>> | null | undefined): Record<string, number | null> => Object.fromEntries(spec.objectives.map((o) => [o.metric, m?.[o.metric] ?? null]))
  const rows: EngineHoldoutRow[] = []
  for (const [id, r] of [...roles.entries()].sort((a, b) => a[0] - b[0])) {
    const t = byId.get(id)!
    try {
      const result = await side.objective.evaluate(t.config, budget, {trialId: id, configId: `holdout-${id}`, seed: side.seed})
      rows.push({trial: id, roles: r, tuning: pick(t.metrics), holdout: pick(result.metrics)})
    } catch (error) {
      rows.push({trial: id, roles: r, tuning: pick(t.metrics), holdout: null, error: (error as Error).message.split('\n')[0]})
    }
  }
  return {split: side.description, rows}
}

/** A configuration as deployed: inactive conditional parameters at their default, nothing outside the space. */
export function deployableConfig(spec: EngineSpec, config: Config): Config {
  const base = {...defaultConfig(spec.space), ...config}
  const out: Config = {}
  for (const key of configKeys(spec.space)) out[key] = base[key]
  return activeConfig(spec.space, out)
}

/** Writes the front, the profiles and their deployable files to `out` (when given). */
export async function writeEngineStudyOutputs(spec: EngineSpec, trials: readonly TrialRow[], out: string | undefined, sourceRun: string, side?: EngineHoldout): Promise<EngineStudyOutputs> {
  const analysis = analyzeObjectiveStudy(trials, spec.objectives, spec.profiles)
  const files: string[] = []
  const holdout = side ? await engineHoldout(spec, analysis, trials, side) : undefined
  if (holdout) {
    analysis.lines.push(`held out: ${holdout.split}`)
    for (const r of holdout.rows)
      analysis.lines.push(
        `  #${r.trial} (${r.roles.join(', ')}): ${spec.objectives.map((o) => `${o.metric} ${fmtValue(r.tuning[o.metric])} tuning, ${r.holdout ? fmtValue(r.holdout[o.metric]) : `failed (${r.error})`} held out`).join('; ')}`,
      )
  }
  if (!out) return {...analysis, files, holdout}
  const write = (name: string, data: string | Uint8Array, mode?: number): void => {
    writeFileAtomic(join(out, name), data, mode)
    files.push(join(out, name))
  }
  write('front.json', `${JSON.stringify({engine: spec.name, objectives: spec.objectives, front: analysis.front, ...(holdout ? {holdout} : {})}, null, 2)}\n`)
  write('profiles.json', `${JSON.stringify({engine: spec.name, engine_file: spec.file, profiles: analysis.profiles, ...(holdout ? {holdout} : {})}, null, 2)}\n`)
  const {makeProfile, profileJson, renderEnvFile, renderShellScript} = await import('../deploy/profile.js')
  const deployable = [
    {name: DEFAULTS_PROFILE, config: defaultConfig(spec.space), metrics: {rationale: `the defaults of engine file ${spec.name}`}},
    ...analysis.profiles
      .filter((p) => p.config !== null)
      .map((p) => ({name: p.profile, config: p.config!, metrics: {...(p.metrics ?? {}), trial: p.trialId, rationale: p.rationale.join(' | ')} as Record<string, number | string | null>})),
  ]
  for (const d of deployable) {
    const profile = makeProfile(spec.space, d.name, deployableConfig(spec, d.config), d.metrics, sourceRun)
    write(`profiles/${d.name}.json`, profileJson(profile))
    write(`profiles/${d.name}.env`, renderEnvFile(spec.space, profile))
    write(`profiles/${d.name}.sh`, renderShellScript(spec.space, profile), 0o755)
  }
  if (analysis.chart) {
    write('front.vl.json', `${JSON.stringify(analysis.chart)}\n`)
    try {
      const {renderChart, withChartDefaults} = await import('../report/render.js')
      const chart = await renderChart(withChartDefaults(analysis.chart))
      write('front.svg', chart.svg)
      write('front.png', chart.png)
    } catch (error) {
      analysis.lines.push(`front chart not rendered (${(error as Error).message.split('\n')[0]}); spec in ${join(out, 'front.vl.json')}`)
    }
  }
  return {...analysis, files, holdout}
}

function fmtValue(v: number | null | undefined): string {
  return v === null || v === undefined ? '-' : String(Number(v.toPrecision(4)))
}
