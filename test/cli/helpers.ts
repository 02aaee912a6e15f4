import {spawnSync} from 'node:child_process'
import {join} from 'node:path'
import {packageRoot} from '../../src/util/paths.js'

/** Runs the built kt CLI (npm test builds first) as a user would. */
export function kt(args: string[], options: {cwd?: string; env?: Record<string, string>} = {}) {
  const r = spawnSync(process.execPath, [join(packageRoot, 'bin', 'kt.js'), ...args], {
    cwd: options.cwd ?? packageRoot,
    encoding: 'utf8',
    env: {...process.env, KT_NO_PROGRESS: '1', ...options.env},
  })
  return {status: r.status, stdout: r.stdout, stderr: r.stderr}
}

/** report.json without its timing section: the part that must be byte-identical between runs. */
export function withoutTiming(reportJson: string): string {
  const r = JSON.parse(reportJson) as Record<string, unknown>
  delete r.timing
  return JSON.stringify(r, null, 2)
}
