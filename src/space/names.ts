/**
 * The alphabets of what a parameter table hands on to deployable profiles (src/deploy/profile.ts)
 * and exported files: names, keys, values and free text. They live here, below both the profile
 * schema and the engine-file loader (src/adapters/file.ts), so an engine file is refused on load
 * for what its profiles would be refused for at the end of a study.
 */

/** Profile, engine and space names: they become file names and comment text. */
export const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/
export const NAME_MESSAGE =
  'a name of letters, digits, dot, dash or underscore starting with a letter or digit (at most 64)'
/** Space ids (`importance`, `retrieval`, `engine:<name>`). */
export const SPACE_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$/
/** Parameter names (`bm25.k1`, `decay`) and metric keys (`recall@10`, `spearman_on_uniform_50`). */
export const KEY_PATTERN = /^[A-Za-z0-9_][A-Za-z0-9_.@:-]{0,63}$/
export const KEY_MESSAGE = 'a key of letters, digits and _ . @ : - (at most 64)'
/**
 * String parameter values: only characters that mean nothing to sh, dash, bash, dotenv parsers,
 * docker --env-file or systemd, so a value is the same text however the file is read.
 */
export const SAFE_VALUE_PATTERN = /^[A-Za-z0-9._:/+@%,-]{0,128}$/
export const SAFE_VALUE_MESSAGE = 'a value of letters, digits and . _ : / + @ % , - (at most 128)'
/** Control characters (C0, DEL, C1), line and paragraph separators, and bidi overrides (they reorder what a reader sees). */
export const UNSAFE_TEXT = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff]/u
/** Longest free-text field (notes, reasons, descriptions). */
export const MAX_TEXT_LENGTH = 2000
