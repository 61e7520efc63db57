/*
 * The maker of a resource's records from its columns (design §11: the
 * domain still sees `Rec`): a function generated once per declaration, an
 * object literal with the record's fields in their order
 * (recordMaking.ts recordFieldNames), so every record of a resource has one
 * shape (hidden class) and is built in one allocation, reading each
 * column's chunk arrays directly rather than calling a method per field.
 *
 * What a record holds beyond its declaration's fields, and a declared
 * field it lacks (ABSENT), sit in the row's extras and are put back last.
 */
import type { Rec, ResourceDecl } from '../domain/schema.js'
import { INT_NULL, type CodeView, type ColumnReader, type NumberView } from './columns.js'
import { FLAG_NULL, FLAG_TRUE, type FlagView } from './flagColumn.js'
import { formatUuid, type IdView } from './idColumn.js'
import { CHUNK_BITS, CHUNK_MASK } from './rowChunks.js'
import { addExtras } from './rowExtras.js'
import type { StringPool } from './stringPool.js'
import type { ValueView } from './valueColumn.js'

export type ColumnKind = 'id' | 'number' | 'code' | 'flag' | 'value'

/** The column a field of the declaration's records is kept in. */
export function columnKindOf(decl: ResourceDecl, name: string): ColumnKind {
  if (name === 'id') return 'id'
  const field = decl.fieldsByName.get(name)
  // Fields every record has without declaring them: version and the dates are numbers, trashItem a reference.
  if (field === undefined) return name === 'trashItem' ? 'code' : 'number'
  if (field.list) return 'value'
  if (field.ref !== undefined || field.type === 'String') return 'code'
  if (field.type === 'Boolean') return 'flag'
  if (field.type === 'Long' || field.type === 'Integer' || field.type === 'Double' || field.type === 'Date') return 'number'
  return 'value'
}

type Maker = (columns: readonly ColumnReader[], extras: ValueView, pool: StringPool) => RecordMaker

/** Makes the record at a row; `knownId` is its id when the caller has it (a read by id), so it is not formatted again. */
export type RecordMaker = (row: number, knownId?: string) => Rec

/** The code that reads field `at` of kind `kind` into `v<at>` (`chunk` and `at` of the row known), and the values it needs. */
function fieldReader(kind: ColumnKind, at: number, column: ColumnReader): { code: string; names: string[]; values: unknown[] } {
  const v = `v${at}`
  const misfit = (rest: string) => `{ const m = C${at}.misfits; if (m !== null && m.has(row)) ${v} = m.get(row); else { ${rest} } }`
  switch (kind) {
    case 'id': {
      const ids = column as IdView
      return {
        code: `let ${v} = knownId; if (${v} === undefined) { const o = O${at}[chunk]; if (o !== null) ${v} = o.get(offset); if (${v} === undefined) ${v} = formatUuid(W${at}[chunk], offset * 4) }`,
        names: [`W${at}`, `O${at}`],
        values: [ids.words, ids.others],
      }
    }
    case 'number': {
      const numbers = column as NumberView
      return {
        code: `let ${v}; ${misfit(`const f = F${at}[chunk]; if (f !== null) { const x = f[offset]; ${v} = x === x ? x : null } else { const n = I${at}[chunk]; if (n !== null) { const x = n[offset]; ${v} = x === ${INT_NULL} ? null : x } else ${v} = K${at}[chunk] ?? null }`)}`,
        names: [`C${at}`, `F${at}`, `I${at}`, `K${at}`],
        values: [numbers, numbers.floats, numbers.ints, numbers.constants],
      }
    }
    case 'code': {
      const codes = column as CodeView
      return {
        code: `let ${v}; ${misfit(`const a = A${at}[chunk]; const c = a !== null ? a[offset] : K${at}[chunk]; ${v} = c === 0 ? null : T[c - 1]`)}`,
        names: [`C${at}`, `A${at}`, `K${at}`],
        values: [codes, codes.arrays, codes.constants],
      }
    }
    case 'flag': {
      const flags = column as FlagView
      return {
        code: `let ${v}; ${misfit(`const a = A${at}[chunk]; const f = a !== null ? a[offset] : K${at}[chunk]; ${v} = f === ${FLAG_NULL} ? null : f === ${FLAG_TRUE}`)}`,
        names: [`C${at}`, `A${at}`, `K${at}`],
        values: [flags, flags.arrays, flags.constants],
      }
    }
    case 'value': {
      const values = column as ValueView
      return { code: `const a${at} = A${at}[chunk]; const ${v} = a${at} !== null ? a${at}[offset] : K${at}[chunk]`, names: [`A${at}`, `K${at}`], values: [values.arrays, values.constants] }
    }
  }
}

const makers = new WeakMap<ResourceDecl, Maker>()

/**
 * The generated maker of a declaration's records from a set of columns (see
 * the top): `new Function` over the field names (each a JSON string
 * literal), reading each column's chunk arrays directly: the chunk and the
 * offset of the row are worked out once, and no column method is called.
 */
export function makerOf(decl: ResourceDecl, names: readonly string[]): Maker {
  let maker = makers.get(decl)
  if (maker === undefined) {
    const kinds = names.map((name) => columnKindOf(decl, name))
    maker = (columns, extras, pool) => {
      const readers = kinds.map((kind, at) => fieldReader(kind, at, columns[at] as ColumnReader))
      const fields = names.map((name, at) => `${JSON.stringify(name)}: v${at}`).join(', ')
      const body = [
        'return function record(row, knownId) {',
        `  const chunk = row >>> ${CHUNK_BITS}, offset = row & ${CHUNK_MASK};`,
        ...readers.map((reader) => `  ${reader.code};`),
        `  const rec = { ${fields} };`,
        '  const xa = EA[chunk]; const extra = xa !== null ? xa[offset] : EK[chunk];',
        '  if (extra !== null) addExtras(rec, extra);',
        '  return rec;',
        '}',
      ].join('\n')
      const parameters = ['EA', 'EK', 'T', 'addExtras', 'formatUuid', ...readers.flatMap((reader) => reader.names)]
      const values = [extras.arrays, extras.constants, pool.texts, addExtras, formatUuid, ...readers.flatMap((reader) => reader.values)]
      // eslint-disable-next-line @typescript-eslint/no-implied-eval
      return new Function(...parameters, body)(...values) as RecordMaker
    }
    makers.set(decl, maker)
  }
  return maker
}
