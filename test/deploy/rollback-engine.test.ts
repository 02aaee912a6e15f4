import {copyFileSync, mkdirSync, mkdtempSync, readFileSync, renameSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join, relative} from 'node:path'
import {describe, expect, it} from 'vitest'
import {makeProfile, writeProfileFiles} from '../../src/deploy/profile.js'
import {loadEngineFile} from '../../src/adapters/file.js'
import {defaultConfig} from '../../src/space/space.js'
import {packageRoot} from '../../src/util/paths.js'
import {kt} from '../cli/helpers.js'
import {PASSED} from './helpers.js'

/**
 * The rollback `kt deploy` prints for engine profiles written by `kt run` (phase 6 records the
 * engine file relative to the run's profiles/ folder, which the target's stored copy is not in).
 */
describe('kt deploy prints a rollback that runs as printed for engine profiles', () => {
  it("records the engine file it was deployed with (absolute, with its table's fingerprint) and rolls back with it", () => {
    const dir = mkdtempSync(join(tmpdir(), 'kt-rollback-engine-'))
    const engineFile = join(dir, 'eng', 'engine.json')
    mkdirSync(join(dir, 'eng'))
    copyFileSync(join(packageRoot, 'examples', 'python-engine', 'engine.json'), engineFile)
    const spec = loadEngineFile(engineFile)
    // as phase 6 writes them: engine.file relative to the run's profiles/ folder
    const runDir = join(dir, 'run')
    const engine = {name: spec.name, file: relative(join(runDir, 'profiles'), engineFile)}
    const write = (name: string, alpha: number) => {
      const config = {...defaultConfig(spec.space), 'w.bm25': alpha, 'w.recency': 1 - alpha}
      const profile = makeProfile({
        kind: 'engine',
        space: spec.space,
        name,
        config,
        metrics: {quality: 0.5},
        sourceRun: 'seed42-plan0123456789ab',
        validation: PASSED,
        engine,
      })
      writeProfileFiles(runDir, `profiles/${name}`, profile)
      return join(runDir, 'profiles', `${name}.json`)
    }
    const first = write('first', 0.7)
    const second = write('second', 0.4)
    // a working folder and a target where that relative path leads nowhere
    const cwd = join(dir, 'c', 'd', 'e')
    mkdirSync(cwd, {recursive: true})
    const target = '../../../deployed/t'
    expect(kt(['deploy', first, '--target', target], {cwd}).status).toBe(0)
    const d = kt(['deploy', second, '--target', target], {cwd})
    expect(d.status, d.stderr).toBe(0)
    const hint = /; (kt rollback [^)]*?) restores it\)/.exec(d.stdout)?.[1]
    expect(hint).toBe(`kt rollback --target ${target}`)
    const active = () =>
      (JSON.parse(readFileSync(join(dir, 'deployed', 't', 'active.json'), 'utf8')) as {name: string}).name
    expect(active()).toBe('second')
    // the hint, run as printed
    const r = kt(hint!.split(' ').slice(1), {cwd})
    expect(r.stderr).toBe('')
    expect(r.status).toBe(0)
    expect(active()).toBe('first')
    const index = JSON.parse(readFileSync(join(dir, 'deployed', 't', 'index.json'), 'utf8')) as {
      active: {engine: {file: string; space_sha256: string}}
    }
    expect(index.active.engine).toEqual({
      file: engineFile,
      space_sha256: makeProfile({
        kind: 'engine',
        space: spec.space,
        name: 'x',
        config: defaultConfig(spec.space),
        metrics: {},
        sourceRun: 'x',
        validation: PASSED,
        engine,
      }).engine!.space_sha256,
    })

    // the engine file moved away: one line naming the index and what to do; --engine names where it is now
    expect(kt(['deploy', second, '--target', target], {cwd}).status).toBe(0)
    const moved = join(dir, 'eng', 'moved.json')
    renameSync(engineFile, moved)
    const lost = kt(['rollback', '--target', target], {cwd})
    expect(lost.status).toBe(2)
    expect(lost.stderr.trim().split('\n')).toHaveLength(1)
    expect(lost.stderr).toMatch(
      /index\.json: engine of first: expected the engine file it was deployed with; name the engine file with --engine FILE, got no file .*engine\.json/,
    )
    expect(active()).toBe('second')
    const named = kt(['rollback', '--target', target, '--engine', moved], {cwd})
    expect(named.status, named.stderr).toBe(0)
    expect(active()).toBe('first')
  })
})
