#!/usr/bin/env node
// The kt entry: oclif reads the command tree from dist/ (built by `npm run build`, run by `npm ci`).
import {readFileSync} from 'node:fs'

// `kt`, `kt --help`: print the root help the build saved from oclif itself (dist/help.txt), so the
// most common first command does not wait for oclif to load (about 0.15 s).
const args = process.argv.slice(2)
if (process.env.KT_HELP_CACHE !== '0' && (args.length === 0 || (args.length === 1 && ['--help', '-h', 'help'].includes(args[0])))) {
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

// `kt online serve` syncs many tenant logs at once on libuv's thread pool (group commit): 4 threads
// (the default) serialise a batch into rounds; measured here, 32 gave 1.4-1.9x the queries/s
// (kt bench serve). The pool reads this when it starts, i.e. before any asynchronous file call.
if (args[0] === 'online' && args[1] === 'serve' && process.env.UV_THREADPOOL_SIZE === undefined) process.env.UV_THREADPOOL_SIZE = '32'

const {execute} = await import('@oclif/core')
await execute({dir: import.meta.url})
