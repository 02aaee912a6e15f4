/**
 * A deployment target folder and its history, changed only under the shared lock (src/util/lock.ts):
 *
 * TARGET/index.json          THE truth: the active profile, the stack of replaced profiles that
 *                            rollback pops, and every deploy/rollback event (forced ones with
 *                            their reason). Replaced atomically (temp file + rename).
 * TARGET/profiles/<sha>.json every profile ever made active, named by the sha256 of its text;
 *                            written (atomically) before the index names it, never changed.
 * TARGET/active.{json,env,sh} the active profile, rendered from the index after every change (and
 *                            re-rendered by the next change if a crash left them behind).
 * TARGET/lock                held while reading and replacing the index.
 *
 * A folder written by an older kt (active.json plus history/NNNN.json) is taken over on its first
 * change: its profiles go into the store, its history into the stack.
 */
import {createHash} from 'node:crypto'
import {existsSync, readdirSync} from 'node:fs'
import {isAbsolute, join, resolve} from 'node:path'
import {z} from 'zod'
import {InputError} from '../util/errors.js'
import {ensureDir, parseJson, readJson, readText, writeFileAtomic} from '../util/fs.js'
import {withDirLock} from '../util/lock.js'
import {parseWith} from '../util/zod.js'
import type {ParamSpace} from '../space/types.js'
import {passGate} from './gate.js'
import {loadProfile, parseProfile, type LoadedProfile} from './load.js'
import {
  NAME_PATTERN,
  SPACE_ID_PATTERN,
  profileJson,
  safeText,
  spaceFingerprint,
  writeProfileFiles,
  type Profile,
} from './profile.js'
import {findEngineFile} from './spaces.js'
import {loadEngineFile} from '../adapters/file.js'

const ACTIVE = 'active'
const INDEX_FILE = 'index.json'
const STORE_DIR = 'profiles'
/** The history folder of targets written before the index (read once, when taking them over). */
const LEGACY_HISTORY = 'history'
/** Version of index.json (`kt_deployments`). */
const INDEX_FORMAT_VERSION = 1

const sha = z.string().regex(/^[0-9a-f]{64}$/, '64 hex digits')
/**
 * Where an engine profile's parameter table was found when it was deployed: the engine file's
 * absolute path and the table's fingerprint. The profile's own engine.file may be relative to the
 * folder it was written in, which its stored copy is not in; rollback reads this instead.
 */
const EngineRecordSchema = z
  .object({
    file: safeText.refine((f) => isAbsolute(f), 'an absolute path'),
    space_sha256: sha,
  })
  .strict()
const EntrySchema = z
  .object({
    sha256: sha,
    name: z.string().regex(NAME_PATTERN),
    kind: z.string().regex(NAME_PATTERN),
    engine: EngineRecordSchema.optional(),
  })
  .strict()
const EventSchema = z
  .object({
    seq: z.number().int().min(1),
    action: z.enum(['deploy', 'rollback', 'adopt']),
    name: z.string().regex(NAME_PATTERN),
    sha256: sha,
    replaced: sha.nullable(),
    verdict: z.enum(['pass', 'fail', 'not-validated']),
    forced: z.boolean(),
    reason: safeText.nullable(),
    gate: safeText.nullable(),
    at: z.string().regex(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/, 'an ISO time'),
  })
  .strict()
const IndexSchema = z
  .object({
    kt_deployments: z.literal(INDEX_FORMAT_VERSION),
    // the profiles' own space ids (`engine:<name>` included), as the profile schema checks them
    space: z.string().regex(SPACE_ID_PATTERN, 'a space id of letters, digits and . _ : - (at most 64)'),
    active: EntrySchema.nullable(),
    /** Replaced profiles, oldest first: rollback pops the last. */
    stack: z.array(EntrySchema),
    events: z.array(EventSchema),
  })
  .strict()

export type DeploymentIndex = z.infer<typeof IndexSchema>
type DeploymentEvent = DeploymentIndex['events'][number]

export interface DeployOutcome {
  readonly target: string
  readonly space: string
  readonly kind: string
  readonly active: string
  readonly previous: string | null
  /** Profiles left to roll back to. */
  readonly history: number
  readonly verdict: Profile['validation']['verdict']
  readonly forced: boolean
  readonly reason: string | null
  /** The gate's objection that --force overrode, or null. */
  readonly gate: string | null
}

export interface DeployOptions {
  readonly force?: boolean
  /** Why a refused profile is deployed anyway (required with force when the gate refuses). */
  readonly reason?: string
  /** How long to wait for another deploy or rollback of the same target. */
  readonly lockWaitMs?: number
  /** Clock for the event record (tests). */
  readonly now?: () => Date
  /** The space of engine profiles when the caller names the engine file (kt deploy --engine). */
  readonly space?: ParamSpace
  /** The engine file that space was read from (kt deploy --engine FILE), recorded for rollback. */
  readonly engineFile?: string
}

/** Lock options of a target (the one-line error names the target). */
function lockOptions(target: string, waitMs?: number) {
  return {
    waitMs,
    expected: 'a deployment target no other deploy or rollback is changing',
    subject: `deployment target ${target}`,
  }
}

/**
 * Checks a profile through the gate and makes it the active profile of `target`. A profile the
 * gate refuses is deployed only with `force` and a `reason`, recorded in the history.
 */
export function deployProfile(profileFile: string, target: string, options: DeployOptions = {}): DeployOutcome {
  const loaded = loadProfile(profileFile, {space: options.space})
  const gate = passGate(loaded.profile, profileFile, options)
  ensureDir(target)
  return withDirLock(target, lockOptions(target, options.lockWaitMs), () => {
    const index = readIndex(target, loaded.space.id)
    if (index.space !== loaded.profile.space)
      throw new InputError(
        `${profileFile}: space`,
        `a profile of space ${JSON.stringify(index.space)} (the space of deployment target ${target})`,
        JSON.stringify(loaded.profile.space),
      )
    const entry = storeProfile(
      target,
      loaded.profile,
      profileJson(loaded.profile),
      engineRecord(loaded, profileFile, options),
    )
    const stack = index.active ? [...index.stack, index.active] : index.stack
    const gateSays = {forced: !gate.passed, reason: options.reason?.trim() || null, gate: gate.reason}
    return activate(target, index, 'deploy', entry, loaded.profile, stack, gateSays, options)
  })
}

/** Makes the profile the last deploy replaced active again; the rolled-back profile stays in the store and the events. */
export function rollback(
  target: string,
  options: Pick<DeployOptions, 'lockWaitMs' | 'now' | 'space'> = {},
): DeployOutcome {
  if (!existsSync(target))
    throw new InputError(target, 'a deployment target folder (made by kt deploy)', 'no such folder')
  return withDirLock(target, lockOptions(target, options.lockWaitMs), () => {
    const index = readIndex(target)
    const back = index.stack.at(-1)
    if (!back) throw new InputError(join(target, INDEX_FILE), 'a previous profile to roll back to', 'none')
    const {profile} = readStored(target, back, options.space)
    const notForced = {forced: false, reason: null, gate: null}
    return activate(target, index, 'rollback', back, profile, index.stack.slice(0, -1), notForced, options)
  })
}

/** Records the event, writes the index with `entry` active over `stack`, and renders the active files (under the lock). */
function activate(
  target: string,
  index: DeploymentIndex,
  action: 'deploy' | 'rollback',
  entry: Entry,
  profile: Profile,
  stack: Entry[],
  gate: Pick<DeploymentEvent, 'forced' | 'reason' | 'gate'>,
  options: Pick<DeployOptions, 'now'>,
): DeployOutcome {
  const event: DeploymentEvent = {
    seq: nextSeq(index),
    action,
    name: entry.name,
    sha256: entry.sha256,
    replaced: index.active?.sha256 ?? null,
    verdict: profile.validation.verdict,
    ...gate,
    at: (options.now?.() ?? new Date()).toISOString(),
  }
  writeIndex(target, {...index, active: entry, stack, events: [...index.events, event]})
  writeProfileFiles(target, ACTIVE, profile)
  return {
    target,
    space: index.space,
    kind: profile.kind,
    active: entry.name,
    previous: index.active?.name ?? null,
    history: stack.length,
    verdict: event.verdict,
    ...gate,
  }
}

/** The active profile of a target (from the index and the store), or null when nothing is deployed. */
export function activeProfile(target: string): LoadedProfile | null {
  const index = readIndexIfAny(target)
  if (index) return index.active ? readStored(target, index.active) : null
  const legacy = join(target, `${ACTIVE}.json`)
  return existsSync(legacy) ? loadProfile(legacy) : null
}

/** The target's index (its history), or null for a folder without one. */
export function deploymentIndex(target: string): DeploymentIndex | null {
  return readIndexIfAny(target)
}

function nextSeq(index: DeploymentIndex): number {
  return (index.events.at(-1)?.seq ?? 0) + 1
}

function readIndexIfAny(target: string): DeploymentIndex | null {
  const file = join(target, INDEX_FILE)
  return existsSync(file) ? parseWith(IndexSchema, readJson(file), file) : null
}

/** The index, or a new one: empty, or taken over from a folder an older kt wrote (held under the lock). */
function readIndex(target: string, space?: string): DeploymentIndex {
  const index = readIndexIfAny(target)
  if (index) return index
  const legacyActive = join(target, `${ACTIVE}.json`)
  if (!existsSync(legacyActive)) {
    if (!space) throw new InputError(join(target, INDEX_FILE), 'a deployment target made by kt deploy', 'no index')
    return {kt_deployments: INDEX_FORMAT_VERSION, space, active: null, stack: [], events: []}
  }
  const at = new Date().toISOString()
  const adopt = (file: string, seq: number) => {
    const loaded = loadProfile(file)
    const entry = storeProfile(target, loaded.profile, profileJson(loaded.profile))
    const event: DeploymentEvent = {
      seq,
      action: 'adopt',
      name: entry.name,
      sha256: entry.sha256,
      replaced: null,
      verdict: loaded.profile.validation.verdict,
      forced: false,
      reason: `taken over from ${file} (a target an older kt wrote)`,
      gate: null,
      at,
    }
    return {entry, event, space: loaded.profile.space}
  }
  const historyDir = join(target, LEGACY_HISTORY)
  const older = existsSync(historyDir)
    ? readdirSync(historyDir)
        .filter((f) => /^\d{4}\.json$/.test(f))
        .sort()
    : []
  const adopted = [...older.map((f) => join(historyDir, f)), legacyActive].map((f, i) => adopt(f, i + 1))
  const active = adopted.at(-1)!
  return {
    kt_deployments: INDEX_FORMAT_VERSION,
    space: active.space,
    active: active.entry,
    stack: adopted.slice(0, -1).map((a) => a.entry),
    events: adopted.map((a) => a.event),
  }
}

function writeIndex(target: string, index: DeploymentIndex): void {
  writeFileAtomic(join(target, INDEX_FILE), `${JSON.stringify(index, null, 2)}\n`)
}

type Entry = DeploymentIndex['stack'][number]
type EngineRecord = NonNullable<Entry['engine']>

/** Writes a profile into the target's store (once; its name is its hash) and returns its index entry. */
function storeProfile(target: string, profile: Profile, text: string, engine?: EngineRecord): Entry {
  const hash = createHash('sha256').update(text).digest('hex')
  const file = join(target, STORE_DIR, `${hash}.json`)
  if (!existsSync(file) || createHash('sha256').update(readText(file)).digest('hex') !== hash)
    writeFileAtomic(file, text)
  return {sha256: hash, name: profile.name, kind: profile.kind, ...(engine ? {engine} : {})}
}

/**
 * The engine file an engine profile was checked against at deploy time (the one --engine named,
 * else the one its engine.file led to from the profile's folder), absolute, with the table's
 * fingerprint; undefined for other kinds or an engine space that came from no file.
 */
function engineRecord(loaded: LoadedProfile, profileFile: string, options: DeployOptions): EngineRecord | undefined {
  const engine = loaded.profile.engine
  if (!engine) return undefined
  const file =
    options.engineFile !== undefined
      ? resolve(options.engineFile)
      : options.space
        ? undefined
        : findEngineFile(engine, profileFile)
  return file ? {file, space_sha256: engine.space_sha256} : undefined
}

/**
 * A stored profile, re-checked (schema, space, safe values) and matched against its hash. An
 * engine profile is checked against the caller's space, else the engine file recorded at deploy time.
 */
function readStored(target: string, entry: Entry, space?: ParamSpace): LoadedProfile {
  const hash = entry.sha256
  const file = join(target, STORE_DIR, `${hash}.json`)
  const text = readText(file)
  if (createHash('sha256').update(text).digest('hex') !== hash)
    throw new InputError(
      file,
      `the profile whose sha256 is ${hash.slice(0, 12)}... (as ${INDEX_FILE} records)`,
      'a changed file',
    )
  return parseProfile(parseJson(file, text), file, {
    space: space ?? (entry.engine ? recordedEngineSpace(target, entry.name, entry.engine) : undefined),
  })
}

/** The parameter table of the engine file recorded with a deployed profile, if it is still there and unchanged. */
function recordedEngineSpace(target: string, name: string, engine: EngineRecord): ParamSpace {
  const where = `${join(target, INDEX_FILE)}: engine of ${name}`
  const hint = '; name the engine file with --engine FILE'
  if (!existsSync(engine.file))
    throw new InputError(where, `the engine file it was deployed with${hint}`, `no file ${engine.file}`)
  const space = loadEngineFile(engine.file).space
  const now = spaceFingerprint(space)
  if (now !== engine.space_sha256)
    throw new InputError(
      where,
      `the parameter table it was deployed with (${engine.space_sha256.slice(0, 12)}...) in ${engine.file}${hint}`,
      `a changed table (${now.slice(0, 12)}...)`,
    )
  return space
}
