/**
 * Finds the line on which a value sits in JSON text, given its path (keys and indices), so a
 * loader error can name file, line and field. Only called when reporting an error, so it rescans
 * the text rather than keeping positions for every value of a large file.
 */

export type JsonPath = ReadonlyArray<string | number>

/** 1-based line of the value at `path`, or undefined if the path is not in the text. */
function lineOfJsonPath(text: string, path: JsonPath): number | undefined {
  const scanner = new Scanner(text)
  try {
    const offset = scanner.find(path)
    return offset === undefined ? undefined : lineAt(text, offset)
  } catch {
    return undefined
  }
}

function lineAt(text: string, offset: number): number {
  let line = 1
  for (let i = 0; i < offset; i++) if (text.charCodeAt(i) === 10) line++
  return line
}

/** `file:line` when the line is known, else `file`. */
export function locate(file: string, text: string, path: JsonPath): string {
  const line = lineOfJsonPath(text, path)
  return line === undefined ? file : `${file}:${line}`
}

/** A field path in the usual notation: `[0].conversation.session_1[3].text`. */
export function formatJsonPath(path: JsonPath): string {
  return path
    .map((p) => (typeof p === 'number' ? `[${p}]` : `.${p}`))
    .join('')
    .replace(/^\./, '')
}

class Scanner {
  private pos = 0
  constructor(private readonly text: string) {}

  find(path: JsonPath): number | undefined {
    this.ws()
    for (const step of path) {
      const ch = this.text[this.pos]
      if (typeof step === 'number') {
        if (ch !== '[') return undefined
        this.pos++
        for (let i = 0; ; i++) {
          this.ws()
          if (this.text[this.pos] === ']') return undefined
          if (i === step) break
          this.skipValue()
          this.ws()
          if (this.text[this.pos] === ',') this.pos++
        }
      } else {
        if (ch !== '{') return undefined
        this.pos++
        for (;;) {
          this.ws()
          if (this.text[this.pos] === '}') return undefined
          const key = this.readString()
          this.ws()
          this.pos++ // ':'
          this.ws()
          if (key === step) break
          this.skipValue()
          this.ws()
          if (this.text[this.pos] === ',') this.pos++
        }
      }
    }
    return this.pos
  }

  private ws(): void {
    while (this.pos < this.text.length && /\s/.test(this.text[this.pos])) this.pos++
  }

  private readString(): string {
    const start = this.pos
    this.skipString()
    return JSON.parse(this.text.slice(start, this.pos)) as string
  }

  private skipString(): void {
    this.pos++ // opening quote
    while (this.pos < this.text.length) {
      const ch = this.text[this.pos]
      if (ch === '\\') this.pos += 2
      else if (ch === '"') {
        this.pos++
        return
      } else this.pos++
    }
    throw new Error('unterminated string')
  }

  private skipValue(): void {
    const ch = this.text[this.pos]
    if (ch === '"') return this.skipString()
    if (ch === '{' || ch === '[') {
      let depth = 0
      while (this.pos < this.text.length) {
        const c = this.text[this.pos]
        if (c === '"') {
          this.skipString()
          continue
        }
        if (c === '{' || c === '[') depth++
        else if (c === '}' || c === ']') {
          depth--
          if (depth === 0) {
            this.pos++
            return
          }
        }
        this.pos++
      }
      throw new Error('unterminated container')
    }
    while (this.pos < this.text.length && !/[,\]}\s]/.test(this.text[this.pos])) this.pos++
  }
}
