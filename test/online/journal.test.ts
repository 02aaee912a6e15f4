import {describe, expect, it} from 'vitest'
import {spawnSync} from 'node:child_process'
import {existsSync, readFileSync, readdirSync, renameSync, rmSync, truncateSync, writeFileSync, statSync} from 'node:fs'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {FRAME_HEADER_BYTES, JOURNAL_DIR, Journal, readSegment} from '../../src/online/journal.js'
import {openJournal, openTenant} from '../../src/online/library.js'
import {OnlineError} from '../../src/online/online-error.js'
import {catchUpLog, recoverJournals} from '../../src/online/journal-recovery.js'
import {InputError} from '../../src/util/errors.js'
import {runAndKill, tempDir} from './helpers.js'

const CHILD = fileURLToPath(new URL('./journal-child.ts', import.meta.url))
/** Small segments: a few hundred events each, so the kill test retires several. */
const SMALL_SEGMENT = 16 * 1024

/** Runs the journal child until it has acknowledged `acks` queries, SIGKILLs it `extraMs` later; returns the acknowledged "tenant qid" pairs. */
function runJournalChild(dir: string, acks: number, extraMs: number): Promise<string[]> {
  return runAndKill(CHILD, [dir, String(SMALL_SEGMENT)], acks, extraMs)
}

/** A pid no process has now (a child that has exited). */
function deadPid(): number {
  return spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], {encoding: 'utf8'})
    .stdout as unknown as number
}

/** Journals `n` queries with feedback for tenant `id` in `dir`, then leaves the journal as a dead process would: its segment renamed to a dead pid's, the tenant's log without the journaled lines. */
async function deadJournal(dir: string, id: string, n: number): Promise<{segment: string; logBytes: number}> {
  const {journal} = openJournal(dir)
  const tenant = openTenant({dir, tenant: id, create: {seed: 3}, journal})
  const logPath = join(dir, id, 'log.jsonl')
  const logBytes = statSync(logPath).size
  for (let i = 0; i < n; i++) {
    const c = await tenant.choose({})
    await tenant.feedback({query_id: c.query_id, used: true})
  }
  // a crash: the tenant's log never got the journaled lines (close would write them back)
  const journalDir = join(dir, JOURNAL_DIR)
  const live = readdirSync(journalDir)
    .filter((f) => f.endsWith('.wal'))
    .map((f) => join(journalDir, f))
  const withFrames = live.find((f) => readSegment(f).frames > 0)!
  const dead = join(journalDir, `${deadPid()}-1-000001.wal`)
  renameSync(withFrames, dead)
  for (const f of live) if (f !== withFrames) rmSync(f, {force: true})
  truncateSync(logPath, logBytes)
  ;(tenant.store as unknown as {closed: boolean}).closed = true
  const lockDir = join(dir, id)
  rmSync(join(lockDir, 'lock'), {force: true})
  await journal.close()
  return {segment: dead, logBytes}
}

describe('the server journal (one fdatasync per batch for all tenants)', () => {
  it('loses no acknowledged choose or feedback when the process is SIGKILLed mid-batch, across segment retirements', async () => {
    const dir = tempDir()
    try {
      const {journal} = openJournal(dir)
      for (const id of ['a', 'b', 'c'])
        await openTenant({dir, tenant: id, create: {forgetting: 'none', seed: 5}, journal}).close()
      await journal.close()
      const acked: string[] = []
      let journaled = 0
      for (const [acks, extraMs] of [
        [150, 0],
        [150, 3],
        [300, 1],
      ]) {
        acked.push(...(await runJournalChild(dir, acks, extraMs)))
        // a dead journal is there, unless the kill landed between retirements
        const before = readdirSync(join(dir, JOURNAL_DIR)).filter((f) => f.endsWith('.wal'))
        expect(before.length).toBeGreaterThan(0)
        // the library (a CLI after the crash) catches each tenant up from the dead journal by itself
        for (const id of ['a', 'b', 'c']) {
          const t = openTenant({dir, tenant: id})
          const learner = t.store.learner
          journaled += t.store.openReport.journaled
          for (const pair of acked.filter((p) => p.startsWith(`${id} `))) {
            const q = learner.remembered(pair.slice(2))
            expect(q, `${pair} is in the state`).toBeDefined()
            expect(q!.used).toBe(true)
          }
          expect(learner.counters.duplicate + learner.counters.unknown).toBe(0)
          await t.close()
        }
        // the next server start applies and deletes them
        const recovered = recoverJournals(dir)
        expect(recovered.busy).toEqual([])
        expect(readdirSync(join(dir, JOURNAL_DIR)).filter((f) => f.endsWith('.wal'))).toEqual([])
      }
      expect(acked.length).toBeGreaterThan(500)
      // the kills did leave acknowledged events that only the journal held
      expect(journaled).toBeGreaterThan(0)
    } finally {
      rmSync(dir, {recursive: true, force: true})
    }
  }, 60_000)

  it('applies journaled lines a tenant log lacks, cuts a torn last log line first, and deletes the dead segment', async () => {
    const dir = tempDir()
    try {
      const {segment, logBytes} = await deadJournal(dir, 'acme', 20)
      // a torn last line in the log (a kill while writing back): cut, then the journal's lines follow
      writeFileSync(join(dir, 'acme', 'log.jsonl'), '{"e":"q","id":1,"t', {flag: 'a'})
      expect(statSync(join(dir, 'acme', 'log.jsonl')).size).toBeGreaterThan(logBytes)
      const report = recoverJournals(dir)
      expect(report).toMatchObject({segments: 1, appended: 40, tenants: 1, removed: 1, torn: 0})
      expect(existsSync(segment)).toBe(false)
      const t = openTenant({dir, tenant: 'acme'})
      expect(t.store.learner.counters).toMatchObject({queries: 20, used: 20})
      await t.close()
    } finally {
      rmSync(dir, {recursive: true, force: true})
    }
  })

  it('acknowledged records of a tenant whose folder was removed are reported as orphaned, not dropped without a word (review S#6)', async () => {
    const dir = tempDir()
    try {
      const {segment} = await deadJournal(dir, 'acme', 20)
      rmSync(join(dir, 'acme'), {recursive: true, force: true})
      const report = recoverJournals(dir)
      expect(report).toMatchObject({
        segments: 1,
        appended: 0,
        tenants: 0,
        removed: 1,
        orphaned: [{tenant: 'acme', records: 40}],
      })
      expect(existsSync(segment)).toBe(false)
    } finally {
      rmSync(dir, {recursive: true, force: true})
    }
  })

  it('a torn last frame (a batch whose sync never returned) is dropped; the frames before it are applied', async () => {
    const dir = tempDir()
    try {
      const {segment} = await deadJournal(dir, 'acme', 10)
      const before = readSegment(segment)
      // find the last frame and cut it in half (zeros after it, as in a preallocated segment)
      const data = readFileSync(segment)
      let p = 0
      let last = 0
      while (data.readUInt32LE(p) !== 0) {
        last = p
        p += FRAME_HEADER_BYTES + data.readUInt32LE(p + 4)
      }
      data.fill(0, last + Math.floor((p - last) / 2), p)
      writeFileSync(segment, data)
      const torn = readSegment(segment)
      expect(torn.tornAt).toBe(last)
      expect(torn.frames).toBe(before.frames - 1)
      const report = recoverJournals(dir)
      expect(report.torn).toBe(1)
      expect(report.appended).toBe(torn.records.length)
      const t = openTenant({dir, tenant: 'acme'})
      expect(t.store.learner.counters.queries + t.store.learner.counters.used).toBe(torn.records.length)
      await t.close()
    } finally {
      rmSync(dir, {recursive: true, force: true})
    }
  })

  it('a byte flipped in a frame before the last, or in the zeros after them, stops the open with one line naming the segment', async () => {
    for (const where of ['first frame', 'zeros']) {
      const dir = tempDir()
      try {
        const {segment} = await deadJournal(dir, 'acme', 10)
        const data = readFileSync(segment)
        const at = where === 'first frame' ? FRAME_HEADER_BYTES + 5 : data.length - 100
        data[at] ^= 0x20
        writeFileSync(segment, data)
        expect(() => readSegment(segment)).toThrow(InputError)
        let error: unknown
        try {
          openTenant({dir, tenant: 'acme'})
        } catch (e) {
          error = e
        }
        expect(error).toBeInstanceOf(InputError)
        expect((error as Error).message).toContain(segment)
        expect((error as Error).message).not.toContain('\n')
        expect(() => recoverJournals(dir)).toThrow(/a byte of the journal was changed/)
      } finally {
        rmSync(dir, {recursive: true, force: true})
      }
    }
  })

  it('refuses to guess when the log and the journal disagree, or the log lost lines the journal does not have', async () => {
    const dir = tempDir()
    try {
      const {segment, logBytes} = await deadJournal(dir, 'acme', 5)
      const records = readSegment(segment).records
      const logPath = join(dir, 'acme', 'log.jsonl')
      // a gap: the first journaled line would start beyond the log's end
      expect(() => catchUpLog(logPath, records.slice(1))).toThrow(/acknowledged events are missing/)
      expect(statSync(logPath).size).toBe(logBytes)
      // a different line where the journal holds one
      expect(catchUpLog(logPath, records.slice(0, 2))).toBe(2)
      const changed = {...records[1], line: records[1].line.replace('"used"', '"usex"')}
      expect(() => catchUpLog(logPath, [changed])).toThrow(/disagree/)
      // applying again is a no-op
      expect(catchUpLog(logPath, records.slice(0, 2))).toBe(0)
      expect(catchUpLog(logPath, records)).toBe(records.length - 2)
    } finally {
      rmSync(dir, {recursive: true, force: true})
    }
  })

  it('after a failed sync no request is acknowledged any more (503 not_durable for the batch and every later one)', async () => {
    const dir = tempDir()
    try {
      let fail = false
      const journal = new Journal(dir, {
        sync: async () => {
          if (fail) throw Object.assign(new Error('EIO: i/o error, fdatasync'), {code: 'EIO'})
        },
        log: () => undefined,
      })
      const t = openTenant({dir, tenant: 'acme', create: {}, journal})
      const ok = await t.choose({})
      fail = true
      await expect(t.feedback({query_id: ok.query_id, used: true})).rejects.toMatchObject({
        code: 'not_durable',
        retry: true,
      })
      fail = false
      expect(journal.failed).toBeDefined()
      // the tenant refuses further work as kt's own error (a JSON 5xx from the server), not a crash
      await expect(t.choose({})).rejects.toBeInstanceOf(OnlineError)
      expect(t.failed).toBe(true)
      t.abandon()
      await journal.close()
      // the segment stays for recovery
      expect(readdirSync(join(dir, JOURNAL_DIR)).filter((f) => f.endsWith('.wal')).length).toBeGreaterThan(0)
    } finally {
      rmSync(dir, {recursive: true, force: true})
    }
  })

  it('a journaled tenant writes its snapshot in later turns of the event loop; closed while one is being made, it reopens from the snapshot close wrote', async () => {
    const dir = tempDir()
    try {
      const {journal} = openJournal(dir)
      const t = openTenant({dir, tenant: 'bg', create: {}, journal, snapshotEvery: 5})
      const state = join(dir, 'bg', 'state.json')
      for (let i = 0; i < 5; i++) await t.choose({now: 1000 + i})
      // the 5th event made one due: the request's own turn did not write it, later turns do
      while (!existsSync(state)) await new Promise((r) => setImmediate(r))
      const first = JSON.parse(readFileSync(state, 'utf8').split('\n')[0]) as {logLines: number}
      expect(first.logLines).toBe(6)
      for (let i = 5; i < 9; i++) await t.choose({now: 1000 + i})
      // the 10th event is logged at once and makes the next snapshot due; the store closes in the
      // same turn (its own snapshot, of all 10), and the one in the making must not replace it
      const last = t.choose({now: 1010})
      t.store.close()
      await last
      await t.close()
      for (let i = 0; i < 10; i++) await new Promise((r) => setImmediate(r))
      await journal.close()
      const again = openTenant({dir, tenant: 'bg'})
      try {
        expect(again.store.openReport).toMatchObject({rebuilt: null, replayed: 0})
        expect(again.status().queries).toBe(10)
      } finally {
        await again.close()
      }
    } finally {
      rmSync(dir, {recursive: true, force: true})
    }
  })

  it('retires full segments: every tenant log written back and synced, the segment deleted; closing leaves no segment', async () => {
    const dir = tempDir()
    try {
      const journal = new Journal(dir, {segmentBytes: 8 * 1024, log: () => undefined})
      const tenants = ['a', 'b'].map((id) =>
        openTenant({dir, tenant: id, create: {}, journal, snapshotEvery: 1_000_000}),
      )
      for (let i = 0; i < 200; i++) {
        const t = tenants[i % 2]
        const c = await t.choose({})
        await t.feedback({query_id: c.query_id, used: true})
      }
      while (!journal.idle) await new Promise((r) => setTimeout(r, 5))
      await new Promise((r) => setTimeout(r, 50))
      expect(journal.stats.checkpoints).toBeGreaterThan(3)
      // logs hold at least every line of the retired segments
      for (const id of ['a', 'b'])
        expect(readFileSync(join(dir, id, 'log.jsonl'), 'utf8').split('\n').length).toBeGreaterThan(100)
      for (const t of tenants) await t.close()
      await journal.close()
      expect(readdirSync(join(dir, JOURNAL_DIR))).toEqual([])
      for (const id of ['a', 'b']) {
        const t = openTenant({dir, tenant: id})
        expect(t.store.learner.counters).toMatchObject({queries: 100, used: 100})
        await t.close()
      }
    } finally {
      rmSync(dir, {recursive: true, force: true})
    }
  })
})
