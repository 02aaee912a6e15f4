import {describe, expect, it} from 'vitest'
import {appendFileSync, existsSync, readdirSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {join, relative} from 'node:path'
import {createHash} from 'node:crypto'
import {TenantStore, processStartTime, StateDamagedError} from '../../src/online/store.js'
import {validateTenantId, MAX_TENANT_ID_LENGTH} from '../../src/online/tenant-id.js'
import {InputError} from '../../src/util/errors.js'
import {forgettingDefaults} from '../../src/online/forgetting.js'
import {createTenant, openTenant, rechain, tempDir, TEST_SETTINGS, TEST_SPACE} from './helpers.js'
import {defaultConfig} from '../../src/space/space.js'

/** Drives a store through queries with a mix of feedback, at 1 s steps from `t0`. */
function drive(store: TenantStore, queries: number, t0: number): number {
  let t = t0
  for (let i = 0; i < queries; i++) {
    const {queryId} = store.choose(t)
    t += 1000
    if (queryId % 3 === 0) store.used(String(queryId), t)
    if (queryId % 4 === 0) store.label(String(queryId), queryId % 4, t)
    if (queryId % 7 === 0) store.used('12345', t) // unknown
  }
  return t
}

function stateOf(store: TenantStore): string {
  return JSON.stringify(store.learner.save())
}

describe('tenant store', () => {
  it('resumes from snapshot plus log tail exactly as a full replay would', () => {
    const dir = tempDir()
    const a = createTenant(dir, 'acme', TEST_SETTINGS, 7)
    drive(a, 40, 0)
    const live = stateOf(a)
    a.close()
    const b = openTenant(dir, 'acme')
    expect(stateOf(b)).toBe(live)
    b.close()
    rmSync(join(dir, 'acme', 'state.json'))
    const c = openTenant(dir, 'acme')
    expect(c.openReport.replayed).toBeGreaterThan(40)
    expect(stateOf(c)).toBe(live)
    c.close()
  })

  it('persists the change model (suspicions, idle tables) and replays it exactly', () => {
    const dir = tempDir()
    // a fast hazard (half-life 10 queries per dimension) so that suspicions are open within 150 queries
    const settings = {...TEST_SETTINGS, forgetting: {...forgettingDefaults('adaptive'), changeHalfLife: 10}}
    const a = createTenant(dir, 'drift', settings as typeof TEST_SETTINGS, 7)
    let t = 0
    for (let i = 0; i < 150; i++) {
      const {queryId} = a.choose(t)
      t += 10_000 // 10 s apart: implicit windows (5 min) close after 30 queries and settle in query order
      if (queryId % 3 !== 0) a.used(String(queryId), t)
    }
    const live = JSON.parse(stateOf(a))
    expect(live.bandit.change.some((c: unknown) => c !== null)).toBe(true)
    expect(live.bandit.forgetting.lastPlayed).toHaveLength(a.learner.bandit.dims.length)
    expect(live.bandit.forgetting.lastResult).toHaveLength(a.learner.bandit.dims.length)
    a.close()
    const b = openTenant(dir, 'drift')
    expect(JSON.parse(stateOf(b))).toEqual(live)
    b.close()
    rmSync(join(dir, 'drift', 'state.json'))
    const c = openTenant(dir, 'drift')
    expect(JSON.parse(stateOf(c))).toEqual(live)
    c.close()
  })

  it('resumes decay in phase after a restart (the query counter is persisted)', () => {
    const dir = tempDir()
    const whole = createTenant(dir, 'whole')
    drive(whole, 12, 0)
    const split1 = createTenant(dir, 'split')
    const t = drive(split1, 7, 0)
    split1.close()
    const split2 = openTenant(dir, 'split')
    expect(split2.learner.bandit.queries).toBe(7)
    // queries 8..12 continue at the same times; decay (every 5) fires at 10 in both
    let tt = t
    for (let q = 8; q <= 12; q++) {
      const {queryId} = split2.choose(tt)
      tt += 1000
      if (queryId % 3 === 0) split2.used(String(queryId), tt)
      if (queryId % 4 === 0) split2.label(String(queryId), queryId % 4, tt)
      if (queryId % 7 === 0) split2.used('12345', tt)
    }
    expect(JSON.stringify(split2.learner.bandit.save())).toBe(JSON.stringify(whole.learner.bandit.save()))
    split2.close()
    whole.close()
  })

  it('rebuilds from the log when the state file is truncated or fails its checksum', () => {
    const dir = tempDir()
    const a = createTenant(dir, 'acme', TEST_SETTINGS, 5)
    drive(a, 30, 0)
    const live = stateOf(a)
    a.close()
    const statePath = join(dir, 'acme', 'state.json')
    const good = readFileSync(statePath, 'utf8')

    writeFileSync(statePath, good.slice(0, good.length - 40))
    const b = openTenant(dir, 'acme')
    expect(b.openReport.rebuilt).toMatch(/truncated/)
    expect(stateOf(b)).toBe(live)
    b.close()

    writeFileSync(statePath, good.replace('"queries":30', '"queries":31'))
    const c = openTenant(dir, 'acme')
    expect(c.openReport.rebuilt).toMatch(/checksum/)
    expect(stateOf(c)).toBe(live)
    c.close()

    writeFileSync(statePath, '')
    const d = openTenant(dir, 'acme')
    expect(d.openReport.rebuilt).not.toBeNull()
    expect(stateOf(d)).toBe(live)
    d.close()

    // snapshots of earlier formats (1: written before used-but-open windows were kept; 2: without
    // the log's chained checksum) are rebuilt
    for (const old of ['kt-online-state/1', 'kt-online-state/2']) {
      const body = `${good.split('\n')[0].replace('"kt-online-state/3"', `"${old}"`)}\n`
      writeFileSync(statePath, `${body}sha256 ${createHash('sha256').update(body).digest('hex')}\n`)
      const e = openTenant(dir, 'acme')
      expect(e.openReport.rebuilt).toBe(`state file format "${old}" is not kt-online-state/3`)
      expect(stateOf(e)).toBe(live)
      e.close()
    }
  })

  it('replays only the log after the snapshot, and refuses (never rebuilds) when the snapshot claims more log than there is', () => {
    const dir = tempDir()
    const a = createTenant(dir, 'acme', TEST_SETTINGS, 1000)
    drive(a, 5, 0)
    a.snapshot()
    drive(a, 3, 10_000)
    const live = stateOf(a)
    const logPath = join(dir, 'acme', 'log.jsonl')
    const statePath = join(dir, 'acme', 'state.json')
    const snapshotText = readFileSync(statePath, 'utf8')
    a.close() // snapshots again
    writeFileSync(statePath, snapshotText) // back to the snapshot taken after 5 queries
    const b = openTenant(dir, 'acme')
    expect(b.openReport.rebuilt).toBeNull()
    const coveredLines = JSON.parse(snapshotText.split('\n')[0]).logLines as number
    const totalLines = readFileSync(logPath, 'utf8').split('\n').length - 1
    expect(b.openReport.replayed).toBe(totalLines - coveredLines)
    expect(stateOf(b)).toBe(live)
    b.close()
    // lose the last two log lines (query 8 and its label): the fresh snapshot now points past the end of the log
    const lines = readFileSync(logPath, 'utf8').split('\n')
    expect(lines.slice(-3, -1).map((l) => JSON.parse(l).e)).toEqual(['q', 'label'])
    writeFileSync(logPath, lines.slice(0, -3).join('\n') + '\n')
    // a checksummed snapshot ahead of its log is damage (snapshot() syncs the log first): refused
    // in one line naming the log, never rebuilt from the shorter log (which would hand out query
    // ids 7 and 8 again and drop acknowledged feedback)
    const size = readFileSync(logPath).length
    const state = JSON.parse(readFileSync(statePath, 'utf8').split('\n')[0]) as {logBytes: number; logLines: number}
    const covers = state.logBytes
    let error: Error | undefined
    try {
      openTenant(dir, 'acme').close()
    } catch (e) {
      error = e as Error
    }
    expect(error).toBeInstanceOf(StateDamagedError)
    expect(error!.message).toBe(
      `${logPath}: expected at least ${covers} bytes (${statePath} covers ${state.logLines} lines of it), got ${size} bytes: ${covers - size} bytes of acknowledged events are missing from the log (restore it from a backup)`,
    )
    expect(error!.message).not.toContain('\n')
    expect(readFileSync(logPath).length).toBe(size) // nothing rewritten
  })

  it('cuts a torn last log line (a crash mid-write) and keeps everything before it', () => {
    const dir = tempDir()
    const a = createTenant(dir, 'acme')
    drive(a, 10, 0)
    const live = stateOf(a)
    a.close()
    appendFileSync(join(dir, 'acme', 'log.jsonl'), '{"e":"used","id":"3","t":99')
    const b = openTenant(dir, 'acme')
    expect(b.openReport.tornBytes).toBe(27)
    expect(stateOf(b)).toBe(live)
    expect(b.used('10', 20_000)).toBe('applied') // appending after the cut still gives a well-formed log
    b.close()
    const c = openTenant(dir, 'acme')
    expect(c.learner.counters.used).toBe(JSON.parse(live).counters.used + 1)
    c.close()
  })

  it('reports a corrupt line inside the log by file and line', () => {
    const dir = tempDir()
    const a = createTenant(dir, 'acme')
    drive(a, 3, 0)
    a.close()
    const logPath = join(dir, 'acme', 'log.jsonl')
    const lines = readFileSync(logPath, 'utf8').split('\n')
    lines[2] = '{"e":"q","id":2,"t":"soon","arms":[]}'
    writeFileSync(logPath, `${rechain(lines.slice(0, -1)).join('\n')}\n`)
    rmSync(join(dir, 'acme', 'state.json'))
    expect(() => openTenant(dir, 'acme')).toThrow(/log\.jsonl:3: t: expected a finite number/)
    expect(existsSync(join(dir, 'acme', 'lock'))).toBe(false)
  })

  it('validates tenant ids before touching the file system', () => {
    const dir = tempDir()
    for (const bad of ['../evil', 'a/b', 'a\\b', '', '.hidden', '..', 'x'.repeat(MAX_TENANT_ID_LENGTH + 1), 'sp ace']) {
      expect(() => validateTenantId(bad)).toThrow(InputError)
      expect(() => createTenant(dir, bad)).toThrow(/tenant id/)
    }
    expect(existsSync(join(dir, '..', 'evil'))).toBe(false)
    expect(() => validateTenantId('tenant-1.prod_A')).not.toThrow()
  })

  it('refuses a second open of a tenant that is in use, and unknown or duplicate tenants', () => {
    const dir = tempDir()
    const a = createTenant(dir, 'acme')
    expect(() => openTenant(dir, 'acme')).toThrow(/already open in this process/)
    a.close()
    expect(() => createTenant(dir, 'acme')).toThrow(/no existing tenant/)
    expect(() => openTenant(dir, 'nobody')).toThrow(/an existing tenant nobody/)
  })

  it('takes over a lock left by a dead process', () => {
    const dir = tempDir()
    createTenant(dir, 'acme').close()
    writeFileSync(join(dir, 'acme', 'lock'), '999999999\n')
    const b = openTenant(dir, 'acme')
    expect(b.learner.counters.queries).toBe(0)
    b.close()
  })

  it('takes over a lock left by a dead earlier process that had this pid (pid reuse), but not one this process holds', () => {
    const dir = tempDir()
    createTenant(dir, 'acme').close()
    writeFileSync(join(dir, 'acme', 'lock'), `${process.pid}\n`)
    const b = openTenant(dir, 'acme')
    expect(() => openTenant(dir, 'acme')).toThrow(/already open in this process/)
    b.close()
    expect(existsSync(join(dir, 'acme', 'lock'))).toBe(false)
  })

  it('takes over a lock whose pid now belongs to another process (a start time that does not match)', () => {
    const dir = tempDir()
    createTenant(dir, 'acme').close()
    writeFileSync(join(dir, 'acme', 'lock'), `${process.ppid} 1 0123abcd\n`) // the runner is alive, but did not start at tick 1
    const b = openTenant(dir, 'acme')
    b.close()
  })

  it('knows a tenant it has open whatever path it is opened by', () => {
    const dir = tempDir()
    const a = createTenant(dir, 'acme')
    const cwd = process.cwd()
    process.chdir(join(dir, '..'))
    try {
      expect(() =>
        TenantStore.open({
          dir: relative(process.cwd(), dir),
          tenant: 'acme',
          resolveSpace: () => TEST_SPACE,
          lockWaitMs: 0,
        }),
      ).toThrow(/already open in this process/)
      expect(() =>
        TenantStore.open({dir: `${dir}//.`, tenant: 'acme', resolveSpace: () => TEST_SPACE, lockWaitMs: 0}),
      ).toThrow(/already open in this process/)
    } finally {
      process.chdir(cwd)
    }
    a.close()
  })

  it('removes lock temp files left by dead processes', () => {
    const dir = tempDir()
    createTenant(dir, 'acme').close()
    writeFileSync(join(dir, 'acme', '.lock.999999999.1.tmp'), '999999999 - 00\n')
    writeFileSync(join(dir, 'acme', `.lock.${process.ppid}.1.tmp`), 'alive\n')
    openTenant(dir, 'acme').close()
    expect(readdirSync(join(dir, 'acme')).sort()).toEqual([`.lock.${process.ppid}.1.tmp`, 'log.jsonl', 'state.json'])
  })

  it('removes the 0-byte snapshot temp file a kill between write and rename left (whatever its pid)', () => {
    const dir = tempDir()
    createTenant(dir, 'acme').close()
    writeFileSync(join(dir, 'acme', '.state.json.999999999.tmp'), '')
    writeFileSync(join(dir, 'acme', `.state.json.${process.ppid}.tmp`), '') // a reused, live pid: still stale under the lock
    openTenant(dir, 'acme').close()
    expect(readdirSync(join(dir, 'acme')).sort()).toEqual(['log.jsonl', 'state.json'])
  })

  it('writes the lock with its pid in one step and leaves no temp file behind', () => {
    const dir = tempDir()
    const a = createTenant(dir, 'acme')
    expect(readFileSync(join(dir, 'acme', 'lock'), 'utf8')).toMatch(
      new RegExp(`^${process.pid} ${processStartTime(process.pid)} [0-9a-f]{16}\n$`),
    )
    expect(readdirSync(join(dir, 'acme')).sort()).toEqual(['lock', 'log.jsonl'])
    a.close()
    expect(readdirSync(join(dir, 'acme')).sort()).toEqual(['log.jsonl', 'state.json'])
  })

  it('treats an empty or unparseable lock file as held by an unknown owner, never as dead', () => {
    const dir = tempDir()
    createTenant(dir, 'acme').close()
    const lockPath = join(dir, 'acme', 'lock')
    // '' is what the old open-then-write lock showed a reader in between; '0' must not pass as a pid either
    for (const content of ['', '\n', '0\n', 'garbage\n', '12 34\n']) {
      writeFileSync(lockPath, content)
      expect(() => TenantStore.open({dir, tenant: 'acme', resolveSpace: () => TEST_SPACE, lockWaitMs: 0})).toThrow(
        /lock: expected a tenant nobody else has open \(waited 0 ms\), got held by an unknown owner \(.*if no process uses tenant acme, remove .*acme[/\\]lock\)$/,
      )
      expect(readFileSync(lockPath, 'utf8')).toBe(content)
    }
  })

  it('gives up on a lock a live process keeps, after the wait, with one line naming the pid', () => {
    const dir = tempDir()
    createTenant(dir, 'acme').close()
    const lockPath = join(dir, 'acme', 'lock')
    // the test runner: alive, not this process, with its real start time
    const line = `${process.ppid} ${processStartTime(process.ppid)} 0123abcd\n`
    writeFileSync(lockPath, line)
    expect(() => TenantStore.open({dir, tenant: 'acme', resolveSpace: () => TEST_SPACE, lockWaitMs: 20})).toThrow(
      new RegExp(`lock: expected a tenant nobody else has open \\(waited 20 ms\\), got held by pid ${process.ppid}$`),
    )
    expect(readFileSync(lockPath, 'utf8')).toBe(line)
    // an older kt's lock (pid only) cannot be told from a reused pid: held, and the error says what to check
    writeFileSync(lockPath, `${process.ppid}\n`)
    expect(() => TenantStore.open({dir, tenant: 'acme', resolveSpace: () => TEST_SPACE, lockWaitMs: 0})).toThrow(
      /held by pid \d+ \(a lock without a start time: if pid \d+ is not a kt process, remove .*lock\)$/,
    )
    expect(readdirSync(join(dir, 'acme')).sort()).toEqual(['lock', 'log.jsonl', 'state.json'])
  })

  it('does not take over a dead lock while another takeover is in progress, and names that file if it never ends', () => {
    const dir = tempDir()
    createTenant(dir, 'acme').close()
    writeFileSync(join(dir, 'acme', 'lock'), '999999999\n')
    // a takeover in progress: its owner is alive (a takeover lock of a dead process is removed: test/util/lock.test.ts)
    writeFileSync(join(dir, 'acme', 'lock.takeover'), `${process.ppid} ${processStartTime(process.ppid)} cc\n`)
    expect(() => TenantStore.open({dir, tenant: 'acme', resolveSpace: () => TEST_SPACE, lockWaitMs: 0})).toThrow(
      /lock\.takeover: expected a tenant nobody else has open \(waited 0 ms\), got a takeover of dead pid 999999999's lock that never finished \(if no process uses tenant acme, remove .*lock\.takeover\)$/,
    )
    expect(readFileSync(join(dir, 'acme', 'lock'), 'utf8')).toBe('999999999\n')
  })

  it('reports a duplicate query event in the log as an input error naming file and line', () => {
    const dir = tempDir()
    const a = createTenant(dir, 'acme')
    drive(a, 3, 0)
    a.close()
    const logPath = join(dir, 'acme', 'log.jsonl')
    const lines = readFileSync(logPath, 'utf8').trim().split('\n')
    const duplicate = lines.find((l) => JSON.parse(l).e === 'q' && JSON.parse(l).id === 1)!
    writeFileSync(logPath, `${rechain([...lines, duplicate]).join('\n')}\n`)
    rmSync(join(dir, 'acme', 'state.json'))
    let error: unknown
    try {
      openTenant(dir, 'acme')
    } catch (e) {
      error = e
    }
    expect(error).toBeInstanceOf(InputError)
    expect((error as Error).message).toBe(
      `${logPath}:${lines.length + 1}: id: expected query id 4 (query events number the queries 1, 2, 3, ... in log order), got 1 (a duplicate or out-of-order query event)`,
    )
    expect(existsSync(join(dir, 'acme', 'lock'))).toBe(false)
  })

  it('creates nothing when the settings are rejected', () => {
    const dir = tempDir()
    const create = (settings: typeof TEST_SETTINGS) =>
      TenantStore.open({
        dir,
        tenant: 'acme',
        create: {space: TEST_SPACE, profile: defaultConfig(TEST_SPACE), settings, seed: 1},
      })
    expect(() => create({...TEST_SETTINGS, levels: 1})).toThrow(/levels: expected an integer in 2\.\.11, got 1/)
    expect(() => create({...TEST_SETTINGS, levels: 12})).toThrow(/levels: expected an integer in 2\.\.11, got 12/)
    expect(() => create({...TEST_SETTINGS, tuned: ['foo']})).toThrow(/foo/)
    expect(existsSync(join(dir, 'acme'))).toBe(false)
    create(TEST_SETTINGS).close() // the id is still free
  })
})
