import type {Hook} from '@oclif/core'
import {EXIT_INPUT, oneLine} from '../../util/errors.js'
import {closest} from '../../util/suggest.js'

/**
 * `kt serch`: one line naming the closest command or topic (Damerau-Levenshtein), exit 2,
 * instead of oclif's "command not found" with a decorated prefix.
 */
const hook: Hook.CommandNotFound = async function (options) {
  const typed = options.id.replaceAll(':', ' ')
  const known = [...options.config.commandIDs, ...options.config.topics.map((t) => t.name)].map((id) =>
    id.replaceAll(':', ' '),
  )
  // the whole id first ("study lst" -> "study list"), then its first word alone ("serch" -> "search")
  const near =
    closest(typed, known) ??
    closest(
      typed.split(' ')[0],
      known.filter((k) => !k.includes(' ')),
    )
  process.stderr.write(
    `kt: ${oneLine(`unknown command "${typed}"${near ? ` (did you mean "kt ${near}"?)` : ''}; kt --help lists the commands`)}\n`,
  )
  this.exit(EXIT_INPUT)
}

export default hook
