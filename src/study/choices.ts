/**
 * The choices of `kt search`, checked before any work starts: a wrong name is one line with the
 * closest right one ("--objective retreival" says "did you mean retrieval"), never a study whose
 * every trial fails.
 */
import {QUERY_TYPES} from '../engine/retrieval/classifier.js'
import {retrievalMetricNames} from '../data/conversations/metrics.js'
import {InputError} from '../util/errors.js'
import {OBJECTIVE_NAMES} from './objectives.js'
import {OPTIMIZER_NAMES} from '../search/optimizers.js'

function check(flag: string, value: string | undefined, choices: readonly string[]): void {
  if (value !== undefined && !choices.includes(value))
    throw new InputError(flag, `one of ${choices.join(', ')}`, JSON.stringify(value))
}

export function checkSearchChoices(c: {
  objective?: string
  optimizer?: string
  metric?: string
  queryType?: string
}): void {
  check('--objective', c.objective, OBJECTIVE_NAMES)
  check('--optimizer', c.optimizer, OPTIMIZER_NAMES)
  check('--metric', c.metric, retrievalMetricNames())
  check('--query-type', c.queryType, QUERY_TYPES)
}
