import {readFileSync, readdirSync} from 'node:fs'

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
