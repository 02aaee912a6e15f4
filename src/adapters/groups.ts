/**
 * Parameter groups of an engine file (`groups`): named sets of parameters that phase 3's ablation
 * reverts and applies as one (e.g. every `bm25.*` parameter). A member is a parameter name or a
 * prefix pattern ending in `*`; the loader resolves patterns to the names they match, so a group
 * is a plain list of names from then on.
 */
import {z} from 'zod'
import {InputError, describeValue} from '../util/errors.js'

export const GroupSchema = z
  .object({
    name: z.string().regex(/^[A-Za-z0-9._-]{1,64}$/, 'a name of letters, digits, dot, dash or underscore (at most 64)'),
    parameters: z.array(z.string().min(1)).min(1),
    description: z.string().optional(),
  })
  .strict()

export interface EngineGroup {
  readonly name: string
  /** Parameter names, patterns resolved, in the engine file's parameter order. */
  readonly parameters: readonly string[]
  readonly description?: string
}

/** Resolves and checks the groups against the parameter names; a problem is one InputError naming the file and field. */
export function resolveGroups(
  groups: ReadonlyArray<z.infer<typeof GroupSchema>>,
  parameters: readonly string[],
  file: string,
): EngineGroup[] {
  return groups.map((g, gi) => {
    const where = `${file}: groups[${gi}]`
    if (groups.findIndex((x) => x.name === g.name) !== gi)
      throw new InputError(`${where}.name`, 'a name no other group has', describeValue(g.name))
    const members = new Set<string>()
    g.parameters.forEach((entry, j) => {
      const matched = entry.endsWith('*')
        ? parameters.filter((p) => p.startsWith(entry.slice(0, -1)))
        : parameters.filter((p) => p === entry)
      if (matched.length === 0)
        throw new InputError(
          `${where}.parameters[${j}]`,
          'the name of a parameter, or a prefix ending in * that matches one',
          describeValue(entry),
        )
      for (const m of matched) members.add(m)
    })
    return {
      name: g.name,
      parameters: parameters.filter((p) => members.has(p)),
      ...(g.description ? {description: g.description} : {}),
    }
  })
}
