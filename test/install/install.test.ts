/**
 * kt as a user gets it: the packed tarball installed into an empty folder outside the checkout
 * (one npm install for every case here: better-sqlite3 compiles, so this is the slowest test file),
 * then each engine kind scaffolded by kt init and tuned, the retrieval service evaluated, its plan
 * run and compared, and the GitHub Actions recipe's shell steps run against commits of a
 * throw-away engine repository.
 */
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {spawn, spawnSync, type ChildProcess} from 'node:child_process'
import {existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {packageRoot} from '../../src/util/paths.js'
import {freePort} from '../../src/util/net.js'

const INSTALL_TIMEOUT_MS = 900_000
const STEP_TIMEOUT_MS = 300_000

let root: string
let project: string
let installMs = 0

/** Runs kt from the installed package (node_modules/.bin/kt) in `cwd`. */
function kt(cwd: string, args: string[]): {status: number | null; stdout: string; stderr: string} {
  const r = spawnSync(join(project, 'node_modules', '.bin', 'kt'), args, {
    cwd,
    encoding: 'utf8',
    timeout: STEP_TIMEOUT_MS,
    env: {...process.env, KT_HELP_CACHE: '0'},
  })
  return {status: r.status, stdout: r.stdout, stderr: r.stderr}
}

function initIn(kind: string, lang: string, extra: string[] = []): string {
  const dir = join(project, `${kind}-${lang}`)
  mkdirSync(dir, {recursive: true})
  const r = kt(dir, ['init', '--engine', kind, '--lang', lang, ...extra])
  expect(r.stderr).toBe('')
  expect(r.status).toBe(0)
  return dir
}

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'kt-install-'))
  // KT_INSTALLED_PROJECT: a folder where the tarball is already installed, to iterate on this file
  if (process.env.KT_INSTALLED_PROJECT) {
    project = join(root, 'project')
    spawnSync('cp', ['-r', process.env.KT_INSTALLED_PROJECT, project])
    return
  }
  // the checkout's dist/ must be built (npm test builds first); prepare is not re-run here
  const pack = spawnSync('npm', ['pack', '--ignore-scripts', '--pack-destination', root], {
    cwd: packageRoot,
    encoding: 'utf8',
  })
  if (pack.status !== 0) throw new Error(`npm pack failed: ${pack.stderr}`)
  const tarball = readdirSync(root).find((f) => f.endsWith('.tgz'))!
  project = join(root, 'project')
  mkdirSync(project)
  writeFileSync(
    join(project, 'package.json'),
    JSON.stringify({name: 'engine-project', version: '1.0.0', private: true}),
  )
  const t0 = Date.now()
  const install = spawnSync(
    'npm',
    ['install', '--save-dev', '--no-audit', '--no-fund', '--prefer-offline', join(root, tarball)],
    {cwd: project, encoding: 'utf8', timeout: INSTALL_TIMEOUT_MS},
  )
  installMs = Date.now() - t0
  if (install.status !== 0) throw new Error(`npm install of the tarball failed: ${install.stderr.slice(-2000)}`)
}, INSTALL_TIMEOUT_MS)

afterAll(() => {
  if (root) rmSync(root, {recursive: true, force: true})
})

describe('kt installed from the packed tarball into an empty folder', () => {
  it('gives a working kt with the README, the engine-file reference, the examples and the fixtures', () => {
    console.log(`npm install of the tarball: ${(installMs / 1000).toFixed(0)} s`)
    const pkg = join(project, 'node_modules', 'kt')
    for (const f of [
      'README.md',
      'src/adapters/README.md',
      'examples/python-engine/engine.json',
      'examples/ci/github-actions.yml',
      'fixtures/memory_small.json',
      'templates/python/server.py',
      'docs/study.md',
    ])
      expect(existsSync(join(pkg, f)), f).toBe(true)
    // every relative link of the packed README resolves inside the package
    const readme = readFileSync(join(pkg, 'README.md'), 'utf8')
    const links = [...readme.matchAll(/\]\(([^)#:]+)(#[^)]*)?\)/g)].map((m) => m[1])
    expect(links.length).toBeGreaterThan(5)
    expect(links.filter((l) => !existsSync(join(pkg, l)))).toEqual([])
    const help = kt(project, ['--help'])
    expect(help.status).toBe(0)
    expect(help.stdout).toContain('compare')
  })

  it.each([
    ['command', 'python'],
    ['command', 'node'],
    ['retrieval-service', 'node'],
  ])('kt init --engine %s --lang %s writes files that kt search tunes (and kt run runs) as written', (kind, lang) => {
    const dir = initIn(kind, lang)
    const data = kind === 'retrieval-service' ? ['--data', 'memory.json'] : []
    const r = kt(dir, ['search', '--engine', 'engine.json', ...data, '--budget', '2', '--json'])
    expect(r.stderr.split('\n').filter((l) => l.startsWith('kt:'))).toEqual([])
    expect(r.status).toBe(0)
    expect(JSON.parse(r.stdout)).toHaveProperty('front')
    if (kind !== 'command') return
    // its plan runs as written: no held-out questions, so the verdict is not validated (exit 1)
    const run = kt(dir, ['run', '--plan', 'plan.json', '--json'])
    expect(run.status, run.stderr).toBe(1)
    expect(JSON.parse(run.stdout).verdict).toBe('not-validated')
  })

  it.each([['python'], ['node']])('kt init --engine http --lang %s: its server, started, is tuned', async (lang) => {
    const port = await freePort()
    const dir = initIn('http', lang, ['--port', String(port)])
    const server: ChildProcess = spawn(
      lang === 'python' ? 'python3' : 'node',
      [lang === 'python' ? 'server.py' : 'server.mjs', '--port', String(port)],
      {
        cwd: dir,
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    )
    try {
      await new Promise<void>((resolve) => server.stderr!.once('data', () => resolve()))
      const r = kt(dir, ['search', '--engine', 'engine.json', '--budget', '2', '--json'])
      expect(r.status, r.stderr).toBe(0)
      expect(JSON.parse(r.stdout)).toHaveProperty('front')
    } finally {
      server.kill()
    }
  })

  it('kt init refuses a folder that has its files: one line, exit 2, nothing overwritten', () => {
    const dir = join(project, 'taken')
    mkdirSync(dir)
    writeFileSync(join(dir, 'engine.json'), 'mine')
    const r = kt(dir, ['init', '--engine', 'command'])
    expect(r.status).toBe(2)
    expect(r.stderr).toMatch(/^kt: \S*taken\/engine\.json: expected a folder without the files kt init writes[^\n]*\n$/)
    expect(readdirSync(dir)).toEqual(['engine.json'])
    expect(readFileSync(join(dir, 'engine.json'), 'utf8')).toBe('mine')
  })

  it('the retrieval service: evaluated, tuned, its plan run, and runs and evaluations compared with the exit codes', () => {
    const dir = initIn('retrieval-service', 'python')
    const base = kt(dir, ['eval', '--engine', 'engine.json', '--data', 'memory.json', '--json'])
    expect(base.status, base.stderr).toBe(0)
    writeFileSync(join(dir, 'base.json'), base.stdout)
    writeFileSync(join(dir, 'narrow.json'), JSON.stringify({candidates: 1, 'bm25.k1': 0.3}))
    const head = kt(dir, [
      'eval',
      '--engine',
      'engine.json',
      '--data',
      'memory.json',
      '--profile',
      'narrow.json',
      '--json',
    ])
    writeFileSync(join(dir, 'head.json'), head.stdout)
    expect(kt(dir, ['search', '--engine', 'engine.json', '--data', 'memory.json', '--budget', '4']).status).toBe(0)
    const run = kt(dir, ['run', '--plan', 'plan.json', '--out', 'runs/a'])
    expect([0, 1], run.stderr).toContain(run.status)
    expect(existsSync(join(dir, 'runs/a/questions.json'))).toBe(true)

    const same = kt(dir, ['compare', 'runs/a', 'runs/a'])
    expect(same.status, same.stderr).toBe(0)
    expect(same.stdout).toContain('<!-- kt-compare -->')
    const regressed = kt(dir, ['compare', 'base.json', 'head.json', '--format', 'json'])
    expect(regressed.status).toBe(1)
    expect(JSON.parse(regressed.stdout).verdict).toBe('regressed')
    // bad input: one line, exit 2
    mkdirSync(join(dir, 'not-a-run'))
    const notRun = kt(dir, ['compare', 'not-a-run', 'runs/a'])
    expect([notRun.status, notRun.stderr]).toEqual([
      2,
      expect.stringMatching(/^kt: not-a-run: expected a run folder[^\n]*\n$/),
    ])
    mkdirSync(join(dir, 'old-run'))
    writeFileSync(join(dir, 'old-run/report.json'), readFileSync(join(dir, 'runs/a/report.json')))
    const old = kt(dir, ['compare', 'old-run', 'runs/a'])
    expect([old.status, old.stderr]).toEqual([
      2,
      expect.stringMatching(/^kt: old-run\/questions\.json: expected per-question results[^\n]*\n$/),
    ])
    // the same questions in a file of other bytes: other data, refused unless allowed
    writeFileSync(join(dir, 'memory2.json'), `${readFileSync(join(dir, 'memory.json'), 'utf8')}\n`)
    const moved = kt(dir, ['eval', '--engine', 'engine.json', '--data', 'memory2.json', '--json'])
    writeFileSync(join(dir, 'other.json'), moved.stdout)
    const refused = kt(dir, ['compare', 'base.json', 'other.json'])
    expect([refused.status, refused.stderr]).toEqual([
      2,
      expect.stringMatching(/^kt: other\.json: data\.sha256: expected the data of base\.json[^\n]*\n$/),
    ])
    const allowed = kt(dir, ['compare', 'base.json', 'other.json', '--allow-different-data'])
    expect(allowed.status).toBe(0)
    expect(allowed.stdout).toContain('different data')
  })
})

interface WorkflowStep {
  readonly name: string
  readonly uses?: string
  readonly run?: string
  readonly env: Record<string, string>
  readonly id?: string
}

/**
 * The steps of examples/ci/github-actions.yml as written there: name, id, uses, env and run (a
 * block scalar or one line). Enough for this file's layout; the validator checks the rest.
 */
function workflowSteps(text: string): {env: Record<string, string>; steps: WorkflowStep[]} {
  const lines = text.split('\n')
  const env: Record<string, string> = {}
  const top = lines.indexOf('env:')
  for (let i = top + 1; /^ {2}\S/.test(lines[i]); i++) {
    const [k, ...v] = lines[i].trim().split(': ')
    env[k] = v.join(': ')
  }
  const steps: Array<{name: string; uses?: string; run?: string; env: Record<string, string>; id?: string}> = []
  for (let i = 0; i < lines.length; i++) {
    const start = /^ {6}- (\w+): (.*)$/.exec(lines[i])
    const field = /^ {8}(\w+):(?: (.*))?$/.exec(lines[i])
    if (start)
      steps.push({[start[1]]: start[2], name: start[1] === 'name' ? start[2] : start[2], env: {}} as WorkflowStep)
    else if (field && steps.length > 0) {
      const step = steps[steps.length - 1]
      const body: string[] = []
      while (i + 1 < lines.length && (lines[i + 1].startsWith('          ') || lines[i + 1] === ''))
        body.push(lines[++i].slice(10))
      if (field[1] === 'run') step.run = field[2] === '|' ? body.join('\n') : field[2]
      else if (field[1] === 'env')
        for (const l of body.filter((x) => x.trim())) step.env[l.split(': ')[0]] = l.split(': ').slice(1).join(': ')
      else if (field[1] === 'id' || field[1] === 'uses' || field[1] === 'name') step[field[1]] = field[2]
    }
  }
  return {env, steps}
}

describe('the GitHub Actions recipe (examples/ci/github-actions.yml)', () => {
  const workflowFile = join(packageRoot, 'examples', 'ci', 'github-actions.yml')

  it('validates with action-validator', () => {
    const r = spawnSync(join(packageRoot, 'node_modules', '.bin', 'action-validator'), [workflowFile], {
      encoding: 'utf8',
    })
    expect(r.stderr + r.stdout).toBe('')
    expect(r.status).toBe(0)
  })

  it('its shell steps, run locally on two pull requests of a throw-away engine repository, pass an improvement and fail a regression', () => {
    const {env, steps} = workflowSteps(readFileSync(workflowFile, 'utf8'))
    expect(steps.filter((s) => s.run).length).toBeGreaterThanOrEqual(6)
    const repo = join(project, 'engine-repo')
    mkdirSync(repo)
    const git = (...args: string[]) => {
      const r = spawnSync('git', ['-c', 'user.name=kt', '-c', 'user.email=kt@example.invalid', ...args], {
        cwd: repo,
        encoding: 'utf8',
      })
      if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`)
      return r.stdout.trim()
    }
    expect(kt(repo, ['init', '--engine', 'retrieval-service', '--lang', 'python']).status).toBe(0)
    writeFileSync(join(repo, '.gitignore'), 'node_modules\n.kt-ci\nreports\n')
    const service = readFileSync(join(repo, 'service.py'), 'utf8')
    const reply = 'return {"ids": ids, "cost_ms": cost_ms(work)}'
    expect(service).toContain(reply)
    const answer = (ids: string) =>
      writeFileSync(join(repo, 'service.py'), service.replace(reply, reply.replace('"ids": ids', `"ids": ${ids}`)))
    git('init', '-q', '-b', 'main')
    answer('ids[:1]') // the base: answers with its best turn only
    git('add', '-A')
    git('commit', '-qm', 'base')
    const baseSha = git('rev-parse', 'HEAD')
    writeFileSync(join(repo, 'service.py'), service)
    git('commit', '-qam', 'improves: every ranked turn')
    const improves = git('rev-parse', 'HEAD')
    git('checkout', '-q', baseSha)
    answer('ids[1:2]')
    git('commit', '-qam', 'regresses: the second best turn only')
    const regresses = git('rev-parse', 'HEAD')
    spawnSync('ln', ['-s', join(project, 'node_modules'), join(repo, 'node_modules')])

    const cache = new Map<string, string>()
    /** One job on a pull request from `head` into the base commit; returns the last step's status and the comment. */
    const job = (head: string, label: string) => {
      git('checkout', '-q', head)
      rmSync(join(repo, '.kt-ci'), {recursive: true, force: true})
      const runner = mkdtempSync(join(root, `runner-${label}-`))
      const outputs: Record<string, Record<string, string>> = {}
      const log: string[] = []
      let status = 0
      for (const step of steps) {
        if (step.name === 'Install kt') continue // the project's install, done once above
        if (step.uses?.startsWith('actions/cache')) {
          const key = `kt-run-${outputs.keys.base}`
          mkdirSync(join(repo, env.KT_OUT), {recursive: true})
          if (cache.has(key)) spawnSync('cp', ['-r', cache.get(key)!, join(repo, env.KT_OUT, 'base')])
          continue
        }
        if (!step.run) continue
        const outFile = join(runner, `${step.id ?? 'step'}.out`)
        writeFileSync(outFile, '')
        const stepEnv: Record<string, string> = {}
        for (const [k, v] of Object.entries(step.env))
          stepEnv[k] = v
            .replace('${{ github.event.pull_request.base.sha }}', baseSha)
            .replace('${{ steps.compare.outputs.exit }}', outputs.compare?.exit ?? '')
        const r = spawnSync('bash', ['--noprofile', '--norc', '-eo', 'pipefail', '-c', step.run], {
          cwd: repo,
          encoding: 'utf8',
          timeout: STEP_TIMEOUT_MS,
          env: {
            ...process.env,
            ...env,
            ...stepEnv,
            RUNNER_TEMP: runner,
            GITHUB_OUTPUT: outFile,
            GITHUB_WORKSPACE: repo,
          },
        })
        log.push(`## ${step.name} (exit ${r.status})\n${r.stdout}${r.stderr}`)
        if (step.id)
          outputs[step.id] = Object.fromEntries(
            readFileSync(outFile, 'utf8')
              .split('\n')
              .filter(Boolean)
              .map((l) => l.split('=') as [string, string]),
          )
        status = r.status ?? -1
        if (status !== 0) break
      }
      const key = `kt-run-${outputs.keys.base}`
      if (!cache.has(key)) {
        const saved = join(root, `cache-${label}`)
        spawnSync('cp', ['-r', join(repo, env.KT_OUT, 'base'), saved])
        cache.set(key, saved)
      }
      spawnSync('git', ['worktree', 'remove', '--force', join(runner, 'kt-base')], {cwd: repo})
      return {status, comment: readFileSync(join(repo, env.KT_OUT, 'compare.md'), 'utf8'), log: log.join('\n')}
    }

    const good = job(improves, 'improves')
    expect(good.status, good.log).toBe(0)
    expect(good.comment).toMatch(/^<!-- kt-compare -->\n### kt compare: /)
    // the summary table (overall, before the collapsed details): gains, no regression
    const summary = good.comment.slice(0, good.comment.indexOf('<details>'))
    expect(summary).toMatch(/\| recall@10 \|[^\n]*🟢 improved \|/)
    expect(summary).not.toContain('regressed')
    expect(existsSync(join(repo, '.kt-ci', 'head', 'report.html'))).toBe(true)

    const bad = job(regresses, 'regresses')
    expect(bad.status, bad.log).toBe(1)
    expect(bad.comment).toMatch(/### kt compare: 🔴 regressed/)
    // the base did not change: its run came from the cache, not from the plan again
    expect(bad.log).toContain('base run restored from the cache')
    expect(bad.log).toContain('kt compare: a metric regressed')
  })
})
