export * from './space.js'
export * from './signals.js'
export * from './score.js'
