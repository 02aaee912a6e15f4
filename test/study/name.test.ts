import {mkdirSync, mkdtempSync, readdirSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {kt} from '../cli/helpers.js'
import {isStudyName, checkStudyName, STUDY_NAME_MAX} from '../../src/study/name.js'
import {runSearch} from '../../src/study/search.js'
import {openStorage} from '../../src/study/storage.js'
import {SqliteStudyFile} from '../helpers/study-file.js'
import {openStudyReader} from '../../src/study/reader.js'
import {startDashboard} from '../../src/dashboard/server.js'
import {InputError} from '../../src/util/errors.js'
import {tinyEngine} from '../adapters/helpers.js'

const HOSTILE = ['../../escaped', '../a/b', 'a/b', '..', '.hidden', '-rf', 'two\nlines', '<b>x</b>', 'a b', '', 'é']

describe('the study-name alphabet (src/study/name.ts)', () => {
  it('takes letters, digits, . _ - starting with a letter or digit, up to the limit', () => {
    for (const ok of ['co-1', 'retrieval-all', 'branin-bohb-s42', 'a.b_c', '9', 'x'.repeat(STUDY_NAME_MAX)])
      expect(isStudyName(ok), ok).toBe(true)
    for (const bad of [...HOSTILE, 'x'.repeat(STUDY_NAME_MAX + 1)]) expect(isStudyName(bad), bad).toBe(false)
    expect(() => checkStudyName('two\nlines', '--study')).toThrow(
      /^--study: expected a study name of letters, digits, '\.', '_' and '-' starting with a letter or digit \(at most 128 characters\), got "two\\nlines"$/,
    )
  })

  it('kt search --engine refuses a name that would leave the store folder: exit 2, nothing written', () => {
    const base = mkdtempSync(join(tmpdir(), 'kt-name-'))
    const dir = join(base, 'a', 'b')
    mkdirSync(dir, {recursive: true})
    const engine = tinyEngine(dir)
    const r = kt(
      ['search', '--engine', engine, '--study', '../../escaped', '--storage', 'sub/st.sqlite', '--trials', '2'],
      {cwd: dir},
    )
    expect(r.status).toBe(2)
    expect(r.stderr).toMatch(/^kt: --study: expected a study name of letters.*, got "\.\.\/\.\.\/escaped"\n$/)
    expect(readdirSync(dir).sort()).toEqual(['engine.json'])
    // sub/../../escaped: where the trial files went
    expect(readdirSync(join(base, 'a'))).toEqual(['b'])
  })

  it('kt worker and kt search --resume refuse such a name by their flag (exit 2)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kt-name-'))
    let r = kt(['worker', '--storage', 'st.sqlite', '--study', '../w'], {cwd: dir})
    expect(r.status).toBe(2)
    expect(r.stderr).toMatch(/^kt: --study: expected a study name/)
    r = kt(['search', '--resume', 'a\nb', '--storage', 'st.sqlite'], {cwd: dir})
    expect(r.status).toBe(2)
    expect(r.stderr).toMatch(/^kt: --resume: expected a study name.*, got "a\\nb"\n$/)
  })

  it('stores refuse to create, import or look up a name outside the alphabet', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kt-name-'))
    const storage = join(dir, 'st.sqlite')
    const good = await runSearch({
      storage,
      study: 'good',
      objective: {name: 'branin'},
      optimizer: 'random',
      maxTrials: 2,
    })
    const store = await openStorage(storage)
    try {
      const {name: _name, createdAt: _c, updatedAt: _u, state: _s, ...rest} = good.study
      await expect(store.createStudy({...rest, name: '../x'}, new Date().toISOString())).rejects.toThrow(
        /st\.sqlite: study: expected a study name/,
      )
      await expect(store.importStudy({...good.study, name: 'a\nb'}, [])).rejects.toBeInstanceOf(InputError)
      await expect(store.getStudy('../good')).rejects.toBeInstanceOf(InputError)
      expect((await store.listStudies()).map((s) => s.name)).toEqual(['good'])
    } finally {
      await store.close()
    }
  })

  it('a name stored before the check is listed escaped on one row; the dashboard answers 400 to a hostile one', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kt-name-'))
    const storage = join(dir, 'st.sqlite')
    const good = await runSearch({
      storage,
      study: 'good',
      objective: {name: 'branin'},
      optimizer: 'random',
      maxTrials: 2,
    })
    // what an older kt let through, written below the storage interface
    const raw = SqliteStudyFile.open(storage)
    const {createdAt: _c, updatedAt: _u, state: _s, ...rest} = good.study
    raw.createStudy({...rest, name: 'legacy\nrow'}, new Date().toISOString())
    raw.close()
    const r = kt(['study', 'list', '--storage', storage])
    expect(r.status).toBe(0)
    const lines = r.stdout.trim().split('\n')
    expect(lines).toHaveLength(3)
    expect(lines.some((l) => l.startsWith('legacy\\nrow '))).toBe(true)
    const reader = await openStudyReader(storage)
    const dash = await startDashboard({reader, port: 0, warm: false})
    try {
      for (const path of ['/api/studies/..%2F..%2Fescaped', '/api/studies/%3Cb%3E', '/api/studies/legacy%0Arow']) {
        const got = await fetch(new URL(path, dash.url))
        expect(got.status, path).toBe(400)
        expect(((await got.json()) as {error: string}).error).toMatch(/study: expected a study name/)
      }
      expect((await fetch(new URL('/api/studies/good', dash.url))).status).toBe(200)
    } finally {
      await dash.close()
      await reader.close()
    }
  })
})
