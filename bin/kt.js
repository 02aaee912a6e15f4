#!/usr/bin/env node
// The kt entry: oclif reads the command tree from dist/ (built by `npm run build`, run by `npm ci`).
import {readFileSync} from 'node:fs'

// `kt`, `kt --help`: print the root help the build saved from oclif itself (dist/help.txt), so the
// most common first command does not wait for oclif to load (about 0.15 s).
const args = process.argv.slice(2)
if (
  process.env.KT_HELP_CACHE !== '0' &&
  (args.length === 0 || (args.length === 1 && ['--help', '-h', 'help'].includes(args[0])))
) {
  let text
  try {
    text = readFileSync(new URL('../dist/help.txt', import.meta.url))
  } catch {
    // no saved help (a build without it): fall through to oclif
  }
  if (text) {
    process.stdout.write(text)
    process.exit(0)
  }
}

// `kt online serve` runs its journal's fdatasyncs (up to 2 at once), a checkpoint's tenant-log syncs
// (2 at once) and the zero-filling of the next segment on libuv's thread pool: 8 threads, so the
// journal's flush, which every request waits for, never queues behind the others (src/online/journal.ts).
// The pool reads this when it starts, i.e. before any asynchronous file call.
if (args[0] === 'online' && args[1] === 'serve' && process.env.UV_THREADPOOL_SIZE === undefined)
  process.env.UV_THREADPOOL_SIZE = '8'

// The last guard: whatever escapes a command (or fails before one runs) is one line on stderr
// and an exit code, never a stack trace (KT_DEBUG=1 adds it). src/cli/failure.ts decides both.
async function fail(error) {
  let line = String(error?.message ?? error).split('\n')[0]
  let exitCode = 3
  try {
    ;({line, exitCode} = (await import('../dist/src/cli/failure.js')).failureLine(error))
  } catch {
    // no build: the first line as it is
  }
  process.stderr.write(`kt: ${line}\n`)
  if (process.env.KT_DEBUG === '1' && error?.stack) process.stderr.write(`${error.stack}\n`)
  process.exit(exitCode)
}
process.on('uncaughtException', fail)
process.on('unhandledRejection', fail)

// Under npm (`npx kt ... &`), kt stops when that npm is killed instead of running on without it.
try {
  ;(await import('../dist/src/cli/npm-parent.js')).stopWhenNpmParentDies()
} catch {
  // no build: oclif says so below
}

const {run, flush, Errors, settings} = await import('@oclif/core')
// the bin runs the build in dist/, never oclif's TypeScript lookup: under NODE_ENV=test or
// development that looks for typescript, which an installed kt does not have, and warns on stderr
settings.enableAutoTranspile = false
try {
  await run(args, import.meta.url)
  await flush()
} catch (error) {
  if (error instanceof Errors.ExitError) {
    await flush()
    process.exit(error.oclif.exit)
  }
  await fail(error)
}
