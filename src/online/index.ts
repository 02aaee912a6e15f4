/**
 * `kt/online`: the online learner as a library (see src/online/README.md, "As a library").
 *
 *   import {openTenant} from 'kt/online'
 *   const tenant = openTenant({dir: '.kt/online', tenant: 'acme', create: {per_type: true}})
 *   const choice = await tenant.choose({type: 'temporal'})     // durable before it resolves
 *   await tenant.feedback({query_id: choice.query_id, used: true})
 *   await tenant.close()
 */
export {
  openTenant,
  openJournal,
  resolveSpec,
  Tenant,
  OnlineError,
  SERVER_SIDE_CODES,
  CHOOSE_TYPES,
  DEFAULT_ONLINE_DIR,
  DEFAULT_SEED,
} from './library.js'
export type {
  OnlineErrorCode,
  TenantSpec,
  OpenTenantOptions,
  ChooseRequest,
  Choice,
  FeedbackRequest,
  FeedbackOutcome,
  TenantStatus,
} from './library.js'
export {GroupCommit} from './commit.js'
export {Journal} from './journal.js'
export type {JournalOptions, JournalStats} from './journal.js'
export type {JournalRecovery} from './journal-recovery.js'
export type {CommitStats} from './commit.js'
export type {Verdict, Counters} from './tenant.js'
export type {BanditSettings} from './bandit.js'
export type {Config} from '../space/types.js'
