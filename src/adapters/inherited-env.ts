/**
 * What an engine's processes (trial commands, retrieval services kt starts) inherit from kt's
 * environment: everything but kt's own settings and credentials. A trial that prints its
 * environment writes it into `trials/*.err`, so kt's store password must never be in it.
 */

/**
 * Withheld names: `PG*` are libpq's connection variables (PGPASSWORD, PGPASSFILE, PGUSER, ...: kt's
 * study store), `KT_*` kt's own settings and tokens (KT_SERVE_TOKEN, KT_DASHBOARD_TOKEN; kt sets the
 * documented per-trial KT_* itself). An engine that needs one names it in its engine file's `env`.
 */
const WITHHELD = /^(PG|KT_)/

/** kt's environment without the withheld names (src/adapters/README.md, "What a trial inherits"). */
export function inheritedEnv(from: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {}
  for (const [name, value] of Object.entries(from)) if (!WITHHELD.test(name)) env[name] = value
  return env
}
