/** Lease owners: a worker process is `host/pid/token`, so a dead process on this host is seen at once. */
import {randomBytes} from 'node:crypto'
import {hostname} from 'node:os'

/** This worker's lease name: host/pid/token (KT_WORKER_HOST overrides the host name). */
export function newOwner(): string {
  return `${workerHost()}/${process.pid}/${randomBytes(4).toString('hex')}`
}

function workerHost(): string {
  return (process.env.KT_WORKER_HOST || hostname()).replace(/\//g, '_')
}

/** True when `owner` names a process on this host that no longer exists (taken over without waiting). */
export function ownerIsDeadHere(owner: string): boolean {
  const [host, pidText] = owner.split('/')
  const pid = Number(pidText)
  if (host !== workerHost() || !Number.isInteger(pid) || pid <= 0 || pid === process.pid) return false
  try {
    process.kill(pid, 0)
    return false
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH'
  }
}
