import {spawnSync} from 'node:child_process'
import {mkdtempSync, readFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {isAbsolute, join, resolve} from 'node:path'
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
    expect(commands.map((c) => c.exit)).toEqual([0, 0, 0, 1, 1, 0, 0, 0, 0])
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
 * through service.py, for real; an engine-only plan): phases 3-6 about that engine, the tuned and
 * the minimal profile in its own variables, the report.
 */
function checkPlanRun(out: string): void {
  const report = JSON.parse(readFileSync(join(out, 'report.json'), 'utf8'))
  expect(report.run.phases_run).toEqual([
    'properties',
    'synthetic',
    'ablation',
    'search',
    'validation',
    'deploy',
    'visualize',
  ])
  const e = report.engine
  expect(e.engine).toEqual({
    ref: 'examples/python-engine/engine.service.json',
    name: 'memengine-py-service',
    latency: 'cost_model',
  })
  // P99 from service.py's cost model: the front, the profiles and their verdicts repeat exactly
  expect(report.run).toMatchObject({reproducible: true, reproducible_reason: null})
  const retrieval = e.search
  expect(retrieval.front.points.length).toBeGreaterThan(0)
  // tuned on one conversation of the fixture, validated on the other's 26 questions, overall and per category
  expect(retrieval.holdout.split).toMatch(/tuning on 1 conversation.*held out 1/)
  expect(e.validation.tuned.queries).toBe(26)
  expect(e.validation.tuned.categories.map((c: {category: string}) => c.category).sort()).toEqual([
    'multi-hop',
    'open-domain',
    'single-hop',
    'temporal',
  ])
  // the run's verdict is the tuned profile's, and the minimal profile keeps only changes the ablation needs
  expect(e.validation.verdict).toBe(e.validation.tuned.passed ? 'pass' : 'fail')
  expect(e.ablation.changes.length).toBeGreaterThan(0)
  for (const c of e.ablation.minimal.changes)
    expect(e.ablation.changes.map((x: {parameter: string}) => x.parameter)).toContain(c)
  const names = e.deploy.profiles.map((d: {name: string}) => d.name)
  expect(names).toEqual(['tuned', 'tuned-minimal', 'retrieval-best-quality', 'retrieval-high-throughput'])
  const profile = JSON.parse(readFileSync(join(out, 'profiles', 'tuned-minimal.json'), 'utf8'))
  expect(profile.validation.verdict).toBe(e.validation.minimal.passed ? 'pass' : 'fail')
  // the engine file relative to the profile's folder, never an absolute path
  expect(resolve(out, 'profiles', profile.engine.file)).toBe(
    join(packageRoot, 'examples', 'python-engine', 'engine.service.json'),
  )
  expect(isAbsolute(profile.engine.file)).toBe(false)
  const env = readFileSync(join(out, 'profiles', 'tuned-minimal.env'), 'utf8')
  expect(env).toContain('MEMENGINE_W_BM25=')
  expect(env).not.toContain('KT_')
  const md = readFileSync(join(out, 'report.md'), 'utf8')
  expect(md).toContain('## Phase 3: ablation of memengine-py-service')
  expect(md).toContain('## Phase 5: validation of memengine-py-service')
  expect(md).toContain('### Retrieval engine: memengine-py-service (external')
}
