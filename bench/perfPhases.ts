/*
 * Where a request's CPU goes, by phase, from a Linux perf profile of the
 * server (perfBreakdown.ts records it; issue 39). Each sample's call chain,
 * innermost frame first, is given to ONE phase:
 *
 *   1. a chain that starts in the kernel is a system call, named by the
 *      user-space frame that made it (send: writing answers, recv: reading
 *      requests, epoll: waiting, fdatasync/msync/pwrite: LMDB's flush …),
 *      or "kernel, other" (interrupts, scheduling) when no frame made one;
 *   2. a chain that starts in V8's garbage collector or compiler is GC or
 *      JIT, whoever allocated;
 *   3. otherwise the innermost frame of our own code (dist/src/…, or the
 *      lmdb and msgpackr packages) names the phase by its module (table
 *      below; server.js by function), with what it called natively (a
 *      SHA-256, JSON.stringify, a string's UTF-8) counted with it;
 *   4. a chain without one is uWS's native code (parsing HTTP, buffering
 *      answers) or "other native" (libuv, Node).
 *
 * JavaScript frames are named by Node's --perf-basic-prof map (`JS:*name
 * file:///…/dist/src/http/server.js:251:19`). TurboFan inlines small
 * functions into their callers, which then get their samples: profile with
 * --no-turbo-inlining (perfBreakdown.ts --no-inlining) to split those, and
 * scale the split to the inlined run's total.
 */
import { execFileSync } from 'node:child_process'

export interface Frame {
  symbol: string
  dso: string
}

/** Phases by module of dist/src (first match wins), for the innermost frame of our own code. */
const MODULE_PHASES: readonly [RegExp, string][] = [
  [/\/http\/(request|requestHeaders|messageRules|limitedBody|body)\.js$/, 'parse (path, query, headers, body)'],
  [/\/http\/requestIdHeader\.js$|\/observability\/requestIds\.js$/, 'request id'],
  [/\/http\/(router|routeTable|routeLabel|requestRouter|refusalAnswers)\.js$|\/http\/export\/exportFormat\.js$|\/domain\/resources\/index\.js$/, 'route'],
  [/\/http\/(authenticate|requireSession)\.js$|\/domain\/(credentials|account|hashId)\.js$/, 'authenticate'],
  [/\/http\/(rateLimiter|rateLimitHeaders|windowCounter|abuseLimits)\.js$/, 'rate limit'],
  [/\/http\/(etag|etagPreconditions)\.js$/, 'ETag'],
  [/\/http\/(cors|compression|varyHeader)\.js$/, 'CORS & compression decisions'],
  [/\/observability\//, 'metrics & request log'],
  [/\/http\/answerHead\.js$/, 'headers'],
  [/\/http\/(response|paging)\.js$|\/json\/|\/domain\/(render|renderedJson)\.js$|\/http\/routes\/objectAnswer\.js$/, 'render'],
  [/\/tenants\/(changeFeed|changeFan\w*)\.js$|\/webhooks\/|\/engine\/(changesOfEntry|stateObserver)\.js$|\/query\/changeSelection\.js$|\/domain\/changes\.js$/, 'change feed & webhook hooks'],
  [/\/engine\/steps\.js$|\/tenants\/(slicedRead|heavyReadBudget)\.js$|\/query\/sortInSteps\.js$/, 'sliced-read step machinery'],
  [/\/query\//, 'list: plan, filter, order, page'],
  [/\/engine\/(logEntry|textPool)\.js$|\/persist\/codec\.js$|\/node_modules\/msgpackr\//, 'encode log entry'],
  [/\/persist\/|\/node_modules\/lmdb\/|\/tenants\/(durabilityBarrier|logSpace|spaceGuard|snapshotSchedule)\.js$/, 'LMDB put & commit (JS)'],
  [
    /\/engine\/(writeTx|liveSums|dayTotals|reportTotals|dateBuckets|appendCounters|personalProjects|addedRecords)\.js$|\/domain\/operations\/(create|update|delete|setFields|deriveFields|expectedVersion|prices)\w*\.js$|\/domain\/(records|values|input|pricing|trash|schema|record)\.js$/,
    'write: decide & apply',
  ],
  [/\/tenants\/|\/maybePromise\.js$/, 'tenant actor (read/write turn, barrier)'],
  [/\/engine\/|\/domain\/|\/http\/routes\//, 'read (find, visibility, engine)'],
]

/** server.js by function: what each part of the front end does. */
function serverPhase(symbol: string): string {
  if (/JS:\W*writeHead /.test(symbol)) return 'headers'
  if (/JS:\W*withConventions /.test(symbol)) return 'CORS & compression decisions'
  if (/JS:\W*record /.test(symbol)) return 'metrics & request log'
  if (/JS:\W*(send|isApiResponse|byteLengthOf) /.test(symbol) || /server\.js:1[5-9]\d:/.test(symbol)) return 'write the answer (uWS end, UTF-8)'
  return 'front end (uWS handler, request object, dispatch)'
}

const SYSCALL_PHASES: readonly [RegExp, string][] = [
  [/^(__libc_|__)?(send|sendto|sendmsg|writev)\b/, 'write (send syscalls)'],
  [/^(__libc_|__)?(recv|recvfrom|recvmsg|read)\b/, 'read requests (recv syscalls)'],
  [/^(epoll_wait|epoll_pwait|__epoll)/, 'event loop (epoll)'],
  [/fdatasync|fsync|msync|pwrite|__libc_pwrite|fallocate|ftruncate/, 'LMDB flush (fsync, pwrite)'],
  [/futex|pthread_cond|sem_/, 'thread sync (futex)'],
]

const isKernel = (frame: Frame) => frame.dso.includes('kernel')
const isOwn = (frame: Frame) => /\/dist\/(src|bench\/baselines)\/|\/node_modules\/(lmdb|msgpackr)\//.test(frame.symbol)
const isJs = (frame: Frame) => frame.symbol.startsWith('JS:') || frame.symbol.startsWith('LazyCompile:')

/** The phase of one sample (frames innermost first). */
export function phaseOf(frames: readonly Frame[]): string {
  if (frames.length === 0) return 'other native (libuv, Node)'
  if (isKernel(frames[0] as Frame)) {
    const caller = frames.find((frame) => !isKernel(frame))
    if (caller === undefined) return 'kernel, other (interrupts, scheduling)'
    const name = caller.symbol.replace(/@.*$/, '')
    for (const [pattern, phase] of SYSCALL_PHASES) if (pattern.test(name)) return caller.dso.includes('lmdb') && phase !== 'thread sync (futex)' ? 'LMDB flush (fsync, pwrite)' : phase
    return 'kernel, other (interrupts, scheduling)'
  }
  const wrapper = SYSCALL_PHASES.find(([pattern]) => pattern.test((frames[0] as Frame).symbol.replace(/@.*$/, '')))
  if (wrapper !== undefined) return (frames[0] as Frame).dso.includes('lmdb') ? 'LMDB flush (fsync, pwrite)' : wrapper[1]
  const nativeLeaf = frames.slice(0, Math.max(0, frames.findIndex(isJs)))
  if (
    nativeLeaf.some((frame) =>
      /v8::internal::(Heap|Scavenge|MarkCompact|ConcurrentMarking|Sweeper|MinorMarkCompact|IncrementalMarking|GlobalHandles|MemoryAllocator)|Scavenger|\bGC\b/.test(frame.symbol),
    )
  )
    return 'GC'
  if (frames.every((frame) => !isJs(frame)) && frames.some((frame) => /v8::internal::(Heap|Scavenge|MarkCompact|ConcurrentMarking|Sweeper|Scavenger)/.test(frame.symbol))) return 'GC'
  if (frames.some((frame) => /v8::internal::(compiler|maglev|baseline)::|OptimizingCompileDispatcher|Compiler::Compile/.test(frame.symbol))) return 'JIT compile'
  const own = frames.find(isOwn)
  if (own !== undefined) {
    const file = /(file:\/\/)?(\/[^ :]+\.js)/.exec(own.symbol)?.[2] ?? ''
    if (file.endsWith('/http/server.js')) return serverPhase(own.symbol)
    if (file.includes('/bench/baselines/')) return 'baseline handler (JS)'
    for (const [pattern, phase] of MODULE_PHASES) if (pattern.test(file)) return phase
    return 'other own code'
  }
  if (frames.some((frame) => frame.dso.includes('uws_'))) return 'uWS native (HTTP parse, buffers, calls into JS)'
  if (frames.some((frame) => frame.dso.includes('lmdb'))) return 'LMDB put & commit (native)'
  return 'other native (libuv, Node)'
}

export interface Sample {
  frames: Frame[]
}

/** The samples of a perf.data file (`perf script`, which needs the process's /tmp/perf-<pid>.map for JS names). */
export function readSamples(perfData: string): Sample[] {
  const text = execFileSync('perf', ['script', '-i', perfData, '-F', 'ip,sym,dso'], { encoding: 'utf8', maxBuffer: 1 << 30, stdio: ['ignore', 'pipe', 'ignore'] })
  const samples: Sample[] = []
  for (const block of text.split(/\n\s*\n/)) {
    const frames: Frame[] = []
    for (const line of block.split('\n')) {
      const match = /^\s*[0-9a-f]+\s+(.*?)\s+\(([^)]*)\)\s*$/.exec(line)
      if (match !== null) frames.push({ symbol: match[1] as string, dso: match[2] as string })
    }
    if (frames.length > 0) samples.push({ frames })
  }
  return samples
}

export interface PhaseShare {
  phase: string
  share: number
  /** Our functions (or the syscall, or native symbol) that took most of it, with their share of all samples. */
  top: { name: string; share: number }[]
}

/** The innermost frame worth naming inside a phase: our function, else the syscall or native symbol. */
function culprit(frames: readonly Frame[]): string {
  const own = frames.find(isOwn)
  const frame = own ?? frames.find((candidate) => !isKernel(candidate)) ?? frames[0]
  return (frame?.symbol ?? '?')
    .replace(/^JS:\W*/, '')
    .replace(/file:\/\/\/.*\/dist\//, '')
    .replace(/ \/.*\/node_modules\//, ' node_modules/')
}

/** The phases' shares of the samples, largest first, each with its top functions. */
export function phaseShares(samples: readonly Sample[], topPerPhase = 3): PhaseShare[] {
  const byPhase = new Map<string, Map<string, number>>()
  for (const sample of samples) {
    const phase = phaseOf(sample.frames)
    const names = byPhase.get(phase) ?? new Map<string, number>()
    const name = culprit(sample.frames)
    names.set(name, (names.get(name) ?? 0) + 1)
    byPhase.set(phase, names)
  }
  const total = samples.length
  return [...byPhase]
    .map(([phase, names]) => ({
      phase,
      share: [...names.values()].reduce((sum, count) => sum + count, 0) / total,
      top: [...names]
        .sort((a, b) => b[1] - a[1])
        .slice(0, topPerPhase)
        .map(([name, count]) => ({ name, share: count / total })),
    }))
    .sort((a, b) => b.share - a.share)
}
