import {describe, expect, it} from 'vitest'
import {mkdirSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {TenantStore} from '../../src/online/store.js'
import {LOG_FORMAT} from '../../src/online/log-file.js'
import {spaceById} from '../../src/online/spaces.js'
import type {ParamSpace} from '../../src/space/types.js'
import {InputError} from '../../src/util/errors.js'
import {createTenant, kt, openTenant, tempDir, TEST_SETTINGS} from './helpers.js'

/** Changes one byte of line `line` (1-based) of the log: a digit of its time stamp. */
function flipByte(logPath: string, line: number): void {
  const lines = readFileSync(logPath, 'utf8').split('\n')
  const m = /"t":(\d)/.exec(lines[line - 1])!
  const at = m.index + 4
  lines[line - 1] = `${lines[line - 1].slice(0, at)}${(Number(m[1]) + 1) % 10}${lines[line - 1].slice(at + 1)}`
  writeFileSync(logPath, lines.join('\n'))
}

function openError(dir: string, resolveSpace?: (id: string) => ParamSpace): Error {
  try {
    if (resolveSpace) TenantStore.open({dir, tenant: 'acme', resolveSpace}).close()
    else openTenant(dir, 'acme').close()
  } catch (error) {
    return error as Error
  }
  throw new Error('the open succeeded')
}

/** A tenant with 12 queries of feedback: a snapshot after 20 events, and log lines after it. */
function tenantWithSnapshot(): {dir: string; logPath: string; covered: number; total: number} {
  const dir = tempDir()
  const store = createTenant(dir, 'acme', TEST_SETTINGS, 20)
  for (let q = 0; q < 12; q++) {
    const {queryId} = store.choose(q * 1000)
    store.used(String(queryId), q * 1000 + 500)
  }
  const statePath = join(dir, 'acme', 'state.json')
  const snapshot = readFileSync(statePath, 'utf8')
  store.close()
  writeFileSync(statePath, snapshot) // the snapshot of event 20, so that the log goes on after it
  const logPath = join(dir, 'acme', 'log.jsonl')
  return {
    dir,
    logPath,
    covered: JSON.parse(snapshot.split('\n')[0]).logLines,
    total: readFileSync(logPath, 'utf8').trim().split('\n').length,
  }
}

describe('online state integrity', () => {
  it('notices a byte flipped in the part of the log the snapshot covers (the chain of line checksums), naming the line', () => {
    const {dir, logPath, covered, total} = tenantWithSnapshot()
    expect(covered).toBeGreaterThan(5)
    expect(total).toBeGreaterThan(covered)
    flipByte(logPath, 5)
    const error = openError(dir)
    expect(error).toBeInstanceOf(InputError)
    expect(error.message).toBe(
      `${logPath}:5: expected a log line matching its chained checksum, got a mismatch: this line or one before it was changed after it was written (the log is the record of every event; restore it from a backup)`,
    )
  })

  it('notices a byte flipped after the snapshot, and a covered line removed whole', () => {
    const a = tenantWithSnapshot()
    flipByte(a.logPath, a.total - 1)
    expect(openError(a.dir).message).toMatch(
      new RegExp(`log\\.jsonl:${a.total - 1}: expected a log line matching its chained checksum`),
    )
    const b = tenantWithSnapshot()
    const lines = readFileSync(b.logPath, 'utf8').split('\n')
    lines.splice(3, 1)
    writeFileSync(b.logPath, lines.join('\n'))
    expect(openError(b.dir).message).toMatch(/log\.jsonl:4: expected a log line matching its chained checksum/)
  })

  it('writes log format 2 (every line ends in its chained checksum) and still reads and appends to a format-1 log', () => {
    const {dir, logPath} = tenantWithSnapshot()
    const lines = readFileSync(logPath, 'utf8').trim().split('\n')
    expect(JSON.parse(lines[0]).v).toBe(LOG_FORMAT)
    for (const line of lines) expect(line).toMatch(/,"c":"[0-9a-f]{16}"}$/)
    const live = openTenant(dir, 'acme')
    const state = JSON.stringify(live.learner.save())
    live.close()
    // the same log as kt 0.1 wrote it: no checksums, init v 1
    const old = lines
      .map((l) => l.replace(/,"c":"[0-9a-f]+"}$/, '}'))
      .map((l, i) => (i === 0 ? l.replace('"v":2', '"v":1') : l))
    writeFileSync(logPath, `${old.join('\n')}\n`)
    rmSync(join(dir, 'acme', 'state.json'))
    const reopened = openTenant(dir, 'acme')
    expect(JSON.stringify(reopened.learner.save())).toBe(state)
    reopened.choose(100_000)
    reopened.close()
    const after = readFileSync(logPath, 'utf8').trim().split('\n')
    expect(after).toHaveLength(old.length + 1)
    expect(after.at(-1)).not.toMatch(/"c":/) // appended in the log's own format
    expect(JSON.parse(readFileSync(join(dir, 'acme', 'state.json'), 'utf8').split('\n')[0]).chain).toBeNull()
    const again = openTenant(dir, 'acme')
    expect(again.openReport.rebuilt).toBeNull()
    again.close()
  })

  it('a state.json that is a folder: one line naming the file, exit 2', () => {
    const dir = tempDir()
    expect(kt(['online', 'init', '--tenant', 'acme', '--dir', dir]).status).toBe(0)
    TenantStore.open({dir, tenant: 'acme', resolveSpace: (id) => spaceById(id)}).close() // writes state.json
    const statePath = join(dir, 'acme', 'state.json')
    rmSync(statePath)
    mkdirSync(statePath)
    const error = openError(dir, (id) => spaceById(id))
    expect(error).toBeInstanceOf(InputError)
    expect(error.message).toBe(
      `${statePath}: expected a state file (a regular file kt writes; remove what is there), got a folder or other non-file`,
    )
    const cli = kt(['online', 'choose', '--tenant', 'acme', '--dir', dir, '--time', '5'])
    expect(cli.status).toBe(2)
    expect(cli.stderr.trim().split('\n')).toHaveLength(1)
    expect(cli.stderr).toContain(`${statePath}: expected a state file`)
  })
})
