import {afterAll, describe, expect, it} from 'vitest'
import {existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {kt} from './helpers.js'
import {OUT_FLAG_PREFIX} from '../../src/cli/base.js'
import {packageRoot} from '../../src/util/paths.js'

const dir = mkdtempSync(join(tmpdir(), 'kt-out-folder-'))
afterAll(() => rmSync(dir, {recursive: true, force: true}))

/**
 * The smallest arguments with which each command that has --out reaches its --out check. A new
 * command with --out must be added here (the first test fails until it is).
 */
const ARGS: Record<string, string[]> = {
  run: ['run'],
  phase: ['phase', '1'],
  search: ['search', '--objective', 'branin', '--trials', '2'],
  'data:generate': ['data', 'generate'],
  'data:import': ['data', 'import', 'turns.csv'],
  'study:export': ['study', 'export', 'co'],
  'rerank:generate': ['rerank', 'generate'],
  'rerank:log': ['rerank', 'log', '--data', 'memory.json'],
  'bench:optimizers': ['bench', 'optimizers'],
}

describe('--out is always a folder', () => {
  const manifest = JSON.parse(readFileSync(join(packageRoot, 'oclif.manifest.json'), 'utf8')) as {
    commands: Record<string, {flags: Record<string, {description?: string}>}>
  }
  const withOut = Object.entries(manifest.commands).filter(([, c]) => c.flags.out !== undefined)

  it('every command with --out uses the one shared flag (outFlag in src/cli/base.ts)', () => {
    expect(withOut.map(([id]) => id).sort()).toEqual(Object.keys(ARGS).sort())
    for (const [id, c] of withOut)
      expect(c.flags.out.description, id).toMatch(new RegExp(`^${OUT_FLAG_PREFIX.replace(/[()]/g, '\\$&')}: \\S`))
  })

  it('an --out that names an existing file is refused in one line, exit 2, before any work', () => {
    writeFileSync(join(dir, 'taken'), 'not a folder\n')
    for (const [id, args] of Object.entries(ARGS)) {
      const r = kt([...args, '--out', 'taken'], {cwd: dir})
      expect(r.status, `${id}: ${r.stderr}`).toBe(2)
      expect(r.stderr, id).toBe(
        'kt: --out taken: expected a folder (kt writes its files inside it), got an existing file\n',
      )
      expect(readFileSync(join(dir, 'taken'), 'utf8')).toBe('not a folder\n')
    }
  })

  it('kt data import writes OUT/dataset.json, kt study export OUT/<study>.<format> (a name that is no file name is refused: src/study/name.ts)', () => {
    let r = kt(['data', 'import', join(packageRoot, 'fixtures/import/turns.csv'), '--out', 'imported/mine', '--json'], {
      cwd: dir,
    })
    expect(r.status, r.stderr).toBe(0)
    expect(JSON.parse(r.stdout).file).toBe(join('imported/mine', 'dataset.json'))
    expect(JSON.parse(readFileSync(join(dir, 'imported/mine/dataset.json'), 'utf8')).turns).toHaveLength(12)
    r = kt(
      ['search', '--objective', 'branin', '--trials', '3', '--storage', 's.sqlite', '--study', '../a/b', '--json'],
      {cwd: dir},
    )
    expect(r.status).toBe(2)
    expect(r.stderr).toMatch(/^kt: --study: expected a study name of letters/)
    r = kt(['search', '--objective', 'branin', '--trials', '3', '--storage', 's.sqlite', '--study', 'a.b', '--json'], {
      cwd: dir,
    })
    expect(r.status, r.stderr).toBe(0)
    r = kt(['study', 'export', 'a.b', '--storage', 's.sqlite', '--format', 'json', '--out', 'exports'], {cwd: dir})
    expect(r.status, r.stderr).toBe(0)
    expect(r.stdout).toBe(`wrote 3 trials to ${join('exports', 'a.b.json')}\n`)
    expect(JSON.parse(readFileSync(join(dir, 'exports', 'a.b.json'), 'utf8')).trials).toHaveLength(3)
    r = kt(['study', 'export', '../a/b', '--storage', 's.sqlite', '--format', 'json', '--out', 'exports'], {cwd: dir})
    expect(r.status).toBe(2)
    expect(existsSync(join(dir, 'a'))).toBe(false)
  })
})
