import {describe, expect, it} from 'vitest'
import {readFileSync} from 'node:fs'
import {join} from 'node:path'
import {kt} from './helpers.js'
import {packageRoot} from '../../src/util/paths.js'

describe('kt --help', () => {
  it('prints the help the build saved, identical to what oclif prints itself', () => {
    const cached = kt(['--help'])
    const live = kt(['--help'], {env: {KT_HELP_CACHE: '0'}})
    expect(cached.status).toBe(0)
    expect(live.status).toBe(0)
    expect(cached.stdout).toBe(live.stdout)
    expect(cached.stdout).toBe(readFileSync(join(packageRoot, 'dist', 'help.txt'), 'utf8'))
    expect(cached.stdout).toMatch(/\n {2}run +Run all seven phases/)
  })

  it('has a description and an example for every command', () => {
    const manifest = JSON.parse(readFileSync(join(packageRoot, 'oclif.manifest.json'), 'utf8')) as {
      commands: Record<
        string,
        {
          summary?: string
          description?: string
          examples?: unknown[]
          flags: Record<string, {description?: string; name: string}>
        }
      >
    }
    for (const [id, c] of Object.entries(manifest.commands)) {
      expect(c.summary ?? c.description, id).toBeTruthy()
      expect(c.examples?.length ?? 0, `${id} examples`).toBeGreaterThan(0)
      for (const f of Object.values(c.flags)) expect(f.description, `${id} --${f.name}`).toBeTruthy()
    }
  })
})
