import {createHash} from 'node:crypto'
import {existsSync, readdirSync, readFileSync, statSync} from 'node:fs'
import {dirname, join, relative, resolve, sep} from 'node:path'
import {fileURLToPath} from 'node:url'
import {z} from 'zod'
import {writeFileAtomic} from '../../src/util/fs.js'
import {readJsonFile} from '../../src/util/json.js'
import {packageRoot} from '../../src/util/paths.js'
import type {PhaseName} from '../../src/report/types.js'

/**
 * Phase checkpoints of `kt run --resume`. A checkpoint is reused only when everything its result
 * was computed from is unchanged: the sha256 of every input file (the plan, each dataset, the
 * retrieval data, the engine file and the files beside it), the code that computed it, the seed
 * and the run id; and only when the files the phase wrote are still there, byte for byte.
 */

/** Version of the checkpoint envelope (`kt_checkpoint` field). */
const CHECKPOINT_FORMAT_VERSION = 1
export const CHECKPOINT_DIR = '.checkpoints'
/** Marks which inputs the retrieval study store in the run folder was started with. */
const RETRIEVAL_STORE_MARK = 'retrieval-store.json'

/** One input file: how the plan names it (field), where it is, and its sha256 ("missing" when absent). */
export interface InputFile {
  readonly field: string
  readonly file: string
  readonly sha256: string
}

/** Everything a run's results are a function of, besides its own options. */
export interface RunInputs {
  readonly files: readonly InputFile[]
  /** codeIdentity(): the code that computes the results. */
  readonly code: string
}

/** sha256 of a file's bytes, "missing" when there is no such file. */
export function fileSha256(path: string): string {
  if (!existsSync(path) || !statSync(path).isFile()) return 'missing'
  return createHash('sha256').update(readFileSync(path)).digest('hex')
}

/** Files beside an engine file above this size are identified by name and size, not read whole. */
const ENGINE_FOLDER_FILE_MAX_BYTES = 8 * 1024 * 1024

/**
 * The files an engine's results depend on, as far as kt can see them: the engine file and every
 * regular file in the folder its command runs in (its scripts: service.py, memengine.py, ...),
 * not descending into subfolders.
 */
export function engineInputFiles(engineFile: string, commandDir: string, field: string): InputFile[] {
  const files: InputFile[] = [{field, file: engineFile, sha256: fileSha256(engineFile)}]
  if (!existsSync(commandDir)) return files
  for (const name of readdirSync(commandDir).sort()) {
    const path = join(commandDir, name)
    if (resolve(path) === resolve(engineFile)) continue
    let size: number
    try {
      const st = statSync(path)
      if (!st.isFile()) continue
      size = st.size
    } catch {
      continue // a dangling link or a file removed meanwhile
    }
    files.push({
      field: `${field} (folder)`,
      file: path,
      sha256: size > ENGINE_FOLDER_FILE_MAX_BYTES ? `size:${size}` : fileSha256(path),
    })
  }
  return files
}

let cachedCode: string | undefined

/**
 * The identity of the running code: codeIdentityOf the folder kt runs from (the built `dist/`, or
 * the TypeScript sources under a test runner) and the package root. Computed once per process.
 */
export function codeIdentity(): string {
  // this file is <base>/phases/lib/checkpoints.(ts|js); <base> is the package root or its dist/
  cachedCode ??= codeIdentityOf(resolve(dirname(fileURLToPath(import.meta.url)), '..', '..'), packageRoot)
  return cachedCode
}

/**
 * sha256 over the relative path and bytes of every source file under `base`'s `src/` and
 * `phases/` (.js, .mjs, .ts, .json; not .d.ts), `root`'s package.json and package-lock.json (the
 * dependencies' versions) and the Node version. Content only, no git, absolute paths or file
 * times, so it is the same in any fresh clone of the same commit built with the pinned compiler,
 * and changes with any edit that could change a result.
 */
export function codeIdentityOf(base: string, root: string): string {
  const hash = createHash('sha256').update(`node ${process.version}\0`)
  const files: Array<[name: string, path: string]> = []
  for (const dir of ['src', 'phases']) {
    const top = join(base, dir)
    if (!existsSync(top)) continue
    for (const entry of readdirSync(top, {recursive: true, withFileTypes: true}))
      if (entry.isFile() && /\.(js|mjs|ts|json)$/.test(entry.name) && !entry.name.endsWith('.d.ts')) {
        const path = join(entry.parentPath, entry.name)
        files.push([relative(base, path).split(sep).join('/'), path])
      }
  }
  files.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  for (const extra of ['package.json', 'package-lock.json'])
    if (existsSync(join(root, extra))) files.push([`<root>/${extra}`, join(root, extra)])
  for (const [name, path] of files) hash.update(`${name}\0`).update(readFileSync(path)).update('\0')
  return hash.digest('hex')
}

/** The key a checkpoint must carry to be reused: a hash of the run id, kt's version and every input. */
export function checkpointKey(runId: string, version: string, inputs: RunInputs): string {
  return createHash('sha256').update(JSON.stringify({runId, version, inputs})).digest('hex')
}

/** What changed between the inputs a checkpoint was made with and the current ones, in a few words. */
function describeChange(before: RunInputs | undefined, now: RunInputs, displayFile: (file: string) => string): string {
  if (!before) return 'it was made by another kt version'
  const changed: string[] = []
  const old = new Map(before.files.map((f) => [`${f.field}\0${f.file}`, f.sha256]))
  for (const f of now.files) {
    const was = old.get(`${f.field}\0${f.file}`)
    if (was === undefined) changed.push(`${f.field} ${displayFile(f.file)} is new`)
    else if (was !== f.sha256)
      changed.push(`${f.field} ${displayFile(f.file)} changed (sha256 ${was.slice(0, 12)} -> ${f.sha256.slice(0, 12)})`)
    old.delete(`${f.field}\0${f.file}`)
  }
  for (const key of old.keys())
    changed.push(`${key.split('\0')[0]} ${displayFile(key.split('\0')[1])} is no longer an input`)
  if (before.code !== now.code)
    changed.push(`the code changed (${before.code.slice(0, 12)} -> ${now.code.slice(0, 12)})`)
  return changed.length
    ? changed.slice(0, 3).join('; ') + (changed.length > 3 ? `; and ${changed.length - 3} more` : '')
    : 'the run id, seed or kt version differs'
}

/** A file a phase wrote: its path relative to the run folder, and its sha256 (null: existence only, e.g. a study store that is reopened). */
interface PhaseOutput {
  readonly path: string
  readonly sha256: string | null
}

const FileInputSchema = z.object({field: z.string(), file: z.string(), sha256: z.string()}).strict()
const CheckpointSchema = z
  .object({
    kt_checkpoint: z.literal(CHECKPOINT_FORMAT_VERSION),
    phase: z.string(),
    key: z.string().regex(/^[0-9a-f]{64}$/),
    inputs: z.object({files: z.array(FileInputSchema), code: z.string()}).strict(),
    outputs: z.array(z.object({path: z.string().min(1), sha256: z.string().nullable()}).strict()),
    result: z.record(z.unknown()),
  })
  .strict()

export type CheckpointRead = {readonly result: unknown} | {readonly reason: string}

/** The run folder's checkpoints under one key. */
export class Checkpoints {
  constructor(
    readonly outDir: string,
    readonly key: string,
    readonly inputs: RunInputs,
    private readonly displayFile: (file: string) => string,
  ) {}

  private file(phase: PhaseName): string {
    return join(this.outDir, CHECKPOINT_DIR, `${phase}.json`)
  }

  /** The phase's saved result when it may be reused, otherwise why not. */
  read(phase: PhaseName): CheckpointRead {
    const file = this.file(phase)
    if (!existsSync(file)) return {reason: 'no checkpoint'}
    let saved: z.infer<typeof CheckpointSchema>
    try {
      const parsed = CheckpointSchema.safeParse(readJsonFile(file))
      if (!parsed.success) return {reason: 'its checkpoint is from another kt version'}
      saved = parsed.data
    } catch {
      return {reason: 'its checkpoint is torn'} // e.g. a disk filled while writing: just not reused
    }
    if (saved.phase !== phase) return {reason: 'its checkpoint belongs to another phase'}
    if (saved.key !== this.key)
      return {
        reason: `the inputs changed since its checkpoint: ${describeChange(saved.inputs, this.inputs, this.displayFile)}`,
      }
    for (const out of saved.outputs) {
      const path = join(this.outDir, out.path)
      if (!existsSync(path)) return {reason: `its output ${out.path} is missing`}
      if (out.sha256 !== null && fileSha256(path) !== out.sha256) return {reason: `its output ${out.path} was changed`}
    }
    return {result: saved.result}
  }

  write(phase: PhaseName, result: unknown, outputs: readonly string[], existenceOnly: (path: string) => boolean): void {
    const recorded: PhaseOutput[] = outputs.map((path) => ({
      path,
      sha256: existenceOnly(path) ? null : fileSha256(join(this.outDir, path)),
    }))
    writeFileAtomic(
      this.file(phase),
      JSON.stringify({
        kt_checkpoint: CHECKPOINT_FORMAT_VERSION,
        phase,
        key: this.key,
        inputs: this.inputs,
        outputs: recorded,
        result,
      }),
    )
  }

  /** True when the retrieval study store in the run folder was started with these same inputs (so a resume may continue it). */
  retrievalStoreMatches(): boolean {
    const file = join(this.outDir, CHECKPOINT_DIR, RETRIEVAL_STORE_MARK)
    if (!existsSync(file)) return false
    try {
      return (readJsonFile(file) as {key?: unknown}).key === this.key
    } catch {
      return false
    }
  }

  /** Records that the retrieval study store is being (re)built from these inputs. */
  markRetrievalStore(): void {
    writeFileAtomic(join(this.outDir, CHECKPOINT_DIR, RETRIEVAL_STORE_MARK), JSON.stringify({key: this.key}))
  }
}
