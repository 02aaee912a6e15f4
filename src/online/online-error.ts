/** The errors of the online learner's library (library.ts), each with a stable code the HTTP service maps to a status. */
import {InputError} from '../util/errors.js'

/**
 * Why a request failed, as a stable code (the HTTP service maps each to a status; see
 * src/online/README.md). `retry` errors mean the request was not acknowledged and may be sent again.
 */
export type OnlineErrorCode =
  | 'bad_request'
  | 'unknown_tenant'
  | 'tenant_exists'
  | 'unknown_query'
  | 'already_settled'
  | 'duplicate_query_id'
  | 'not_accepted'
  | 'tenant_busy'
  | 'not_durable'
  | 'tenant_closed'
  | 'state_damaged'
  | 'storage_failed'

/**
 * Codes for a fault on the serving side, not in the request: the tenant's stored files do not read
 * back as kt wrote them (state_damaged: restore them from a backup), or its folder cannot be read
 * or written (storage_failed). The HTTP service answers them 500 without the message (which names
 * server paths) and logs the message.
 */
export const SERVER_SIDE_CODES: ReadonlySet<OnlineErrorCode> = new Set(['state_damaged', 'storage_failed'])

export class OnlineError extends InputError {
  constructor(
    readonly code: OnlineErrorCode,
    where: string,
    expected: string,
    got?: string,
  ) {
    super(where, expected, got)
  }

  /** Whether the request was not applied and may be sent again unchanged. */
  get retry(): boolean {
    return this.code === 'not_durable' || this.code === 'tenant_busy'
  }
}
