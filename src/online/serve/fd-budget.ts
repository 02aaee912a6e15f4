/** The descriptors `kt online serve` may hold: open connections and open tenants (each holds its log open) under the open-file limit. */
import {readFileSync} from 'node:fs'

/**
 * Open connections at most; beyond it a new connection is answered 429 Too Many Requests (with
 * Retry-After: the client's to slow down, RFC 6585) and closed. 10,000 is the flood size;
 * the process's file-descriptor limit caps it (minus FD_RESERVE).
 */
export const DEFAULT_MAX_CONNECTIONS = 10_000
/**
 * Descriptors kept for tenant logs, snapshots and the registry when the connection limit is derived
 * from the fd limit: this many, or half the limit when the limit is under twice this (a limit of
 * 1024, common by default, left 1 connection when the whole 1024 was reserved: review S#5).
 */
export const FD_RESERVE = 1024
/** Of the reserve, descriptors not for tenant logs: the journal's segments, snapshot temp files, the registry, the listening socket, stdio. */
export const FD_HEADROOM = 64

export interface FdBudget {
  connections: number
  tenants: number
  /** Whether the limit is below what the defaults assume (worth a warning). */
  constrained: boolean
}

/** The server's descriptor budget under an open-file limit: open connections at most, open tenants at most. */
export function fdBudget(fdLimit: number | undefined, maxConnections?: number): FdBudget {
  if (fdLimit === undefined)
    return {
      connections: maxConnections ?? DEFAULT_MAX_CONNECTIONS,
      tenants: Number.POSITIVE_INFINITY,
      constrained: false,
    }
  const reserve = Math.min(FD_RESERVE, Math.floor(fdLimit / 2))
  const derived = Math.max(1, Math.min(DEFAULT_MAX_CONNECTIONS, fdLimit - reserve))
  const connections = maxConnections ?? derived
  // every descriptor connections cannot take is for tenants (their logs), less the headroom; an
  // explicit --max-connections above what the limit allows still leaves tenants the reserve
  const tenants = Math.max(1, fdLimit - Math.min(connections, derived) - FD_HEADROOM)
  // the default cannot reach DEFAULT_MAX_CONNECTIONS, or an explicit limit exceeds what the fd limit allows
  const constrained =
    maxConnections === undefined ? fdLimit < DEFAULT_MAX_CONNECTIONS + FD_RESERVE : maxConnections > derived
  return {connections, tenants, constrained}
}

/** The soft limit on open files from /proc/self/limits, or undefined. */
export function openFileLimit(): number | undefined {
  try {
    const m = /Max open files\s+(\d+)/.exec(readFileSync('/proc/self/limits', 'utf8'))
    return m ? Number(m[1]) : undefined
  } catch {
    return undefined
  }
}
