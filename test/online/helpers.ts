import {spawn, spawnSync} from 'node:child_process'
import {mkdtempSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import type {ParamSpace} from '../../src/space/types.js'
import {packageRoot} from '../../src/util/paths.js'
import {defaultConfig} from '../../src/space/space.js'
import type {BanditSettings} from '../../src/online/bandit.js'
import {TenantStore} from '../../src/online/store.js'
import {chainChecksum} from '../../src/online/log-file.js'

/** A small space with one parameter of every kind. */
export const TEST_SPACE: ParamSpace = {
  id: 'online-test',
  params: [
    {
      kind: 'float',
      name: 'lin',
      env: 'T_LIN',
      low: 0,
      high: 1,
      scale: 'linear',
      default: 0.55,
      description: 'linear float',
    },
    {
      kind: 'float',
      name: 'logf',
      env: 'T_LOGF',
      low: 1,
      high: 8760,
      scale: 'log',
      default: 168,
      description: 'log float',
    },
    {
      kind: 'int',
      name: 'small',
      env: 'T_SMALL',
      low: 1,
      high: 6,
      scale: 'linear',
      default: 2,
      description: 'six integers',
    },
    {kind: 'int', name: 'logi', env: 'T_LOGI', low: 1, high: 20, scale: 'log', default: 8, description: 'log int'},
    {kind: 'categorical', name: 'cat', env: 'T_CAT', choices: ['a', 'b', 'c'], default: 'b', description: 'choice'},
    {
      kind: 'simplex',
      name: 'w',
      description: 'weights',
      floor: 0.05,
      members: [
        {name: 'w.x', env: 'T_WX', default: 0.5, description: 'x'},
        {name: 'w.y', env: 'T_WY', default: 0.3, description: 'y'},
        {name: 'w.z', env: 'T_WZ', default: 0.2, description: 'z'},
      ],
    },
  ],
}

export const TEST_SETTINGS: BanditSettings = {
  levels: 4,
  sampler: 'gaussian',
  forgetting: {kind: 'periodic', every: 5, fraction: 0.5},
}

export function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'kt-online-'))
}

export function createTenant(
  dir: string,
  tenant: string,
  settings: BanditSettings = TEST_SETTINGS,
  snapshotEvery?: number,
): TenantStore {
  return TenantStore.open({
    dir,
    tenant,
    create: {space: TEST_SPACE, profile: defaultConfig(TEST_SPACE), settings, seed: 7},
    snapshotEvery,
  })
}

export function openTenant(dir: string, tenant: string, snapshotEvery?: number): TenantStore {
  return TenantStore.open({dir, tenant, resolveSpace: () => TEST_SPACE, snapshotEvery})
}

/**
 * The environment the CLI runs in: progress output off, and without vitest's NODE_ENV=test, under
 * which oclif registers tsx and loads the commands from src/ instead of the built dist/ (about three
 * times slower per call, and not what users run).
 */
function cliEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {...process.env, KT_NO_PROGRESS: '1'}
  delete env.NODE_ENV
  return env
}

/** Runs the built kt CLI (npm test builds first) with progress output off. */
export function kt(args: string[]): {status: number | null; stdout: string; stderr: string} {
  const r = spawnSync(process.execPath, [join(packageRoot, 'bin', 'kt.js'), ...args], {encoding: 'utf8', env: cliEnv()})
  return {status: r.status, stdout: r.stdout, stderr: r.stderr}
}

/** Starts the built kt CLI without waiting (for concurrent runs); resolves when it exits. */
export function ktAsync(args: string[]): Promise<{status: number | null; stdout: string; stderr: string}> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(packageRoot, 'bin', 'kt.js'), ...args], {
      env: cliEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()))
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
    child.on('error', reject)
    child.on('close', (status) => resolve({status, stdout, stderr}))
  })
}

/**
 * Log lines (with or without their checksums) re-chained as kt writes them (log format 2): what
 * a test that hand-edits a line does so that the open reaches the edited field, not the checksum.
 */
export function rechain(lines: string[]): string[] {
  let previous = ''
  return lines.map((line) => {
    const body = line.replace(/,"c":"[0-9a-f]+"}$/, '}')
    previous = chainChecksum(previous, body)
    return `${body.slice(0, -1)},"c":"${previous}"}`
  })
}

/**
 * Runs a child script (under tsx) until it has printed `acks` lines "ack <payload>", SIGKILLs it
 * `extraMs` later, and returns the acknowledged payloads; rejects if the child ends by itself.
 */
export function runAndKill(script: string, args: readonly string[], acks: number, extraMs: number): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], {stdio: ['ignore', 'pipe', 'pipe']})
    const acked: string[] = []
    let buffer = ''
    let stderr = ''
    let killing = false
    child.stdout.on('data', (chunk: Buffer) => {
      buffer += chunk.toString()
      const lines = buffer.split('\n')
      buffer = lines.pop()!
      for (const line of lines) if (line.startsWith('ack ')) acked.push(line.slice(4))
      if (acked.length >= acks && !killing) {
        killing = true
        setTimeout(() => child.kill('SIGKILL'), extraMs)
      }
    })
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
    child.on('exit', (_code, signal) =>
      signal === 'SIGKILL' ? resolve(acked) : reject(new Error(`child ended without being killed: ${stderr}`)),
    )
  })
}
