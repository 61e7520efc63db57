/*
 * The shape of the benchmark tenant, decided by a seeded PRNG so every
 * generation makes the same tenant (only the ids differ: the engine makes
 * them). Owner plus 49 users, 50 clients, 500 projects (each with a client
 * and an owner), 5 tasks per project, and time records spread uniformly over
 * three years (2023-01-01 … 2025-12-31 UTC), in working hours, 15 minutes to
 * 4 hours long, 70% billable with a price, 70% on one of their project's
 * tasks. Values here are plain field values for `insertRecord`.
 */

export const BENCH_TENANT = 'bench'
export const OWNER_EMAIL = 'owner@bench.test'
export const OWNER_PASSWORD = 'bench-password'
export const USERS = 50
export const CLIENTS = 50
export const PROJECTS = 500
export const TASKS_PER_PROJECT = 5
export const DATA_FROM_MS = Date.UTC(2023, 0, 1)
export const DATA_TO_MS = Date.UTC(2026, 0, 1)

const DAY_MS = 86_400_000
const QUARTER_HOUR_MS = 15 * 60_000

const DESCRIPTIONS = [
  'Meeting with the client about the next release',
  'Code review and fixes',
  'Design of the landing page',
  'Support call',
  'Planning for the sprint',
  'Writing the monthly report',
  'Testing the import of invoices',
  'Workshop on the navigation',
  'Deployment to production',
  'Research on the database migration',
]

/** mulberry32: a small, fast, seedable PRNG returning [0, 1). */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296
  }
}

export function pick<T>(random: () => number, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)] as T
}

export function userValues(index: number): Record<string, unknown> {
  return { firstName: `User${index}`, lastName: 'Bench', email: `user${index}@bench.test`, active: true, confirmed: true }
}

export function clientValues(index: number): Record<string, unknown> {
  return { name: `Client ${index}`, code: `C${index}`, active: true }
}

export function projectValues(index: number, clientId: string, ownerId: string): Record<string, unknown> {
  return { name: `Project ${index}`, code: `P${index}`, client: clientId, owner: ownerId, billable: index % 4 !== 0, active: true }
}

export function taskValues(projectIndex: number, taskIndex: number, projectId: string, ownerId: string): Record<string, unknown> {
  return { name: `Task ${projectIndex}.${taskIndex}`, project: projectId, owner: ownerId, author: ownerId, done: false }
}

export interface ProjectRef {
  id: string
  client: string
  tasks: string[]
}

/** One time record: a random user, project (and maybe task), start in working hours. */
export function timeRecordValues(random: () => number, userIds: readonly string[], projects: readonly ProjectRef[]): Record<string, unknown> {
  const project = pick(random, projects)
  const day = Math.floor(random() * ((DATA_TO_MS - DATA_FROM_MS) / DAY_MS))
  const start = DATA_FROM_MS + day * DAY_MS + (7 * 4 + Math.floor(random() * 40)) * QUARTER_HOUR_MS
  const duration = (1 + Math.floor(random() * 16)) * QUARTER_HOUR_MS
  const billable = random() < 0.7
  const unitPrice = billable ? 80 + Math.floor(random() * 5) * 10 : null
  return {
    user: pick(random, userIds),
    project: project.id,
    client: project.client,
    task: random() < 0.7 ? pick(random, project.tasks) : null,
    start,
    stop: start + duration,
    duration,
    description: pick(random, DESCRIPTIONS),
    billable,
    unitPrice,
    price: unitPrice === null ? null : Math.round(unitPrice * (duration / 3_600_000) * 100) / 100,
    approved: false,
  }
}
