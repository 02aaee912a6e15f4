export * from './types.js'
export * from './dates.js'
export * from './evidence.js'
export * from './load.js'
