/**
 * Dates in conversational data. LoCoMo writes session times as "1:56 pm on 8 May, 2023"; kt reads
 * them as UTC (the data carries no time zone, and UTC keeps results identical on every machine).
 */

const MONTHS: Record<string, number> = {
  january: 0,
  february: 1,
  march: 2,
  april: 3,
  may: 4,
  june: 5,
  july: 6,
  august: 7,
  september: 8,
  october: 9,
  november: 10,
  december: 11,
  jan: 0,
  feb: 1,
  mar: 2,
  apr: 3,
  jun: 5,
  jul: 6,
  aug: 7,
  sep: 8,
  sept: 8,
  oct: 9,
  nov: 10,
  dec: 11,
}

/** "1:56 pm on 8 May, 2023" (comma optional, month names full or abbreviated, any case). */
const LOCOMO_DATE = /^\s*(\d{1,2}):(\d{2})\s*(am|pm)\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})\s*$/i

/** ISO 8601 date or date-time; without a zone it is read as UTC. */
const ISO_DATE =
  /^\s*(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,3})\d*)?)?)?\s*(Z|[+-]\d{2}:?\d{2})?\s*$/

const HOURS_PER_HALF_DAY = 12
export const MS_PER_DAY = 86_400_000

/** Milliseconds since the epoch (UTC) of a LoCoMo date string, or undefined if it does not parse. */
export function parseLocomoDate(text: string): number | undefined {
  const m = LOCOMO_DATE.exec(text)
  if (!m) return undefined
  let hour = Number(m[1])
  const minute = Number(m[2])
  const pm = m[3].toLowerCase() === 'pm'
  const day = Number(m[4])
  const month = MONTHS[m[5].toLowerCase()]
  const year = Number(m[6])
  if (month === undefined || hour < 1 || hour > HOURS_PER_HALF_DAY || minute > 59) return undefined
  if (hour === HOURS_PER_HALF_DAY) hour = 0 // 12:xx am is just after midnight, 12:xx pm just after noon
  if (pm) hour += HOURS_PER_HALF_DAY
  return utcChecked(year, month, day, hour, minute, 0, 0)
}

/** Milliseconds since the epoch of an ISO 8601 date/date-time, or undefined. */
export function parseIsoDate(text: string): number | undefined {
  const m = ISO_DATE.exec(text)
  if (!m) return undefined
  const [year, month, day] = [Number(m[1]), Number(m[2]) - 1, Number(m[3])]
  const [hour, minute, second] = [Number(m[4] ?? 0), Number(m[5] ?? 0), Number(m[6] ?? 0)]
  const ms = m[7] === undefined ? 0 : Number(m[7].padEnd(3, '0'))
  if (hour > 23 || minute > 59 || second > 59) return undefined
  const local = utcChecked(year, month, day, hour, minute, second, ms)
  if (local === undefined) return undefined
  const zone = m[8]
  if (zone === undefined || zone === 'Z') return local
  const sign = zone[0] === '-' ? -1 : 1
  const digits = zone.slice(1).replace(':', '')
  const offsetMinutes = Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2))
  return local - sign * offsetMinutes * 60_000
}

/**
 * Epoch numbers below this are seconds, from it on milliseconds: 1e11 seconds is the year 5138 and
 * 1e11 milliseconds is 1973-03-03, so Unix timestamps (seconds) and JavaScript ones (milliseconds)
 * of any time from 1973 to 5138 are both read right. Every kt loader reads epoch numbers this way.
 */
export const EPOCH_MILLISECONDS_FROM = 1e11

/** Milliseconds since the epoch of an epoch number in seconds or milliseconds (EPOCH_MILLISECONDS_FROM). */
export function epochMs(value: number): number {
  return Math.abs(value) < EPOCH_MILLISECONDS_FROM ? value * 1000 : value
}

/**
 * Largest distance from 1970 a JavaScript Date holds: 8.64e15 ms, 100,000,000 days either way
 * (ECMA-262, "Time Values and Time Range"). A time beyond it cannot be printed or compared.
 */
export const MAX_DATE_MS = 8.64e15

/** Whether milliseconds since the epoch name a time a Date can hold. */
export function inDateRange(ms: number): boolean {
  return Number.isFinite(ms) && Math.abs(ms) <= MAX_DATE_MS
}

/** How an epoch number is described in error messages. */
export const EPOCH_DESCRIPTION = 'epoch seconds or milliseconds'

/**
 * A time in any format kt reads: a LoCoMo date string, an ISO 8601 string, or an epoch number
 * (seconds or milliseconds, see epochMs; also as a string of digits). Milliseconds since the
 * epoch, or undefined if none of them fits.
 */
export function parseTime(value: unknown): number | undefined {
  let ms: number | undefined
  if (typeof value === 'number') ms = epochMs(value)
  else if (typeof value !== 'string') return undefined
  else if (/^\s*\d+(\.\d+)?\s*$/.test(value)) ms = epochMs(Number(value))
  else ms = parseLocomoDate(value) ?? parseIsoDate(value)
  return ms !== undefined && inDateRange(ms) ? ms : undefined
}

/** Date.UTC, but undefined when the fields do not name a real calendar date (e.g. 31 June). */
function utcChecked(
  year: number,
  month: number,
  day: number,
  hour: number,
  minute: number,
  second: number,
  ms: number,
): number | undefined {
  const t = Date.UTC(year, month, day, hour, minute, second, ms)
  const d = new Date(t)
  if (d.getUTCFullYear() !== year || d.getUTCMonth() !== month || d.getUTCDate() !== day) return undefined
  return t
}

/** The LoCoMo spelling of a UTC time, the inverse of parseLocomoDate (used by the generator). */
export function formatLocomoDate(time: number): string {
  const d = new Date(time)
  const h24 = d.getUTCHours()
  const h12 = h24 % HOURS_PER_HALF_DAY === 0 ? HOURS_PER_HALF_DAY : h24 % HOURS_PER_HALF_DAY
  const minute = String(d.getUTCMinutes()).padStart(2, '0')
  const month = MONTH_NAMES[d.getUTCMonth()]
  return `${h12}:${minute} ${h24 < HOURS_PER_HALF_DAY ? 'am' : 'pm'} on ${d.getUTCDate()} ${month}, ${d.getUTCFullYear()}`
}

const MONTH_NAMES = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
]
