/**
 * The parent-death watch of the process groups kt starts (command trials, retrieval services).
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
import {spawn, type ChildProcess} from 'node:child_process'
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

/** From now on, the group `pgid` is killed if this process dies before unwatchGroup(pgid). */
export function watchGroup(pgid: number): void {
  pipe()?.write(`+${pgid}\n`)
}

/** The group `pgid` is gone (or killed by kt itself): the watchdog forgets it. */
export function unwatchGroup(pgid: number): void {
  if (watchdog) pipe()?.write(`-${pgid}\n`)
}
