import {spawnSync} from 'node:child_process'
import {existsSync, mkdtempSync, readFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {packageRoot} from '../../src/util/paths.js'

/** The shell commands of one README section, in order, each with the exit code its comments state (0 unless "(exit N)"). */
export function sectionCommands(readme: string, heading: string): Array<{command: string; exit: number}> {
  const start = readme.indexOf(`\n## ${heading}\n`)
  if (start < 0) throw new Error(`README has no section "${heading}"`)
  const end = readme.indexOf('\n## ', start + 1)
  const section = readme.slice(start, end < 0 ? undefined : end)
  const commands: Array<{command: string; exit: number}> = []
  for (const [, block] of section.matchAll(/```sh\n([\s\S]*?)```/g)) {
    let comment = ''
    let pending = ''
    for (const line of block.split('\n')) {
      if (/^\s*#/.test(line)) {
        comment += line
        continue
      }
      if (!line.trim()) continue
      pending += line.endsWith('\\') ? `${line.slice(0, -1)} ` : line
      if (line.endsWith('\\')) continue
      const exit = /\(exit (\d+)\)/.exec(`${comment} ${pending}`)
      commands.push({command: pending, exit: exit ? Number(exit[1]) : 0})
      comment = ''
      pending = ''
    }
  }
  return commands
}

describe('README "Tune your own engine in five minutes"', () => {
  it('runs as written: every command in order, with the exit code the section states', () => {
    const readme = readFileSync(join(packageRoot, 'README.md'), 'utf8')
    const commands = sectionCommands(readme, 'Tune your own engine in five minutes')
    // the walkthrough is these steps (a guard against the parser silently skipping some)
    expect(commands.map((c) => c.command.split(/\s+/).slice(0, 2).join(' '))).toEqual([
      'npm ci',
      'npx kt',
      'cat /tmp/kt-py/profiles/high-throughput.env',
      'npx kt',
      'npx kt',
      'npx kt',
      '(. /tmp/kt-plan/deployed/active.sh',
      'npx kt',
      'npx kt',
    ])
    expect(commands.map((c) => c.exit)).toEqual([0, 0, 0, 1, 0, 0, 0, 0, 0])
    const scratch = mkdtempSync(join(tmpdir(), 'kt-readme-'))
    const env: NodeJS.ProcessEnv = {...process.env, KT_NO_PROGRESS: '1', PYTHONDONTWRITEBYTECODE: '1'}
    delete env.NODE_ENV
    for (const {command, exit} of commands) {
      // installing is the test run's own business; kt is the built CLI (what `npx kt` runs); /tmp/... is this test's scratch folder
      if (command.startsWith('npm ci')) continue
      // /tmp/ first: the repository itself may live under /tmp (a CI clone), and its path must stay as it is
      const run = command
        .replaceAll('/tmp/', `${scratch}/`)
        .replaceAll(
          'npx kt ',
          `${JSON.stringify(process.execPath)} ${JSON.stringify(join(packageRoot, 'bin', 'kt.js'))} `,
        )
      const r = spawnSync('bash', ['-c', run], {cwd: packageRoot, encoding: 'utf8', env})
      expect(r.status, `${command}\n${r.stderr}`).toBe(exit)
    }
    checkPlanRun(join(scratch, 'kt-plan'))
  }, 180_000)
})

/**
 * What the walkthrough's `kt run --plan examples/python-engine/plan.json` wrote (the Python engine
 * through service.py, for real): the seven phases on the external engine, search with held-out
 * data, profiles in its own variables, charts, report.
 */
function checkPlanRun(out: string): void {
  const report = JSON.parse(readFileSync(join(out, 'report.json'), 'utf8'))
  expect(report.phases.validation.verdict).toBe('pass')
  expect(report.run.phases_run).toEqual([
    'properties',
    'synthetic',
    'ablation',
    'search',
    'validation',
    'deploy',
    'visualize',
  ])
  const retrieval = report.phases.search.retrieval
  // P99 from service.py's cost model: the front, the profiles and their verdicts repeat exactly
  expect(retrieval.engine).toEqual({name: 'memengine-py-service', file: 'engine.service.json', latency: 'cost_model'})
  expect(report.run).toMatchObject({reproducible: true, reproducible_reason: null})
  expect(retrieval.front.points.length).toBeGreaterThan(0)
  // tuned on one conversation of the fixture, every front point scored on the other
  expect(retrieval.holdout.split).toMatch(/tuning on 1 conversation.*held out 1/)
  for (const point of retrieval.front.points) {
    const row = retrieval.holdout.rows.find((h: {trial: number}) => h.trial === point.trial)
    expect(row.holdout.quality).toBeGreaterThanOrEqual(0)
    expect(row.tuning.quality).toBe(point.quality)
  }
  expect(retrieval.routed).toBeUndefined()
  // every profile against the engine's defaults on the held-out questions (the service's rankings, question by question)
  expect(retrieval.validation.queries).toBe(26)
  const defaultsRow = retrieval.holdout.rows.find((h: {trial: number}) => h.trial === -1)
  expect(retrieval.validation.defaults_quality).toBe(defaultsRow.holdout.quality)
  for (const v of retrieval.validation.profiles) {
    expect(v.quality).toBe(retrieval.holdout.rows.find((h: {trial: number}) => h.trial === v.trial).holdout.quality)
    expect(v.criteria[0]).toMatchObject({id: 'holdout-noninferior', metric: 'recall@10_delta_ci_low', threshold: -0.01})
    const profile = JSON.parse(readFileSync(join(out, 'profiles', `${v.name}.json`), 'utf8'))
    expect(profile.validation.verdict).toBe(v.verdict)
  }
  const names = report.phases.deploy.retrieval.domain.map((d: {name: string}) => d.name)
  expect(names).toEqual(['retrieval-best-quality', 'retrieval-high-throughput'])
  const env = readFileSync(join(out, 'profiles', 'retrieval-best-quality.env'), 'utf8')
  expect(env).toContain('MEMENGINE_W_BM25=')
  expect(env).not.toContain('KT_')
  expect(report.phases.visualize.charts.some((c: {id: string}) => c.id === 'retrieval-front')).toBe(true)
  expect(
    existsSync(join(out, 'charts', 'retrieval-front.png')) ||
      report.phases.visualize.charts.some((c: {png: string}) => existsSync(join(out, c.png))),
  ).toBe(true)
  const md = readFileSync(join(out, 'report.md'), 'utf8')
  expect(md).toContain('### Retrieval engine: memengine-py-service (external')
  expect(md).toMatch(/\| trial \| recall@10 \(tuning\) \| recall@10 \(held-out\) \|/)
}
