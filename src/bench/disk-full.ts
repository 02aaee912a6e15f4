/**
 * The full-disk campaign: `kt online serve` on a size-limited file system of its own (a tmpfs this
 * process mounts, so it must run as root) under load, the disk filled to the last byte while the
 * clients keep sending, then freed. Each round is one fresh file system:
 *
 * 1. load until the clients have acknowledged feedback;
 * 2. fill the disk and keep it full for holdMs, and until the server has answered a request 503
 *    (the filler is topped up as the server frees space);
 * 3. even rounds: free the disk, wait until acknowledgements resume (the server recovers by
 *    itself), then stop it gracefully and start it again; odd rounds: stop it gracefully while the
 *    disk is still full, free the disk, start it again (recovery reads the journal);
 * 4. load again, stop, and check every tenant as the kill -9 campaign does (src/bench/campaign.ts):
 *    every acknowledged choose and feedback present, nothing credited twice.
 *
 * A request answered 503 was not applied and is sent again; any other failure (a 500
 * state_damaged, a server that does not start) is a violation.
 */
import {execFileSync} from 'node:child_process'
import {closeSync, mkdtempSync, openSync, rmdirSync, rmSync, writeSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {CampaignLoad, type LoadReport} from './campaign.js'
import {startServerProcess, stopServerProcess, type ServerProcess} from './serve-process.js'
import {InputError} from '../util/errors.js'

export interface DiskFullOptions {
  rounds: number
  tenants: number
  clients: number
  /** Size of each round's file system, MiB. */
  sizeMib: number
  /** The server's journal segment size (small: checkpoints, and the full disk, come sooner). */
  segmentBytes: number
  /** How long the disk stays full in each round, ms. */
  holdMs: number
  seed: number
  onProgress?: (text: string) => void
}

interface DiskFullRound {
  round: number
  /** How the server was restarted: stopped while the disk was full, or after it had recovered. */
  restart: 'while_full' | 'after_recovery'
  acknowledged_feedback: number
  /** Requests answered 503 (or 429) while the disk was full: refused, not applied, sent again. */
  refused_while_full: number
  /** Feedback acknowledged while the disk was full (the journal's prepared segments still had room). */
  acknowledged_while_full: number
  /** From freeing the disk to the next acknowledged feedback, ms (after_recovery rounds), or null. */
  recovered_ms: number | null
  violations: string[]
  passed: boolean
}

export interface DiskFullReport {
  rounds: DiskFullRound[]
  /** Rounds whose checks all passed. */
  passed_rounds: number
  acknowledged_feedback: number
  passed: boolean
}

/** Acknowledged feedback each phase of a round waits for before it moves on. */
const ACKS_PER_PHASE = 40
/** Longest a round waits for acknowledgements (a server that never recovers fails the round instead of hanging). */
const ACK_WAIT_MS = 60_000
/**
 * Longest the disk is held full waiting for the first 503: the journal's prepared segments take
 * events after the disk fills, and a slow (shared) machine needs longer to use them up.
 */
const MAX_HOLD_MS = 30_000
/** How often the filler is topped up while the disk is held full. */
const TOP_UP_MS = 50

const sleep = (ms: number): Promise<void> => new Promise((res) => setTimeout(res, ms))

/** Waits until `count()` reaches `target`; false after ACK_WAIT_MS. */
async function waitFor(count: () => number, target: number): Promise<boolean> {
  const until = Date.now() + ACK_WAIT_MS
  while (count() < target) {
    if (Date.now() > until) return false
    await sleep(10)
  }
  return true
}

/** Writes to `fd` until the file system has no byte left (ENOSPC at the smallest chunk). */
function fillUp(fd: number): void {
  for (const size of [1024 * 1024, 4096, 1]) {
    const chunk = Buffer.alloc(size, 1)
    for (;;) {
      try {
        writeSync(fd, chunk)
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOSPC') break
        throw error
      }
    }
  }
}

function mountTmpfs(sizeMib: number): string {
  const mountpoint = mkdtempSync(join(tmpdir(), 'kt-disk-full-'))
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeMib}m`, 'tmpfs', mountpoint], {stdio: 'pipe'})
  } catch (error) {
    rmdirSync(mountpoint)
    throw new InputError(
      'kt bench disk-full',
      'a process that may mount a tmpfs (root)',
      `mount refused: ${((error as {stderr?: Buffer}).stderr?.toString() ?? String(error)).trim().split('\n')[0]}`,
    )
  }
  return mountpoint
}

function unmount(mountpoint: string): void {
  execFileSync('umount', [mountpoint], {stdio: 'pipe'})
  rmdirSync(mountpoint)
}

async function runRound(options: DiskFullOptions, round: number): Promise<DiskFullRound> {
  const mountpoint = mountTmpfs(options.sizeMib)
  const dir = join(mountpoint, 'tenants')
  const filler = join(mountpoint, 'filler')
  const args = ['--dir', dir, '--segment-bytes', String(options.segmentBytes)]
  const restart = round % 2 === 0 ? 'after_recovery' : 'while_full'
  let server: ServerProcess | undefined
  let load: CampaignLoad | undefined
  const violations: string[] = []
  let report: LoadReport | undefined
  const whileFull = {refused: 0, acked: 0}
  let recoveredMs: number | null = null
  try {
    server = await startServerProcess(args)
    const tenants = await CampaignLoad.createTenants(server.port, options.tenants)
    const running = new CampaignLoad(server.port, tenants, options.seed + round)
    load = running
    running.start(options.clients)
    const acks = (): number => running.feedbacks.length
    if (!(await waitFor(acks, ACKS_PER_PHASE))) violations.push('no feedback acknowledged before the disk was filled')

    const fd = openSync(filler, 'w')
    const refusedBefore = running.refused
    const ackedBefore = acks()
    try {
      // at least holdMs, and until the server has refused a request (the disk really full under the load)
      const from = Date.now()
      const holding = (): boolean =>
        Date.now() - from < options.holdMs || (running.refused === refusedBefore && Date.now() - from < MAX_HOLD_MS)
      for (; holding(); await sleep(TOP_UP_MS)) fillUp(fd)
    } finally {
      closeSync(fd)
    }
    whileFull.refused = running.refused - refusedBefore
    whileFull.acked = acks() - ackedBefore
    options.onProgress?.(
      `round ${round + 1}: disk full for ${options.holdMs} ms: ${whileFull.refused} requests refused 503, ${whileFull.acked} feedbacks acknowledged`,
    )

    if (restart === 'after_recovery') {
      rmSync(filler)
      const freed = Date.now()
      const target = acks() + 1
      if (!(await waitFor(acks, target))) violations.push('no feedback acknowledged after the disk was freed')
      else recoveredMs = Date.now() - freed
      running.pause()
      await stopServerProcess(server, 'SIGTERM')
    } else {
      running.pause()
      await stopServerProcess(server, 'SIGTERM')
      rmSync(filler)
    }
    try {
      server = await startServerProcess(args)
    } catch (error) {
      server = undefined
      violations.push(`the server did not start again: ${(error as Error).message.slice(0, 300)}`)
    }
    if (server) {
      running.resume(server.port)
      if (!(await waitFor(acks, acks() + ACKS_PER_PHASE))) violations.push('no feedback acknowledged after the restart')
    }
    if (server) await running.stop()
    else await running.abort()
    if (server) await stopServerProcess(server, 'SIGTERM')
    server = undefined
    report = await running.check(dir, options.clients)
  } finally {
    if (server) await stopServerProcess(server, 'SIGKILL')
    unmount(mountpoint)
  }
  const all = [...violations, ...(report?.violations ?? [])]
  return {
    round: round + 1,
    restart,
    acknowledged_feedback: load?.feedbacks.length ?? 0,
    refused_while_full: whileFull.refused,
    acknowledged_while_full: whileFull.acked,
    recovered_ms: recoveredMs,
    violations: all.slice(0, 20),
    passed: all.length === 0,
  }
}

export async function runDiskFullCampaign(options: DiskFullOptions): Promise<DiskFullReport> {
  const rounds: DiskFullRound[] = []
  for (let r = 0; r < options.rounds; r++) {
    const round = await runRound(options, r)
    rounds.push(round)
    options.onProgress?.(
      `round ${r + 1}/${options.rounds}: ${round.passed ? 'passed' : `${round.violations.length} violation(s)`}, ${round.acknowledged_feedback} feedbacks acknowledged`,
    )
  }
  const passedRounds = rounds.filter((r) => r.passed).length
  return {
    rounds,
    passed_rounds: passedRounds,
    acknowledged_feedback: rounds.reduce((s, r) => s + r.acknowledged_feedback, 0),
    passed: passedRounds === rounds.length,
  }
}
