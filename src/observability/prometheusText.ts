/*
 * Writing the Prometheus text exposition format (version 0.0.4): per
 * family one `# HELP` and one `# TYPE` line, then its samples, each
 * `name{label="value",…} number`. Label values escape backslash, double
 * quote and newline; histograms write cumulative `_bucket` samples up to
 * `le="+Inf"`, then `_sum` and `_count`.
 */
import { assertionFailed } from '../assert.js'
import type { Histogram } from './histogram.js'

export type Labels = Readonly<Record<string, string>>
export type MetricType = 'counter' | 'gauge' | 'histogram'

export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8'

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/

function escapeLabelValue(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')
}

function escapeHelp(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(/\n/g, '\\n')
}

function formatNumber(value: number): string {
  if (Number.isNaN(value)) return 'NaN'
  if (value === Infinity) return '+Inf'
  if (value === -Infinity) return '-Inf'
  return String(value)
}

function formatLabels(labels: Labels): string {
  const names = Object.keys(labels)
  if (names.length === 0) return ''
  return `{${names.map((name) => `${name}="${escapeLabelValue(labels[name] as string)}"`).join(',')}}`
}

export class PrometheusText {
  private readonly lines: string[] = []
  private readonly families = new Set<string>()

  /** Starts a family; its samples follow. A family is written once. */
  family(name: string, type: MetricType, help: string): this {
    if (!METRIC_NAME.test(name)) assertionFailed(`bad metric name '${name}'`)
    if (this.families.has(name)) assertionFailed(`metric family '${name}' written twice`)
    this.families.add(name)
    this.lines.push(`# HELP ${name} ${escapeHelp(help)}`, `# TYPE ${name} ${type}`)
    return this
  }

  sample(name: string, labels: Labels, value: number): this {
    for (const label of Object.keys(labels)) if (!LABEL_NAME.test(label) || label.startsWith('__')) assertionFailed(`bad label name '${label}'`)
    this.lines.push(`${name}${formatLabels(labels)} ${formatNumber(value)}`)
    return this
  }

  histogram(name: string, labels: Labels, histogram: Histogram): this {
    let cumulative = 0
    for (let index = 0; index < histogram.bounds.length; index += 1) {
      cumulative += histogram.counts[index] as number
      this.sample(`${name}_bucket`, { ...labels, le: formatNumber(histogram.bounds[index] as number) }, cumulative)
    }
    this.sample(`${name}_bucket`, { ...labels, le: '+Inf' }, histogram.count)
    this.sample(`${name}_sum`, labels, histogram.sum)
    this.sample(`${name}_count`, labels, histogram.count)
    return this
  }

  toString(): string {
    return `${this.lines.join('\n')}\n`
  }
}
