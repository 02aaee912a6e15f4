/**
 * "A profile can run code": hostile values through every field of every profile kind. Each
 * poisoned profile is either refused by the loader (nothing written) or deployed; every deployed
 * target is then sourced with sh, dash and bash (`. active.sh` and `set -a; . active.env`) and read
 * with a dotenv parser, and the only variables that may change are the declared ones, with their
 * declared values; no payload may create its marker file. The same holds after `kt rollback`.
 */
import {describe, expect, it} from 'vitest'
import {existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {spawnSync} from 'node:child_process'
import {profileJson, profileAssignments, type Profile, type ProfileKind} from '../../src/deploy/profile.js'
import {deployProfile, rollback} from '../../src/deploy/target.js'
import {InputError} from '../../src/util/errors.js'
import {sampleProfile} from './helpers.js'

const dir = mkdtempSync(join(tmpdir(), 'kt-payload-'))
const MARKER = join(dir, 'PWNED')

/** Each payload tries to run `touch MARKER` or to add a variable EVIL. */
const PAYLOADS = [
  `$(touch ${MARKER})`,
  `\`touch ${MARKER}\``,
  `'; touch ${MARKER}; '`,
  `"; touch ${MARKER}; "`,
  `x\ntouch ${MARKER}\nEVIL=1`,
  `x\rtouch ${MARKER}\rEVIL=1`,
  `x\u2028touch ${MARKER}\u2028EVIL=1`,
  `x\u0000touch ${MARKER}`,
  `; touch ${MARKER}`,
  `x #\nEVIL=1`,
  `\u202etouch ${MARKER}`,
]

type Json = Record<string, unknown>
/** Where a payload can go in a profile of a kind: a path of keys, or a function for keys themselves. */
const FIELDS: Array<{name: string; kinds?: ProfileKind[]; set: (p: Json, v: string) => void}> = [
  {name: 'name', set: (p, v) => (p.name = v)},
  {name: 'kind', set: (p, v) => (p.kind = v)},
  {name: 'space', set: (p, v) => (p.space = v)},
  {name: 'description', set: (p, v) => (p.description = v)},
  {name: 'source_run', set: (p, v) => (p.source_run = v)},
  {name: 'notes[0]', set: (p, v) => ((p.notes as string[])[0] = v)},
  {name: 'metrics key', set: (p, v) => ((p.metrics as Json)[v] = 1)},
  {name: 'metrics value', set: (p, v) => ((p.metrics as Json).quality = v)},
  {name: 'config value', set: (p, v) => ((p.config as Json)[Object.keys(p.config as Json)[0]] = v)},
  {name: 'config key', set: (p, v) => ((p.config as Json)[v] = 1)},
  {name: 'env name', set: (p, v) => ((p.env as Json)[Object.keys(p.env as Json)[0]] = v)},
  {name: 'env key', set: (p, v) => ((p.env as Json)[v] = 'KT_X')},
  {name: 'validation.note', set: (p, v) => ((p.validation as Json).note = v)},
  {name: 'criteria id', set: (p, v) => (((p.validation as Json).criteria as Json[])[0].id = v)},
  {name: 'criteria description', set: (p, v) => (((p.validation as Json).criteria as Json[])[0].description = v)},
  {name: 'validation.data', set: (p, v) => ((p.validation as Json).data = [v])},
  {
    name: 'leakage dataset',
    set: (p, v) => (p.leakage = [{dataset: v, signal: 'surprise', verdict: 'ok', dependence: 0.1, flagged: false}]),
  },
  {name: 'rollout gate', set: (p, v) => ((p.rollout as Json[])[0].gate = v)},
  {name: 'engine.name', kinds: ['engine'], set: (p, v) => ((p.engine as Json).name = v)},
  {name: 'engine.file', kinds: ['engine'], set: (p, v) => ((p.engine as Json).file = v)},
  {name: 'engine mode value', kinds: ['engine'], set: (p, v) => ((p.config as Json).mode = v)},
  {name: 'override type', kinds: ['routed'], set: (p, v) => ((p.overrides as Json)[v] = {'bm25.b': 0.5})},
  {name: 'override value', kinds: ['routed'], set: (p, v) => ((p.overrides as Json).temporal = {'bm25.k1': v})},
  {name: 'routing reason', kinds: ['routed'], set: (p, v) => (((p.routing as Json).per_type as Json[])[0].reason = v)},
]
const KINDS: ProfileKind[] = ['importance', 'retrieval', 'routed', 'engine']

/** A JS port of the line parser of the npm `dotenv` package (v16, lib/main.js; BSD-2-Clause): its `m` flag also ends lines at U+2028/U+2029. */
function dotenvParse(src: string): Record<string, string> {
  const LINE =
    /(?:^|^)\s*(?:export\s+)?([\w.-]+)(?:\s*=\s*?|:\s+?)(\s*'(?:\\'|[^'])*'|\s*"(?:\\"|[^"])*"|\s*`(?:\\`|[^`])*`|[^#\r\n]+)?\s*(?:#.*)?(?:$|$)/gm
  const obj: Record<string, string> = {}
  const lines = src.replace(/\r\n?/gm, '\n')
  let match
  while ((match = LINE.exec(lines)) != null) {
    let value = (match[2] || '').trim()
    value = value.replace(/^(['"`])([\s\S]*)\1$/gm, '$2')
    obj[match[1]] = value
  }
  return obj
}

/** The environment after sourcing each target's files in a clean shell, one spawn per shell and mode. */
function sourcedEnvs(shell: string, mode: 'sh' | 'env', targets: string[]): Array<Record<string, string>> {
  const script = join(dir, `source-${mode}.sh`)
  const file = mode === 'sh' ? 'active.sh' : 'active.env'
  const source = mode === 'sh' ? `. "$t/${file}"` : `set -a; . "$t/${file}"; set +a`
  // each target in its own subshell; env -0 separates variables by NUL so values may hold newlines
  writeFileSync(script, `for t in "$@"; do ( ${source}; printf '\\036'; env -0; printf '\\035' ) 2>/dev/null; done\n`)
  const r = spawnSync(shell, [script, ...targets], {cwd: dir, env: {}, encoding: 'utf8', maxBuffer: 64 << 20})
  const blocks = r.stdout.split('\u001d').slice(0, -1)
  expect(blocks, `${shell} ${mode}: ${r.stderr}`).toHaveLength(targets.length)
  return blocks.map((b) => {
    const env: Record<string, string> = {}
    for (const kv of b.slice(b.indexOf('\u001e') + 1).split('\0')) {
      if (!kv) continue
      const eq = kv.indexOf('=')
      env[kv.slice(0, eq)] = kv.slice(eq + 1)
    }
    return env
  })
}

/** What the same script leaves in the environment when the files it sources are empty (PWD, SHLVL, ...). */
function baseline(shell: string, mode: 'sh' | 'env'): Record<string, string> {
  const empty = join(dir, 'empty-target')
  mkdirSync(empty, {recursive: true})
  writeFileSync(join(empty, 'active.sh'), '')
  writeFileSync(join(empty, 'active.env'), '')
  return sourcedEnvs(shell, mode, [empty])[0]
}

describe('hostile values in every field of every profile kind', () => {
  it('are refused or exported inert: sourcing with sh, dash and bash and reading with dotenv sets only the declared variables', () => {
    const deployed: Array<{target: string; expected: Record<string, string>; label: string}> = []
    let refused = 0
    let cases = 0
    const bases = Object.fromEntries(KINDS.map((kind) => [kind, profileJson(sampleProfile(kind))]))
    for (const kind of KINDS)
      for (const field of FIELDS.filter((f) => !f.kinds || f.kinds.includes(kind)))
        PAYLOADS.forEach((payload, i) => {
          cases++
          const p = JSON.parse(bases[kind]) as Json
          field.set(p, payload)
          const file = join(dir, `p-${kind}-${field.name.replace(/\W/g, '_')}-${i}.json`)
          writeFileSync(file, JSON.stringify(p))
          const target = join(dir, `t-${kind}-${field.name.replace(/\W/g, '_')}-${i}`)
          try {
            deployProfile(file, target, {force: true, reason: 'payload test'})
          } catch (error) {
            // refused: must be a one-line input error, and nothing may be active
            expect(error, `${kind} ${field.name} ${JSON.stringify(payload)}`).toBeInstanceOf(InputError)
            expect((error as Error).message).not.toMatch(/[\n\r\u2028\u2029\0]/)
            expect(existsSync(join(target, 'active.env'))).toBe(false)
            refused++
            return
          }
          deployed.push({
            target,
            expected: Object.fromEntries(profileAssignments(p as unknown as Profile)),
            label: `${kind} ${field.name} ${JSON.stringify(payload)}`,
          })
        })
    // the free-text fields accept printable payloads ($(...), quotes, ;): those must still be inert
    expect(deployed.length).toBeGreaterThan(0)
    expect(refused).toBeGreaterThan(cases / 2)
    const targets = deployed.map((d) => d.target)
    for (const shell of ['sh', 'dash', 'bash']) {
      for (const mode of ['sh', 'env'] as const) {
        const before = baseline(shell, mode)
        const envs = sourcedEnvs(shell, mode, targets)
        envs.forEach((env, k) => {
          const changed = Object.fromEntries(
            Object.entries(env).filter(([name, v]) => before[name] !== v && name !== '_'),
          )
          expect(changed, `${shell} ${mode}: ${deployed[k].label}`).toEqual(deployed[k].expected)
        })
      }
    }
    for (const d of deployed) {
      const text = readFileSync(join(d.target, 'active.env'), 'utf8')
      expect(dotenvParse(text), `dotenv: ${d.label}`).toEqual(d.expected)
      // every line: a comment of printable ASCII, or NAME=value
      for (const line of text.split('\n').filter(Boolean))
        expect(line, d.label).toMatch(/^(#[\x20-\x7e]*|[A-Z][A-Z0-9_]*=[A-Za-z0-9._:/+@%,-]*)$/)
    }
    expect(existsSync(MARKER)).toBe(false)
  })

  it("stays inert through rollback, and the issue's reproduction is refused outright", () => {
    const target = join(dir, 'rb')
    const clean = join(dir, 'clean.json')
    writeFileSync(clean, profileJson(sampleProfile('retrieval', 'clean')))
    const p = JSON.parse(profileJson(sampleProfile('retrieval', 'printable'))) as Json
    p.notes = [`$(touch ${MARKER}) \`touch ${MARKER}\` '"; touch ${MARKER}`]
    p.description = `'; touch ${MARKER}; echo '`
    const hostile = join(dir, 'printable.json')
    writeFileSync(hostile, JSON.stringify(p))
    deployProfile(hostile, target, {force: true, reason: 'payload test'})
    deployProfile(clean, target, {force: true, reason: 'payload test'})
    rollback(target)
    for (const shell of ['sh', 'dash', 'bash']) {
      spawnSync(shell, ['-c', `. "${target}/active.sh"; set -a; . "${target}/active.env"`], {cwd: dir, env: {}})
    }
    expect(existsSync(MARKER)).toBe(false)
    // the issue: a newline in source_run of a hand-edited profile
    const evil = JSON.parse(profileJson(sampleProfile('importance', 'evil'))) as Json
    evil.source_run = `r1\ntouch ${MARKER}\nEVIL=1`
    const evilFile = join(dir, 'evil.json')
    writeFileSync(evilFile, JSON.stringify(evil))
    expect(() => deployProfile(evilFile, join(dir, 'evil-target'), {force: true, reason: 'x'})).toThrow(
      /evil\.json: source_run: expected a run id/,
    )
    rmSync(MARKER, {force: true})
  })
})
