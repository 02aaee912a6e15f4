#!/usr/bin/env node
// The kt entry: oclif reads the command tree from dist/ (built by `npm run build`, run by `npm ci`).
import {execute} from '@oclif/core'

await execute({dir: import.meta.url})
