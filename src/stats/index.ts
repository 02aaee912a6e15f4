/** kt's statistics library: one small function per statistical concept. */
export * from './summary.js'
export * from './correlation.js'
export * from './interval.js'
export * from './bootstrap.js'
export * from './ranking.js'
export * from './pareto.js'
