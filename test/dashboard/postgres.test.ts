import {describe, expect, it} from 'vitest'
import {postgresForTests} from '../helpers/postgres.js'
import {runSearch} from '../../src/study/search.js'
import {openStudyReader} from '../../src/study/reader.js'
import {startDashboard} from '../../src/dashboard/server.js'

const pg = postgresForTests()

describe.skipIf(pg.skip)(`kt dashboard over a PostgreSQL store ${pg.label}`.trim(), () => {
  it('lists and serves the studies, sees a new trial, and never shows the password', async () => {
    const url = await pg.database('kt_dash')
    await runSearch({
      storage: url,
      study: 'branin-pg',
      objective: {name: 'branin'},
      optimizer: 'random',
      seed: 1,
      maxTrials: 12,
    })
    const reader = await openStudyReader(url)
    const dash = await startDashboard({reader, port: 0})
    try {
      const get = async (path: string) => (await fetch(new URL(path, dash.url))).json() as Promise<any>
      const list = await get('/api/studies')
      expect(list.studies.map((s: {name: string}) => s.name)).toEqual(['branin-pg'])
      expect(list.location).not.toContain(new URL(url).password || '\u0000')
      const before = (await get('/api/version')).versions['branin-pg']
      expect((await get('/api/studies/branin-pg')).view.trials.id).toHaveLength(12)
      await runSearch({storage: url, study: 'branin-pg', resume: true, maxTrials: 13})
      expect((await get('/api/version')).versions['branin-pg']).not.toBe(before)
      expect((await get('/api/studies/branin-pg')).view.trials.id).toHaveLength(13)
      expect((await get('/api/studies/branin-pg/importance')).importance.params).toHaveLength(2)
    } finally {
      await dash.close()
      await reader.close()
    }
  })
})
