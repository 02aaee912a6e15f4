import {readFileSync} from 'node:fs'

/** The parent pid of `pid` (from /proc/PID/stat), or undefined when there is no such process. */
export function parentPid(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // the command name (field 2) is in parentheses and may hold spaces: the fields after the last ')' are state, ppid, ...
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
  } catch {
    return undefined
  }
}
