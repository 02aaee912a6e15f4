/**
 * `kt/online`: the online learner as a library (see src/online/README.md, "As a library").
 *
 *   import {openTenant} from 'kt/online'
 *   const tenant = openTenant({dir: '.kt/online', tenant: 'acme', create: {per_type: true}})
 *   const choice = await tenant.choose({type: 'temporal'})     // durable before it resolves
 *   await tenant.feedback({query_id: choice.query_id, used: true})
 *   await tenant.close()
 */
export {openTenant, openJournal, Tenant, CHOOSE_TYPES, DEFAULT_ONLINE_DIR} from './library.js'
export {OnlineError, SERVER_SIDE_CODES, type OnlineErrorCode} from './online-error.js'
export {resolveSpec, DEFAULT_SEED, type TenantSpec} from './tenant-spec.js'
export type {OpenTenantOptions} from './library.js'
export type {ChooseRequest, Choice, FeedbackRequest, FeedbackOutcome, TenantStatus} from './wire.js'
export {GroupCommit} from './commit.js'
export {Journal} from './journal.js'
export type {JournalOptions, JournalStats} from './journal.js'
export type {JournalRecovery} from './journal-recovery.js'
export type {CommitStats} from './commit.js'
export type {Verdict, Counters} from './tenant.js'
export type {BanditSettings} from './bandit.js'
export type {Config} from '../space/types.js'
