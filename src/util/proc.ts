import {readFileSync} from 'node:fs'

/**
 * The fields of /proc/<pid>/stat (proc(5)) from field 3 (state) on, or undefined where the process
 * or /proc is missing. Field n is `[n - 3]`: the command name (field 2) may hold spaces and
 * parentheses, so the fields are split after its last ')'.
 */
export function procStatFields(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  } catch {
    return undefined
  }
}

/** proc(5): the parent pid is field 4 of /proc/<pid>/stat. */
const PROC_STAT_PPID_FIELD = 4

/** The parent pid of `pid`, or undefined when there is no such process. */
export function parentPid(pid: number): number | undefined {
  const fields = procStatFields(pid)
  return fields === undefined ? undefined : Number(fields[PROC_STAT_PPID_FIELD - 3])
}
