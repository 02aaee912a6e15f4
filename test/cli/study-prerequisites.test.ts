// The --help examples of kt study list|show|export read a study another command makes: each says
// which (as kt study copy's does), runs as written once that has run, and without it the error
// says how to make a study file.
import {afterAll, describe, expect, it} from 'vitest'
import {spawnSync} from 'node:child_process'
import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {manifestExamples} from './examples.js'
import {kt} from './helpers.js'
import {packageRoot} from '../../src/util/paths.js'

const dir = mkdtempSync(join(tmpdir(), 'kt-study-prereq-'))
afterAll(() => rmSync(dir, {recursive: true, force: true}))

function sh(line: string) {
  const env: NodeJS.ProcessEnv = {...process.env, KT_NO_PROGRESS: '1'}
  delete env.NODE_ENV
  return spawnSync('sh', ['-c', line], {cwd: dir, encoding: 'utf8', env})
}

describe('kt study list|show|export examples from a fresh folder', () => {
  it('without a study file: one line saying how to make one, exit 2', () => {
    for (const args of [
      ['study', 'list'],
      ['study', 'show', 'branin-bohb-s42'],
      ['study', 'export', 'branin-bohb-s42', '--format', 'csv'],
    ]) {
      const r = kt(args, {cwd: dir})
      expect(r.status, args.join(' ')).toBe(2)
      expect(r.stderr).toBe(
        'kt: kt-studies.sqlite: expected an existing kt study file (run kt search --storage kt-studies.sqlite ... first: it creates one), got no such file\n',
      )
    }
  })

  it('each example names the kt search that makes its study, and runs as written after it', () => {
    const bin = `node ${JSON.stringify(join(packageRoot, 'bin', 'kt.js'))}`
    const examples = manifestExamples().filter((e) => ['study:list', 'study:show', 'study:export'].includes(e.command))
    expect(examples).toHaveLength(6)
    const made = new Set<string>()
    for (const e of examples) {
      const first = /^After `(kt search [^`]+)`/.exec(e.description)
      expect(first, `${e.command}#${e.index}: ${e.description}`).not.toBeNull()
      const prerequisite = first![1].replace(/^kt /, `${bin} `)
      if (!made.has(prerequisite)) {
        const p = sh(prerequisite)
        expect(p.status, `${prerequisite}: ${p.stderr}`).toBe(0)
        made.add(prerequisite)
      }
      const r = sh(e.line)
      expect(r.status, `${e.line}: ${r.stderr}`).toBe(0)
    }
    expect(made.size).toBe(2)
  }, 60_000)
})
