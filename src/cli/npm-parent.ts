/**
 * `npx kt worker ... &` runs kt under npm, through `sh -c`: `$!` is npm, and `kill -9 $!` (even a
 * plain kill: npm exits without passing it on) leaves kt running, its parent gone. When kt was
 * started by npm (`npm exec`/npx, `npm run`), it checks once a second that this npm is still its
 * ancestor, and when it is not, stops as on Ctrl-C (SIGTERM: a worker releases its trials, a
 * server finishes its requests). Linux only (it reads /proc); elsewhere nothing happens.
 */
import {readFileSync} from 'node:fs'
import {parentPid} from '../util/proc.js'

/** How often kt checks that the npm that started it still runs. */
export const NPM_PARENT_CHECK_MS = 1000

/** Whether `pid` is npm running a package's binary or a script (npm sets its title to "npm exec ..." / "npm run ..."). */
function isNpm(pid: number): boolean {
  try {
    return /^npm (exec|run|run-script|x)\b/.test(readFileSync(`/proc/${pid}/cmdline`, 'utf8'))
  } catch {
    return false
  }
}

/**
 * The chain from kt's parent up to the npm that started it (kt's parent itself, or the shell
 * between), or undefined when kt was not started by npm.
 */
export function npmAncestry(): number[] | undefined {
  if (process.platform !== 'linux') return undefined
  const parent = process.ppid
  if (isNpm(parent)) return [parent]
  const grandparent = parentPid(parent)
  if (grandparent !== undefined && grandparent > 1 && isNpm(grandparent)) return [parent, grandparent]
  return undefined
}

/** Starts the check (an unref'd timer: it never keeps kt alive); `stop` runs once when npm is gone. */
export function stopWhenNpmParentDies(stop: () => void = () => process.kill(process.pid, 'SIGTERM')): void {
  const chain = npmAncestry()
  if (!chain) return
  const timer = setInterval(() => {
    // each link still has its parent: kt -> chain[0] (-> chain[1])
    // (process.ppid is read once at start-up: /proc says who the parent is now)
    const intact = parentPid(process.pid) === chain[0] && (chain.length === 1 || parentPid(chain[0]) === chain[1])
    if (intact) return
    clearInterval(timer)
    stop()
  }, NPM_PARENT_CHECK_MS)
  timer.unref()
}
