/**
 * The one alphabet of study names. A name becomes a folder (`<store folder>/<name>/trials`, or
 * `./kt-studies/<name>/trials` for a PostgreSQL study, on every worker), a file name (kt study
 * export), a table row (kt study list) and part of a URL (kt dashboard), so it may hold no path
 * separator, no "..", no control character and no markup: letters, digits, '.', '_' and '-',
 * starting with a letter or digit, at most STUDY_NAME_MAX characters.
 */
import {InputError, describeValue} from '../util/errors.js'

/** Longest study name: the routed sweeps append a query type to a prefix, and 128 leaves room below common file-name limits (255). */
export const STUDY_NAME_MAX = 128

const STUDY_NAME = new RegExp(`^[A-Za-z0-9][A-Za-z0-9._-]{0,${STUDY_NAME_MAX - 1}}$`)

/** What a study name must be, as error messages and the docs say it. */
const STUDY_NAME_RULE = `a study name of letters, digits, '.', '_' and '-' starting with a letter or digit (at most ${STUDY_NAME_MAX} characters)`

export function isStudyName(name: string): boolean {
  return STUDY_NAME.test(name)
}

/** `name` if it is in the alphabet; otherwise an InputError (exit 2) naming `where` (a flag, a file and field, a URL). */
export function checkStudyName(name: string, where: string): string {
  if (!isStudyName(name)) throw new InputError(where, STUDY_NAME_RULE, describeValue(name))
  return name
}

/** What a store found by a study's name, or a one-line error at `where` listing the studies there are. */
export async function requireStudy<T>(
  found: T | undefined,
  where: string,
  listStudies: () => Promise<ReadonlyArray<{name: string}>>,
): Promise<T> {
  if (found) return found
  const names = (await listStudies()).map((s) => s.name)
  throw new InputError(where, `an existing study (${names.join(', ') || 'none stored'})`, 'no such study')
}
