/** Shared pieces of the `kt online` tenant commands. */
import {Flags} from '@oclif/core'
import {join} from 'node:path'

/** Where tenants live unless --dir says otherwise (relative to the working folder). */
export const DEFAULT_ONLINE_DIR = join('.kt', 'online')

/** Flags of every tenant command. */
export const tenantFlags = {
  tenant: Flags.string({
    description: `Tenant id (letters, digits, ".", "-", "_"; at most 64 characters).`,
    required: true,
  }),
  dir: Flags.string({description: "Folder holding the tenants' logs and state.", default: DEFAULT_ONLINE_DIR}),
}

/** The event clock, for the commands that log events (choose, feedback); init and status log none, so they take no --time. */
export const eventTimeFlags = {
  time: Flags.integer({
    description: 'Event time in ms since the epoch, >= 0 (default: now). Feedback windows are measured in this clock.',
    min: 0,
  }),
}

export function eventTime(flag: number | undefined): number {
  return flag ?? Date.now()
}
