/**
 * The process groups kt starts for engines (command trials, retrieval services): each child leads
 * its own group, killed whole when kt stops it, at kt's exit as a last resort, and by the
 * parent-death watch below when kt itself is killed.
 *
 * kt kills those groups itself on timeout, Ctrl-C/SIGTERM and exit, but nothing in kt runs after
 * a `kill -9` (or an out-of-memory kill): the trials would keep running, reparented to init, and a
 * resume would start them again beside the orphans. So each thread that starts groups also starts
 * one tiny watchdog (`/bin/sh`, in its own session so that whatever kills kt's process group or
 * terminal spares it) and tells it, one line per event on a pipe, which groups are live: `+PGID`
 * when one starts, `-PGID` when it is gone. The watchdog's only job is to read that pipe; the
 * kernel closes kt's end when kt dies, however it dies, and at end of file the watchdog sends
 * SIGTERM to every group still listed, then SIGKILL after a grace period, and exits. A kt that
 * exits normally has emptied the list (or killed the groups itself), so the watchdog just exits.
 *
 * The pipe is close-on-exec (libuv), so no trial inherits kt's end of it: end of file comes when
 * kt dies, not when its last trial does. Without /bin/sh (or if the watchdog dies) kt runs as
 * before, with only its own clean-ups.
 */
import {spawn, type ChildProcess, type SpawnOptions} from 'node:child_process'
import type {Socket} from 'node:net'

/** Seconds between the watchdog's SIGTERM and SIGKILL to the groups of a kt that died. */
const WATCHDOG_GRACE_S = 1

/**
 * The watchdog: groups kept as " 12 34 " (removal by parameter expansion, so no process is
 * started per event); at end of file, TERM, a grace period when any group was listed, KILL.
 */
const SCRIPT = `g=' '
while IFS= read -r line; do
  case $line in
    +*) g="$g\${line#+} " ;;
    -*) p=\${line#-}; case $g in *" $p "*) g="\${g%% $p *} \${g#* $p }" ;; esac ;;
  esac
done
[ "$g" = ' ' ] && exit 0
for p in $g; do kill -TERM -$p 2>/dev/null; done
sleep "$1"
for p in $g; do kill -KILL -$p 2>/dev/null; done
`

let watchdog: ChildProcess | undefined
let unavailable = false

function pipe(): Socket | undefined {
  if (unavailable) return undefined
  if (!watchdog) {
    try {
      watchdog = spawn('/bin/sh', ['-c', SCRIPT, 'kt-watchdog', String(WATCHDOG_GRACE_S)], {
        detached: true,
        stdio: ['pipe', 'ignore', 'ignore'],
      })
    } catch {
      unavailable = true
      return undefined
    }
    const started = watchdog
    // it must neither keep kt running nor fail kt when it cannot start or dies (EPIPE)
    started.unref()
    ;(started.stdin as Socket | null)?.unref()
    started.stdin?.on('error', () => undefined)
    started.on('error', () => {
      unavailable = true
    })
    started.on('exit', () => {
      if (watchdog === started) watchdog = undefined
    })
  }
  return (watchdog.stdin as Socket | null) ?? undefined
}

/** Leaders of the groups started and not released yet. */
const liveGroups = new Set<number>()
let exitHookInstalled = false

/** Sends a signal to a whole process group (nothing when it is gone already). */
export function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal)
  } catch {
    // ESRCH: the group is gone already
  }
}

/** Starts argv as the leader of a new process group, watched and killed at kt's exit until releaseGroup. */
export function spawnGroup(argv: readonly string[], options: SpawnOptions): ChildProcess {
  if (!exitHookInstalled) {
    exitHookInstalled = true
    process.on('exit', () => {
      for (const pgid of liveGroups) {
        signalGroup(pgid, 'SIGKILL')
        releaseGroup(pgid)
      }
    })
  }
  const child = spawn(argv[0], argv.slice(1), {...options, detached: true})
  if (child.pid !== undefined) {
    liveGroups.add(child.pid)
    pipe()?.write(`+${child.pid}\n`)
  }
  return child
}

/** The group is gone (or killed by kt itself): neither killed at exit nor watched any more. */
export function releaseGroup(pgid: number): void {
  liveGroups.delete(pgid)
  if (watchdog) pipe()?.write(`-${pgid}\n`)
}

/** Whether a group started by spawnGroup is not released yet. */
export function isLiveGroup(pgid: number): boolean {
  return liveGroups.has(pgid)
}
