import {describe, expect, it} from 'vitest'
import {mkdtempSync, readFileSync, writeFileSync, existsSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {execFileSync} from 'node:child_process'
import {IMPORTANCE_SPACE} from '../../src/engine/importance/space.js'
import {makeProfile, profileJson, renderShellScript, shellQuote, parseEnvFile, configFromEnvFile, renderEnvFile} from '../../src/deploy/profile.js'
import {deployProfile, rollback, activeProfile} from '../../src/deploy/target.js'

const dir = mkdtempSync(join(tmpdir(), 'kt-deploy-'))
const config = (d: number, s: number, r: number, h: number) => ({decay: d, surprise: s, relevance: r, habituation: h, time_scale_hours: 168})

function write(name: string, c: ReturnType<typeof config>): string {
  const file = join(dir, `${name}.json`)
  writeFileSync(file, profileJson(makeProfile(IMPORTANCE_SPACE, name, c, {}, 'test-run')))
  return file
}

describe('profiles', () => {
  it('quotes shell values safely', () => {
    expect(shellQuote("it's")).toBe(`'it'\\''s'`)
    const out = execFileSync('sh', ['-c', `x=${shellQuote("a'b $HOME `id`")}; printf %s "$x"`], {encoding: 'utf8'})
    expect(out).toBe("a'b $HOME `id`")
  })

  it('exports a shell script that sets exactly the profile values', () => {
    const p = makeProfile(IMPORTANCE_SPACE, 'p', config(0.1, 0.55, 0.3, 0.05), {}, 'r')
    const script = join(dir, 'p.sh')
    writeFileSync(script, renderShellScript(IMPORTANCE_SPACE, p))
    const env = execFileSync('sh', ['-c', `. ${script}; env`], {encoding: 'utf8'})
    const loaded = configFromEnvFile(IMPORTANCE_SPACE, env.split('\n').filter((l) => l.startsWith('IMPORTANCE_')).join('\n'), 'env')
    expect(loaded).toEqual(config(0.1, 0.55, 0.3, 0.05))
  })

  it('rejects weights that do not sum to 1 within 1e-9, or leave [0, 1]', () => {
    expect(() => makeProfile(IMPORTANCE_SPACE, 'bad', config(0.5, 0.3, 0.2, 0.1), {}, 'r')).toThrow(/summing to 1/)
    expect(() => makeProfile(IMPORTANCE_SPACE, 'bad', config(1.2, -0.2, 0, 0), {}, 'r')).toThrow(/decay: expected a weight in \[0, 1\]/)
    expect(() => makeProfile(IMPORTANCE_SPACE, 'ok', config(0.4, 0.3, 0.2, 0.1 + 5e-10), {}, 'r')).not.toThrow()
  })

  it('parses .env files and names the line of a bad one', () => {
    expect(parseEnvFile("# c\nA=1\nexport B='x y'\n", 'f.env')).toEqual({A: '1', B: 'x y'})
    expect(() => parseEnvFile('A=1\nnot a line\n', 'f.env')).toThrow(/f\.env:2: expected a line NAME=value/)
    const p = makeProfile(IMPORTANCE_SPACE, 'p', config(0.25, 0.25, 0.25, 0.25), {}, 'r')
    expect(configFromEnvFile(IMPORTANCE_SPACE, renderEnvFile(IMPORTANCE_SPACE, p), 'p.env')).toEqual(p.config)
  })
})

describe('deploy and rollback', () => {
  it('keeps the replaced profile and restores it on rollback', () => {
    const target = join(dir, 'target')
    const a = write('alpha', config(0.4, 0.3, 0.2, 0.1))
    const b = write('beta', config(0.1, 0.6, 0.25, 0.05))
    expect(deployProfile(IMPORTANCE_SPACE, a, target)).toEqual({active: 'alpha', previous: null, history: 0})
    expect(deployProfile(IMPORTANCE_SPACE, b, target)).toEqual({active: 'beta', previous: 'alpha', history: 1})
    expect(readFileSync(join(target, 'active.env'), 'utf8')).toContain('IMPORTANCE_WEIGHT_SURPRISE=0.6')
    expect(rollback(IMPORTANCE_SPACE, target)).toEqual({active: 'alpha', previous: 'beta', history: 0})
    expect(activeProfile(IMPORTANCE_SPACE, target)?.name).toBe('alpha')
    expect(readFileSync(join(target, 'active.env'), 'utf8')).toContain('IMPORTANCE_WEIGHT_DECAY=0.4')
    expect(() => rollback(IMPORTANCE_SPACE, target)).toThrow(/expected a previous profile to roll back to/)
  })

  it('refuses an invalid profile without touching the active one', () => {
    const target = join(dir, 'target2')
    deployProfile(IMPORTANCE_SPACE, write('gamma', config(0.4, 0.3, 0.2, 0.1)), target)
    const bad = join(dir, 'bad.json')
    const p = JSON.parse(profileJson(makeProfile(IMPORTANCE_SPACE, 'bad', config(0.4, 0.3, 0.2, 0.1), {}, 'r')))
    p.config.decay = 0.45
    writeFileSync(bad, JSON.stringify(p))
    expect(() => deployProfile(IMPORTANCE_SPACE, bad, target)).toThrow(/bad\.json: config: .*summing to 1/)
    expect(activeProfile(IMPORTANCE_SPACE, target)?.name).toBe('gamma')
    expect(existsSync(join(target, 'history', '0001.json'))).toBe(false)
  })
})

describe('deploying retrieval profiles', () => {
  it('reads the space from the profile and the deployment', async () => {
    const {RETRIEVAL_SPACE} = await import('../../src/engine/retrieval/space.js')
    const {defaultConfig} = await import('../../src/space/space.js')
    const {spaceOfProfileFile} = await import('../../src/deploy/spaces.js')
    const file = join(dir, 'retrieval.json')
    writeFileSync(file, profileJson(makeProfile(RETRIEVAL_SPACE, 'fast', defaultConfig(RETRIEVAL_SPACE), {}, 'r')))
    expect(spaceOfProfileFile(file).id).toBe('retrieval')
    const target = join(dir, 'retrieval-target')
    deployProfile(RETRIEVAL_SPACE, file, target)
    expect(spaceOfProfileFile(join(target, 'active.json')).id).toBe('retrieval')
    expect(() => deployProfile(IMPORTANCE_SPACE, file, target)).toThrow(/space: expected "importance", got "retrieval"/)
    const bad = join(dir, 'nospace.json')
    writeFileSync(bad, '{"space": "ranking"}')
    expect(() => spaceOfProfileFile(bad)).toThrow(/nospace\.json: space: expected one of importance, retrieval, got "ranking"/)
  })
})
