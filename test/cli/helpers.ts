import {spawnSync} from 'node:child_process'
import {join} from 'node:path'
import {packageRoot} from '../../src/util/paths.js'

/**
 * Runs the built kt CLI (npm test builds first) as a user would: without vitest's NODE_ENV=test,
 * under which oclif registers tsx and loads the commands from src/ instead of the built dist/
 * (about three times slower per call, and not what users run).
 */
export function kt(args: string[], options: {cwd?: string; env?: Record<string, string>} = {}) {
  const env: NodeJS.ProcessEnv = {...process.env, KT_NO_PROGRESS: '1', ...options.env}
  delete env.NODE_ENV
  const r = spawnSync(process.execPath, [join(packageRoot, 'bin', 'kt.js'), ...args], {
    cwd: options.cwd ?? packageRoot,
    encoding: 'utf8',
    env,
  })
  return {status: r.status, stdout: r.stdout, stderr: r.stderr}
}

/** report.json without its timing section: the part that must be byte-identical between runs. */
export function withoutTiming(reportJson: string): string {
  const r = JSON.parse(reportJson) as Record<string, unknown>
  delete r.timing
  return JSON.stringify(r, null, 2)
}
