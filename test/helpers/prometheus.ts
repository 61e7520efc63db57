/*
 * A strict parser of the Prometheus text exposition format (0.0.4) for
 * tests. It refuses what a lenient parser lets through: every family has one
 * HELP and one TYPE line before its samples, metric and label names match
 * the grammar, label values are quoted with only \\ \" \n escapes, a sample
 * belongs to the family above it, no series repeats, and a histogram series
 * has increasing `le` bounds ending in +Inf with cumulative counts, `_sum`
 * and `_count` (equal to the +Inf bucket). (The npm package
 * parse-prometheus-text-format was tried: it merges labelled histogram
 * series into one and drops their labels, so it cannot check this output.)
 */

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/
const VALUE = /^(?:[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?|[+-]Inf|NaN)$/
const TYPES = ['counter', 'gauge', 'histogram', 'summary', 'untyped'] as const

class MetricsFormatError extends Error {
  override name = 'MetricsFormatError'
}

export interface Sample {
  labels: Record<string, string>
  value: number
  /** Histograms: upper bound → cumulative count. */
  buckets?: Map<number, number>
  count?: number
  sum?: number
}

export interface Family {
  type: (typeof TYPES)[number]
  help: string
  samples: Sample[]
}

interface RawSample {
  name: string
  labels: Record<string, string>
  value: number
}

function parseValue(text: string, where: string): number {
  if (!VALUE.test(text)) throw new MetricsFormatError(`${where}: '${text}' is not a number`)
  if (text === '+Inf') return Infinity
  if (text === '-Inf') return -Infinity
  return Number(text)
}

/** `name{a="x",b="y"} value`, reading label values character by character. */
function parseSampleLine(line: string, where: string): RawSample {
  let position = 0
  while (position < line.length && line[position] !== '{' && line[position] !== ' ') position += 1
  const name = line.slice(0, position)
  if (!NAME.test(name)) throw new MetricsFormatError(`${where}: bad metric name '${name}'`)
  const labels: Record<string, string> = {}
  if (line[position] === '{') {
    position += 1
    while (line[position] !== '}') {
      const equals = line.indexOf('=', position)
      if (equals < 0) throw new MetricsFormatError(`${where}: label without '='`)
      const label = line.slice(position, equals)
      if (!LABEL_NAME.test(label) || label.startsWith('__')) throw new MetricsFormatError(`${where}: bad label name '${label}'`)
      if (label in labels) throw new MetricsFormatError(`${where}: label '${label}' twice`)
      if (line[equals + 1] !== '"') throw new MetricsFormatError(`${where}: the value of '${label}' is not quoted`)
      position = equals + 2
      let value = ''
      for (;;) {
        const char = line[position]
        if (char === undefined) throw new MetricsFormatError(`${where}: unterminated label value`)
        position += 1
        if (char === '"') break
        if (char === '\\') {
          const escaped = line[position]
          position += 1
          if (escaped === '\\') value += '\\'
          else if (escaped === '"') value += '"'
          else if (escaped === 'n') value += '\n'
          else throw new MetricsFormatError(`${where}: bad escape '\\${escaped ?? ''}'`)
        } else value += char
      }
      labels[label] = value
      if (line[position] === ',') position += 1
      else if (line[position] !== '}') throw new MetricsFormatError(`${where}: expected ',' or '}' after a label`)
    }
    position += 1
  }
  if (line[position] !== ' ') throw new MetricsFormatError(`${where}: expected one space before the value`)
  const rest = line.slice(position + 1).split(' ')
  if (rest.length > 2) throw new MetricsFormatError(`${where}: too many fields`)
  if (rest.length === 2 && !/^-?\d+$/.test(rest[1] as string)) throw new MetricsFormatError(`${where}: bad timestamp`)
  return { name, labels, value: parseValue(rest[0] as string, where) }
}

function seriesKey(labels: Record<string, string>, without?: string): string {
  return JSON.stringify(
    Object.entries(labels)
      .filter(([name]) => name !== without)
      .sort(([a], [b]) => (a < b ? -1 : 1)),
  )
}

function histogramSamples(name: string, raw: RawSample[]): Sample[] {
  const series = new Map<string, Sample & { les: number[]; cumulative: number[] }>()
  for (const sample of raw) {
    const key = seriesKey(sample.labels, 'le')
    let entry = series.get(key)
    if (entry === undefined) {
      const labels = { ...sample.labels }
      delete labels.le
      entry = { labels, value: 0, buckets: new Map(), les: [], cumulative: [] }
      series.set(key, entry)
    }
    if (sample.name === `${name}_bucket`) {
      const le = sample.labels.le
      if (le === undefined) throw new MetricsFormatError(`${name}${key}: a bucket without le`)
      const bound = parseValue(le, `${name} le`)
      entry.les.push(bound)
      entry.cumulative.push(sample.value)
      entry.buckets?.set(bound, sample.value)
    } else if (sample.name === `${name}_sum`) entry.sum = sample.value
    else if (sample.name === `${name}_count`) entry.count = sample.value
    else throw new MetricsFormatError(`${sample.name} is not a sample of histogram ${name}`)
  }
  for (const [key, entry] of series) {
    const where = `${name}${key}`
    if (entry.les.at(-1) !== Infinity) throw new MetricsFormatError(`${where}: the last bucket must be le="+Inf"`)
    for (let index = 1; index < entry.les.length; index += 1) {
      if (!((entry.les[index] as number) > (entry.les[index - 1] as number))) throw new MetricsFormatError(`${where}: le bounds must increase`)
      if ((entry.cumulative[index] as number) < (entry.cumulative[index - 1] as number)) throw new MetricsFormatError(`${where}: bucket counts must be cumulative`)
    }
    if (entry.sum === undefined || entry.count === undefined) throw new MetricsFormatError(`${where}: _sum and _count are required`)
    if (entry.count !== entry.cumulative.at(-1)) throw new MetricsFormatError(`${where}: _count must equal the +Inf bucket`)
    entry.value = entry.count
  }
  return [...series.values()].map(({ labels, value, buckets, count, sum }) => ({ labels, value, buckets, count, sum }))
}

/** Parses the text, refusing anything against the format rules (MetricsFormatError names the line). */
export function parseMetrics(text: string): Map<string, Family> {
  if (!text.endsWith('\n')) throw new MetricsFormatError('the text must end with a newline')
  const families = new Map<string, Family & { raw: RawSample[] }>()
  const seen = new Set<string>()
  let current: { name: string; help: string; type: Family['type'] | null } | null = null
  text
    .slice(0, -1)
    .split('\n')
    .forEach((line, index) => {
      const where = `line ${index + 1}`
      const help = /^# HELP (\S+) (.*)$/.exec(line)
      if (help !== null) {
        const name = help[1] as string
        if (!NAME.test(name)) throw new MetricsFormatError(`${where}: bad metric name '${name}'`)
        if (families.has(name) || current?.name === name) throw new MetricsFormatError(`${where}: family ${name} appears twice`)
        if (/\\(?![\\n])/.test(help[2] as string)) throw new MetricsFormatError(`${where}: bad escape in HELP`)
        current = { name, help: help[2] as string, type: null }
        return
      }
      const type = /^# TYPE (\S+) (\S+)$/.exec(line)
      if (type !== null) {
        if (current === null || current.name !== type[1] || current.type !== null) throw new MetricsFormatError(`${where}: TYPE of ${type[1]} must follow its HELP line, once`)
        const kind = TYPES.find((candidate) => candidate === type[2])
        if (kind === undefined) throw new MetricsFormatError(`${where}: unknown type '${type[2]}'`)
        current.type = kind
        families.set(current.name, { type: kind, help: current.help, samples: [], raw: [] })
        return
      }
      if (line.startsWith('#') || line === '') throw new MetricsFormatError(`${where}: unexpected line '${line}'`)
      if (current === null || current.type === null) throw new MetricsFormatError(`${where}: sample before any HELP and TYPE`)
      const sample = parseSampleLine(line, where)
      const suffixes = current.type === 'histogram' ? ['_bucket', '_sum', '_count'] : current.type === 'summary' ? ['', '_sum', '_count'] : ['']
      if (!suffixes.some((suffix) => sample.name === `${current?.name}${suffix}`)) {
        throw new MetricsFormatError(`${where}: sample ${sample.name} does not belong to family ${current.name}`)
      }
      const series = `${sample.name}${seriesKey(sample.labels)}`
      if (seen.has(series)) throw new MetricsFormatError(`${where}: series ${series} repeats`)
      seen.add(series)
      families.get(current.name)?.raw.push(sample)
    })
  const parsed = new Map<string, Family>()
  for (const [name, family] of families) {
    const samples = family.type === 'histogram' ? histogramSamples(name, family.raw) : family.raw.map(({ labels, value }) => ({ labels, value }))
    parsed.set(name, { type: family.type, help: family.help, samples })
  }
  return parsed
}

/** The samples of a family whose labels include `labels`. */
export function samplesOf(families: Map<string, Family>, name: string, labels: Record<string, string> = {}): Sample[] {
  const family = families.get(name)
  if (family === undefined) return []
  return family.samples.filter((sample) => Object.entries(labels).every(([key, value]) => sample.labels[key] === value))
}
