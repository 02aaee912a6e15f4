/** Processes of this machine, from /proc (proc(5)) and signal 0. */
import {readFileSync, readdirSync} from 'node:fs'

/** proc(5): fields of /proc/<pid>/stat, numbered from 1. */
const PROC_STAT_PPID_FIELD = 4
const PROC_STAT_STARTTIME_FIELD = 22

/**
 * Field `n` of /proc/<pid>/stat, or undefined where the process or /proc is missing. The command
 * name (field 2) may hold spaces and parentheses: the fields from 3 on follow its last ')'.
 */
function procStatField(pid: number, n: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[n - 3]
  } catch {
    return undefined
  }
}

/** The parent pid of `pid`, or undefined when there is no such process. */
export function parentPid(pid: number): number | undefined {
  const ppid = procStatField(pid, PROC_STAT_PPID_FIELD)
  return ppid === undefined ? undefined : Number(ppid)
}

/**
 * When a process started (clock ticks since boot), or undefined where /proc is missing: with the
 * pid it names one process, not a later one that got the same pid (small container pids recur).
 */
export function processStartTime(pid: number): string | undefined {
  return procStatField(pid, PROC_STAT_STARTTIME_FIELD)
}

/** Whether a process with this pid runs (one we may not signal included). */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/** Blocks the thread for `ms` (for synchronous code that must wait, e.g. for a lock). */
export function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms)
}

/** Every live descendant of `pid` (children first, then theirs), from /proc; [] where there is no /proc. */
export function descendantPids(pid: number): number[] {
  let all: number[]
  try {
    all = readdirSync('/proc')
      .filter((name) => /^\d+$/.test(name))
      .map(Number)
  } catch {
    return []
  }
  const children = new Map<number, number[]>()
  for (const p of all) {
    const parent = parentPid(p)
    if (parent !== undefined) children.set(parent, [...(children.get(parent) ?? []), p])
  }
  const out: number[] = []
  for (let queue = [pid]; queue.length > 0;) {
    const next = children.get(queue.shift()!) ?? []
    out.push(...next)
    queue.push(...next)
  }
  return out
}
