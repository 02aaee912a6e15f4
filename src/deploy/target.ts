import {existsSync, readdirSync, rmSync} from 'node:fs'
import {join} from 'node:path'
import {InputError} from '../util/errors.js'
import {readJson, writeFileAtomic, ensureDir} from '../util/fs.js'
import type {ParamSpace} from '../space/types.js'
import {parseProfile, profileJson, renderEnvFile, renderShellScript, type Profile} from './profile.js'

/**
 * A deployment target folder: `active.json` (+ `active.env`, `active.sh`) is the live profile;
 * `history/NNNN.json` keeps every profile it replaced, newest last. Deploy pushes the active
 * profile onto the history; rollback pops it back.
 */
export const ACTIVE = 'active'
const HISTORY = 'history'

export interface DeployOutcome {
  readonly active: string
  readonly previous: string | null
  readonly history: number
}

export function deployProfile(space: ParamSpace, profileFile: string, target: string, options: {force?: boolean} = {}): DeployOutcome {
  const profile = parseProfile(readJson(profileFile), profileFile, space)
  // a profile whose own run failed its acceptance criteria does not go live by accident
  if (profile.metrics.validation_passed === 'false' && !options.force)
    throw new InputError(`${profileFile}: metrics.validation_passed`, 'a profile that passed its validation (or --force)', 'false')
  ensureDir(join(target, HISTORY))
  const activeFile = join(target, `${ACTIVE}.json`)
  let previous: string | null = null
  if (existsSync(activeFile)) {
    previous = parseProfile(readJson(activeFile), activeFile, space).name
    const entries = historyEntries(target)
    const nextNumber = entries.length ? Number(entries.at(-1)!.slice(0, 4)) + 1 : 1
    writeFileAtomic(join(target, HISTORY, `${String(nextNumber).padStart(4, '0')}.json`), profileJson(parseProfile(readJson(activeFile), activeFile, space)))
  }
  writeActive(space, target, profile)
  return {active: profile.name, previous, history: historyEntries(target).length}
}

export function rollback(space: ParamSpace, target: string): DeployOutcome {
  const entries = existsSync(join(target, HISTORY)) ? historyEntries(target) : []
  if (entries.length === 0) throw new InputError(join(target, HISTORY), 'a previous profile to roll back to', 'none')
  const last = join(target, HISTORY, entries.at(-1)!)
  const profile = parseProfile(readJson(last), last, space)
  const replaced = existsSync(join(target, `${ACTIVE}.json`)) ? parseProfile(readJson(join(target, `${ACTIVE}.json`)), join(target, `${ACTIVE}.json`), space).name : null
  writeActive(space, target, profile)
  rmSync(last)
  return {active: profile.name, previous: replaced, history: entries.length - 1}
}

export function activeProfile(space: ParamSpace, target: string): Profile | null {
  const file = join(target, `${ACTIVE}.json`)
  return existsSync(file) ? parseProfile(readJson(file), file, space) : null
}

function writeActive(space: ParamSpace, target: string, profile: Profile): void {
  writeFileAtomic(join(target, `${ACTIVE}.env`), renderEnvFile(space, profile))
  writeFileAtomic(join(target, `${ACTIVE}.sh`), renderShellScript(space, profile), 0o755)
  // the JSON last: it is what marks the deployment as done
  writeFileAtomic(join(target, `${ACTIVE}.json`), profileJson(profile))
}

function historyEntries(target: string): string[] {
  return readdirSync(join(target, HISTORY)).filter((f) => /^\d{4}\.json$/.test(f)).sort()
}

